"""Random unstructured meshes and the two steady PDEs the surrogate learns, all on scipy.sparse.

Geometry: a unit square with one circular hole (random centre and radius), meshed by `scipy.spatial.Delaunay`
on a jittered hexagonal point cloud plus points on both boundaries; triangles whose centroid falls in the
hole are dropped.

Solvers (linear P1 finite elements, lumped load):
- `solve_poisson`: -Δu = f with Dirichlet data g on every boundary node. The paper's industrial CFD/CSD
  benchmarks are out of reach at laptop scale; Poisson with sharp sources is the method notes' synthetic
  stand-in [rec]: the solution at a node depends on every source in the domain, so L = 4 local hops of
  message passing cannot see it all.
- `solve_advection_diffusion`: -ε Δu + b·∇u = 0 with Dirichlet inflow data, stabilised by streamline
  diffusion (for P1 elements and zero source this is exactly SUPG). The inflow profile's tanh front is
  carried across the whole domain, another truly global dependence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve
from scipy.spatial import Delaunay


@dataclass(frozen=True)
class Mesh:
    """A triangle mesh. points (N, 2); triangles (T, 3) int; outer/hole: (N,) bool boundary masks."""

    points: np.ndarray
    triangles: np.ndarray
    outer: np.ndarray
    hole: np.ndarray

    @property
    def boundary(self) -> np.ndarray:
        """(N,) bool: nodes carrying Dirichlet data."""
        return self.outer | self.hole

    @property
    def num_nodes(self) -> int:
        return int(self.points.shape[0])

    def edges(self) -> np.ndarray:
        """(E, 2) unique undirected mesh edges, i < j."""
        return triangle_edges(self.triangles)


def triangle_edges(triangles: np.ndarray) -> np.ndarray:
    """(T, 3) triangles → (E, 2) sorted unique undirected edges."""
    pairs = np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]])
    pairs = np.sort(pairs, axis=1)
    return np.unique(pairs, axis=0)


def _circle_points(center: np.ndarray, radius: float, spacing: float) -> np.ndarray:
    count = max(8, round(2 * np.pi * radius / spacing))
    angle = np.linspace(0.0, 2 * np.pi, count, endpoint=False)
    return center + radius * np.stack([np.cos(angle), np.sin(angle)], axis=1)


def _square_points(spacing: float) -> np.ndarray:
    count = max(4, round(1.0 / spacing))
    t = np.linspace(0.0, 1.0, count, endpoint=False)
    zeros, ones = np.zeros_like(t), np.ones_like(t)
    sides = [(t, zeros), (ones, t), (1 - t, ones), (zeros, 1 - t)]
    return np.concatenate([np.stack(side, axis=1) for side in sides])


def _grade_towards_hole(points: np.ndarray, center: np.ndarray, radius: float, grading: float) -> np.ndarray:
    """Move points radially towards the hole: s' = g·s + (1 - g)·s², s ∈ [0, 1] along each ray from the hole
    to the square, so spacing shrinks to g·h at the hole and grows to (2 - g)·h at the square."""
    offset = points - center
    dist = np.linalg.norm(offset, axis=1)
    direction = offset / dist[:, None]
    with np.errstate(divide="ignore"):
        exits = np.where(direction > 0, (1 - center) / direction, np.where(direction < 0, -center / direction, np.inf))
    span = exits.min(axis=1) - radius  # hole boundary to square along the ray
    frac = np.clip((dist - radius) / span, 0.0, 1.0)
    graded = grading * frac + (1 - grading) * frac**2
    return center + direction * (radius + graded * span)[:, None]


def random_mesh(
    rng: np.random.Generator,
    num_nodes: int = 600,
    hole_radius: tuple[float, float] = (0.1, 0.18),
    jitter: float = 0.3,
    grading: float = 1.0,
) -> Mesh:
    """A Delaunay mesh of the unit square minus a random disk, with about `num_nodes` nodes.

    `grading` < 1 refines the mesh towards the hole (spacing ≈ grading·h there), as CFD meshes are refined
    towards the body; 1 gives a uniform mesh.
    """
    if not 0 < grading <= 1:
        raise ValueError(f"grading must be in (0, 1], got {grading}")
    radius = float(rng.uniform(*hole_radius))
    center = rng.uniform(0.3 + radius / 2, 0.7 - radius / 2, size=2)
    area = 1.0 - np.pi * radius**2
    spacing = float(np.sqrt(area * 2.0 / (np.sqrt(3.0) * num_nodes)))
    rows = np.arange(0.0, 1.0 + spacing, spacing * np.sqrt(3.0) / 2)
    cols = np.arange(0.0, 1.0 + spacing, spacing)
    grid_x = cols[None, :] + (np.arange(len(rows)) % 2)[:, None] * spacing / 2
    grid = np.stack([grid_x, np.broadcast_to(rows[:, None], grid_x.shape)], axis=-1).reshape(-1, 2)
    grid = grid + rng.uniform(-jitter, jitter, size=grid.shape) * spacing
    margin = 0.5 * spacing
    inside = np.all((grid > margin) & (grid < 1 - margin), axis=1)
    inside &= np.linalg.norm(grid - center, axis=1) > radius + margin
    grid = grid[inside]
    if grading < 1:
        grid = _grade_towards_hole(grid, center, radius, grading)
    outer_pts = _square_points(spacing)
    hole_pts = _circle_points(center, radius, grading * spacing)
    points = np.concatenate([outer_pts, hole_pts, grid])
    outer = np.zeros(len(points), dtype=bool)
    outer[: len(outer_pts)] = True
    hole = np.zeros(len(points), dtype=bool)
    hole[len(outer_pts) : len(outer_pts) + len(hole_pts)] = True
    triangles = Delaunay(points).simplices
    centroids = points[triangles].mean(axis=1)
    keep = np.linalg.norm(centroids - center, axis=1) > radius
    keep &= triangle_areas(points, triangles) > 1e-12
    return Mesh(points=points, triangles=triangles[keep].astype(np.int64), outer=outer, hole=hole)


def triangle_areas(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """(T,) unsigned areas."""
    a, b, c = (points[triangles[:, k]] for k in range(3))
    return 0.5 * np.abs((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0]))


def _p1_gradients(points: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of the three hat functions on each triangle: (T, 3, 2), and areas (T,)."""
    a, b, c = (points[triangles[:, k]] for k in range(3))
    det = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])
    # ∇λ_k = rot90(opposite edge) / det
    grads = np.stack(
        [
            np.stack([b[:, 1] - c[:, 1], c[:, 0] - b[:, 0]], axis=1),
            np.stack([c[:, 1] - a[:, 1], a[:, 0] - c[:, 0]], axis=1),
            np.stack([a[:, 1] - b[:, 1], b[:, 0] - a[:, 0]], axis=1),
        ],
        axis=1,
    ) / det[:, None, None]
    return grads, 0.5 * np.abs(det)


def _assemble(triangles: np.ndarray, local: np.ndarray, n: int) -> sp.csr_matrix:
    rows = np.repeat(triangles, 3, axis=1).ravel()
    cols = np.tile(triangles, (1, 3)).ravel()
    return sp.coo_matrix((local.ravel(), (rows, cols)), shape=(n, n)).tocsr()


def stiffness_matrix(mesh: Mesh, diffusion: np.ndarray | None = None) -> sp.csr_matrix:
    """P1 matrix of ∫ ∇v·D ∇u. `diffusion`: (T, 2, 2) per-triangle tensor, identity when None."""
    grads, areas = _p1_gradients(mesh.points, mesh.triangles)
    flux = grads if diffusion is None else np.einsum("tij,tkj->tki", diffusion, grads)
    local = areas[:, None, None] * np.einsum("tid,tjd->tij", grads, flux)
    return _assemble(mesh.triangles, local, mesh.num_nodes)


def lumped_mass(mesh: Mesh) -> np.ndarray:
    """(N,) lumped P1 mass: a third of the area of every triangle touching the node."""
    areas = triangle_areas(mesh.points, mesh.triangles)
    return np.bincount(mesh.triangles.ravel(), weights=np.repeat(areas / 3.0, 3), minlength=mesh.num_nodes)


def _solve_dirichlet(matrix: sp.csr_matrix, rhs: np.ndarray, fixed: np.ndarray, values: np.ndarray) -> np.ndarray:
    free = ~fixed
    u = np.where(fixed, values, 0.0).astype(float)
    reduced_rhs = rhs[free] - matrix[free][:, fixed] @ u[fixed]
    u[free] = spsolve(matrix[free][:, free].tocsc(), reduced_rhs)
    return u


def solve_poisson(mesh: Mesh, source: np.ndarray, dirichlet: np.ndarray, fixed: np.ndarray | None = None) -> np.ndarray:
    """P1-FEM solution of -Δu = f with u = g where `fixed` (default: every boundary node) and a zero normal
    flux (insulated) on the rest of the boundary. source, dirichlet, fixed: (N,) → (N,)."""
    rhs = lumped_mass(mesh) * source
    return _solve_dirichlet(stiffness_matrix(mesh), rhs, mesh.boundary if fixed is None else fixed, dirichlet)


def solve_advection_diffusion(
    mesh: Mesh, velocity: np.ndarray, eps: float, dirichlet: np.ndarray, fixed: np.ndarray
) -> np.ndarray:
    """Streamline-diffusion P1 solution of -εΔu + b·∇u = 0; velocity (N, 2), u = g where `fixed` (N,) → (N,).

    The streamline term τ (b·∇u, b·∇v) uses τ = h / (2|b|) per triangle (h = √(2·area)), so the element
    Péclet number never produces Galerkin wiggles at laptop resolution.
    """
    grads, areas = _p1_gradients(mesh.points, mesh.triangles)
    b = velocity[mesh.triangles].mean(axis=1)  # (T, 2) element velocity
    speed = np.linalg.norm(b, axis=1) + 1e-12
    tau = np.sqrt(2.0 * areas) / (2.0 * speed)
    tensor = eps * np.eye(2)[None] + tau[:, None, None] * b[:, :, None] * b[:, None, :]
    diffusive = stiffness_matrix(mesh, tensor)
    # Galerkin advection ∫ v_i b·∇u: each test function integrates to area/3 on a P1 triangle.
    adv_local = (areas / 3.0)[:, None, None] * np.einsum("td,tjd->tj", b, grads)[:, None, :].repeat(3, axis=1)
    matrix = diffusive + _assemble(mesh.triangles, adv_local, mesh.num_nodes)
    return _solve_dirichlet(matrix.tocsr(), np.zeros(mesh.num_nodes), fixed, dirichlet)
