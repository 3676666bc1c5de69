"""Mesh samples: the synthetic PDE problems, an on-disk `.npz` format, and the local-path loader.

One sample is one mesh with nodal inputs and nodal target fields. The on-disk layout is the one an
AirfRANS-like export (cluster scale) is expected to follow, and the synthetic generator's cache uses it too:

    <root>/train/<anything>.npz   <root>/test/<anything>.npz
    keys: points (N, 2) float, features (N, F) float, target (N, C) float,
          and either edges (E, 2) int or triangles (T, 3) int (mesh edges are derived from triangles).

Synthetic problems [rec]: the paper's industrial CFD/CSD benchmarks are replaced by
- "poisson": -Δu = Σ_k m_k G_σ(x - x_k) (mass-normalised Gaussian sources about one mesh spacing wide),
  u = 0 on the square, u = c on the hole; inputs (f, Dirichlet value, outer flag, hole flag, x, y).
- "advdiff": streamline-diffusion advection-diffusion in the potential flow around the hole; the inflow
  boundary carries a tanh front at a random height; inputs (Dirichlet value, inflow flag, outer flag,
  hole flag, x, y, b_x, b_y).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from raygent.jobs.mise_gnn.meshes import Mesh, random_mesh, solve_advection_diffusion, solve_poisson, triangle_edges

Problem = Literal["poisson", "advdiff"]
CACHE_VERSION = 1


@dataclass(frozen=True)
class MeshSample:
    """points (N, 2); edges (E, 2) undirected mesh edges; features (N, F); target (N, C)."""

    points: np.ndarray
    edges: np.ndarray
    features: np.ndarray
    target: np.ndarray

    @property
    def num_nodes(self) -> int:
        return int(self.points.shape[0])


def poisson_sample(rng: np.random.Generator, num_nodes: int, num_sources: tuple[int, int] = (2, 5),
                   hole_value: float = 1.0) -> MeshSample:
    """One Poisson problem with sharp sources on a fresh random mesh."""
    mesh = random_mesh(rng, num_nodes)
    spacing = float(np.sqrt(1.0 / num_nodes))
    count = int(rng.integers(num_sources[0], num_sources[1] + 1))
    interior = mesh.points[~mesh.boundary]
    centers = interior[rng.choice(len(interior), size=count, replace=False)]
    masses = rng.uniform(0.5, 1.5, size=count) * rng.choice([-1.0, 1.0], size=count, p=[0.3, 0.7])
    widths = rng.uniform(0.8, 1.2, size=count) * spacing
    dist2 = ((mesh.points[:, None, :] - centers[None]) ** 2).sum(-1)
    source = (masses / (2 * np.pi * widths**2) * np.exp(-dist2 / (2 * widths**2))).sum(axis=1)
    dirichlet = np.where(mesh.hole, float(rng.uniform(-hole_value, hole_value)), 0.0)
    u = solve_poisson(mesh, source, dirichlet)
    features = np.column_stack([source, np.where(mesh.boundary, dirichlet, 0.0), mesh.outer, mesh.hole,
                                mesh.points])
    return MeshSample(mesh.points, mesh.edges(), features.astype(np.float32), u[:, None].astype(np.float32))


def cylinder_flow(mesh: Mesh, angle: float) -> np.ndarray:
    """(N, 2) potential flow of unit speed at incidence `angle` around the mesh's hole."""
    hole_pts = mesh.points[mesh.hole]
    center = hole_pts.mean(axis=0)
    radius = float(np.linalg.norm(hole_pts - center, axis=1).mean())
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    local = (mesh.points - center) @ rot  # coordinates in the flow frame
    x, y = local[:, 0], local[:, 1]
    r4 = np.maximum((x**2 + y**2) ** 2, 1e-12)
    flow = np.stack([1 - radius**2 * (x**2 - y**2) / r4, -2 * radius**2 * x * y / r4], axis=1)
    return flow @ rot.T


def advdiff_sample(rng: np.random.Generator, num_nodes: int, eps: float = 2e-3) -> MeshSample:
    """One advection-diffusion problem: the inflow front height is the global parameter."""
    mesh = random_mesh(rng, num_nodes)
    angle = float(rng.uniform(-0.4, 0.4))
    velocity = cylinder_flow(mesh, angle)
    normal = np.zeros_like(mesh.points)
    normal[mesh.points[:, 0] <= 1e-9, 0] = -1.0
    normal[mesh.points[:, 0] >= 1 - 1e-9, 0] = 1.0
    normal[mesh.points[:, 1] <= 1e-9, 1] = -1.0
    normal[mesh.points[:, 1] >= 1 - 1e-9, 1] = 1.0
    inflow = mesh.outer & ((velocity * normal).sum(axis=1) < 0)
    front, width = float(rng.uniform(0.2, 0.8)), float(rng.uniform(0.02, 0.05))
    profile = 0.5 * (1 + np.tanh((mesh.points[:, 1] - front) / width))
    dirichlet = np.where(inflow, profile, 0.0)
    u = solve_advection_diffusion(mesh, velocity, eps, dirichlet, inflow)
    features = np.column_stack([dirichlet, inflow, mesh.outer, mesh.hole, mesh.points, velocity])
    return MeshSample(mesh.points, mesh.edges(), features.astype(np.float32), u[:, None].astype(np.float32))


def generate(problem: Problem, count: int, num_nodes: int, seed: int) -> list[MeshSample]:
    """`count` independent samples of `problem`, reproducible from `seed`."""
    make = {"poisson": poisson_sample, "advdiff": advdiff_sample}[problem]
    return [make(np.random.default_rng([seed, index]), num_nodes) for index in range(count)]


def save_split(samples: Sequence[MeshSample], directory: Path) -> None:
    """Write one `.npz` per sample into `directory` (the loader's format)."""
    directory.mkdir(parents=True, exist_ok=True)
    for index, sample in enumerate(samples):
        np.savez(directory / f"mesh_{index:05d}.npz", points=sample.points, edges=sample.edges,
                 features=sample.features, target=sample.target)


def load_sample(path: Path) -> MeshSample:
    """Read one exported mesh; triangles are turned into edges when the file has no edge list."""
    with np.load(path) as data:
        keys = set(data.files)
        missing = {"points", "features", "target"} - keys
        if missing or not keys & {"edges", "triangles"}:
            raise ValueError(f"{path}: needs points, features, target and edges or triangles; has {sorted(keys)}")
        points = np.asarray(data["points"], dtype=np.float64)[:, :2]
        edges = data["edges"] if "edges" in keys else triangle_edges(np.asarray(data["triangles"]))
        features = np.asarray(data["features"], dtype=np.float32)
        target = np.asarray(data["target"], dtype=np.float32)
    target = target[:, None] if target.ndim == 1 else target
    features = features[:, None] if features.ndim == 1 else features
    if not len(points) == len(features) == len(target):
        raise ValueError(f"{path}: points, features and target disagree on the node count")
    edges = np.unique(np.sort(np.asarray(edges, dtype=np.int64), axis=1), axis=0)
    return MeshSample(points, edges[edges[:, 0] != edges[:, 1]], features, target)


def load_split(directory: Path, limit: int = 0) -> list[MeshSample]:
    """Every `.npz` in `directory`, sorted by name; at most `limit` of them when limit > 0."""
    files = sorted(Path(directory).glob("*.npz"))
    if not files:
        raise FileNotFoundError(f"no .npz meshes in {directory}")
    return [load_sample(path) for path in (files[:limit] if limit > 0 else files)]


def default_cache_dir() -> Path:
    return Path(os.environ.get("RAYGENT_CACHE", Path(tempfile.gettempdir()) / "raygent_cache")) / "mise_gnn"


def synthetic_dataset(problem: Problem, num_train: int, num_test: int, num_nodes: int, seed: int,
                      cache_dir: Path | None = None) -> tuple[list[MeshSample], list[MeshSample]]:
    """Train/test samples for one data seed, cached on disk (written to a temp dir, then renamed)."""
    root = (cache_dir or default_cache_dir()) / f"v{CACHE_VERSION}_{problem}_n{num_nodes}_{num_train}_{num_test}_s{seed}"
    if not (root / "test").is_dir():
        root.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=root.parent, prefix=".tmp_"))
        samples = generate(problem, num_train + num_test, num_nodes, seed)
        save_split(samples[:num_train], tmp / "train")
        save_split(samples[num_train:], tmp / "test")
        try:
            os.rename(tmp, root)  # atomic; a concurrent trial that got there first wins
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
    return load_split(root / "train"), load_split(root / "test")
