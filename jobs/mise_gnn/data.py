"""Mesh samples: the synthetic PDE problems, an on-disk `.npz` format, and the local-path loader.

One sample is one mesh with nodal inputs and nodal target fields. The on-disk layout is the one an
AirfRANS-like export (cluster scale) is expected to follow, and the synthetic generator's cache uses it too:

    <root>/train/<anything>.npz   <root>/test/<anything>.npz
    keys: points (N, 2) float, features (N, F) float, target (N, C) float,
          and either edges (E, 2) int or triangles (T, 3) int (mesh edges are derived from triangles).

Synthetic problems [rec]: the paper's industrial CFD/CSD benchmarks are replaced by
- "poisson": -Δu = Σ_k m_k G_σ(x - x_k) (3-6 mass-normalised Gaussian sources about one mesh spacing wide,
  30% of them sinks), u = 0 on the hole, zero flux through the square (an insulated plate cooled by the
  hole); inputs (f, Dirichlet flag, outer flag, hole flag, x, y, d). Every source's heat must leave
  through the hole, so the field at any node depends on all sources: a truly global dependence.
- "advdiff": streamline-diffusion advection-diffusion in the potential flow around the hole, a hot body at
  a random temperature c in a cold cross flow; inputs (Dirichlet value, Dirichlet flag, outer flag,
  hole flag, x, y, d, b_x, b_y). The wake far downstream depends on c, known only on the body.
d is the distance to the hole (the body), as AirfRANS exports carry a signed distance to the airfoil.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from scipy.spatial import cKDTree

from raygent.jobs.mise_gnn.meshes import Mesh, random_mesh, solve_advection_diffusion, solve_poisson, triangle_edges

Problem = Literal["poisson", "advdiff"]
CACHE_VERSION = 5


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


def poisson_sample(rng: np.random.Generator, num_nodes: int, grading: float = 1.0,
                   num_sources: tuple[int, int] = (3, 6), insulated: bool = True) -> MeshSample:
    """One Poisson problem with sharp sources on a fresh random mesh.

    With `insulated`, only the hole is held at u = 0 and the square has zero flux, so every source's heat
    must reach the hole and the field everywhere depends on all sources; otherwise u = 0 on both boundaries.
    """
    mesh = random_mesh(rng, num_nodes, grading=grading)
    spacing = float(np.sqrt(1.0 / num_nodes))
    count = int(rng.integers(num_sources[0], num_sources[1] + 1))
    interior = mesh.points[~mesh.boundary]
    centers = interior[rng.choice(len(interior), size=count, replace=False)]
    masses = rng.uniform(0.5, 1.5, size=count) * rng.choice([-1.0, 1.0], size=count, p=[0.3, 0.7])
    widths = rng.uniform(0.8, 1.2, size=count) * spacing
    dist2 = ((mesh.points[:, None, :] - centers[None]) ** 2).sum(-1)
    source = (masses / (2 * np.pi * widths**2) * np.exp(-dist2 / (2 * widths**2))).sum(axis=1)
    fixed = mesh.hole if insulated else mesh.boundary
    u = solve_poisson(mesh, source, np.zeros(mesh.num_nodes), fixed)
    features = np.column_stack([source, fixed, mesh.outer, mesh.hole, mesh.points, hole_distance(mesh)])
    return MeshSample(mesh.points, mesh.edges(), features.astype(np.float32), u[:, None].astype(np.float32))


def hole_distance(mesh: Mesh) -> np.ndarray:
    """(N,) distance from every node to the nearest hole-boundary node."""
    return cKDTree(mesh.points[mesh.hole]).query(mesh.points)[0]


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


def advdiff_sample(rng: np.random.Generator, num_nodes: int, grading: float = 1.0, eps: float = 2e-3) -> MeshSample:
    """One advection-diffusion problem: a hot body (the hole, at a random temperature c) in a cross flow.

    Cold inflow (u = 0 where the flow enters the square), u = c on the hole, free outflow. The body's
    thin thermal layer and its wake are the sharp features; c, which fixes the wake downstream, is known
    only on the hole: the wake far from the body depends on it, a truly global dependence.
    """
    mesh = random_mesh(rng, num_nodes, grading=grading)
    angle = float(rng.uniform(-0.5, 0.5))
    velocity = cylinder_flow(mesh, angle)
    normal = np.zeros_like(mesh.points)
    normal[mesh.points[:, 0] <= 1e-9, 0] = -1.0
    normal[mesh.points[:, 0] >= 1 - 1e-9, 0] = 1.0
    normal[mesh.points[:, 1] <= 1e-9, 1] = -1.0
    normal[mesh.points[:, 1] >= 1 - 1e-9, 1] = 1.0
    inflow = mesh.outer & ((velocity * normal).sum(axis=1) < 0)
    temperature = float(rng.uniform(0.2, 1.0)) * float(rng.choice([-1.0, 1.0]))
    fixed = inflow | mesh.hole
    dirichlet = np.where(mesh.hole, temperature, 0.0)
    u = solve_advection_diffusion(mesh, velocity, eps, dirichlet, fixed)
    features = np.column_stack([dirichlet, fixed, mesh.outer, mesh.hole, mesh.points, hole_distance(mesh), velocity])
    return MeshSample(mesh.points, mesh.edges(), features.astype(np.float32), u[:, None].astype(np.float32))


def generate(problem: Problem, count: int, num_nodes: int, seed: int, grading: float = 1.0) -> list[MeshSample]:
    """`count` independent samples of `problem`, reproducible from `seed`."""
    samplers: dict[Problem, Callable[[np.random.Generator, int, float], MeshSample]] = {
        "poisson": poisson_sample, "advdiff": advdiff_sample
    }
    make = samplers[problem]
    return [make(np.random.default_rng([seed, index]), num_nodes, grading) for index in range(count)]


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
                      grading: float = 1.0, cache_dir: Path | None = None) -> tuple[list[MeshSample], list[MeshSample]]:
    """Train/test samples for one data seed, cached on disk (written to a temp dir, then renamed)."""
    name = f"v{CACHE_VERSION}_{problem}_n{num_nodes}_g{grading:g}_{num_train}_{num_test}_s{seed}"
    root = (cache_dir or default_cache_dir()) / name
    if not (root / "test").is_dir():
        root.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=root.parent, prefix=".tmp_"))
        samples = generate(problem, num_train + num_test, num_nodes, seed, grading)
        save_split(samples[:num_train], tmp / "train")
        save_split(samples[num_train:], tmp / "test")
        try:
            os.rename(tmp, root)  # atomic; a concurrent trial that got there first wins
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
    return load_split(root / "train"), load_split(root / "test")
