"""Error-driven hierarchical edge augmentation (MiSe) and the equal-budget random baseline.

The paper states the idea (high-error nodes linked to spatial pivots at several scales through an adaptive
tree); the construction below is our reconstruction [rec] of the method notes:

1. H = the top-ρ fraction of nodes by predicted error ê (at least one node).
2. Pivots at S scales: scale s overlays a square grid of cell size h_s = h0·2^s (h0 relative to the
   bounding box); at s = 0 the pivot of an
   occupied cell is the node nearest the centroid of the cell's nodes; at s + 1 it is the scale-s pivot
   (among those of the four child cells) nearest the coarse cell's node centroid, so coarse pivots are a
   subset of fine pivots and every pivot's parent is the pivot of its enclosing coarse cell: a tree.
3. Edges: every node in H links to its nearest pivot at every scale (type "node→pivot s"); every pivot the
   tree uses (the nearest pivots of H and all their ancestors) links to its parent (type "pivot→parent s").
   Self-loops are dropped and edges de-duplicated; message passing makes every edge bidirectional.

The random baseline draws, per mesh and per refresh, exactly as many uniformly random node pairs as MiSe
would add from the same ê, so both graphs carry the same edge budget.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

MAX_SCALES = 4
MESH, RANDOM = 0, 2 * MAX_SCALES + 1
NUM_EDGE_TYPES = 2 * MAX_SCALES + 2


def node_pivot_type(scale: int) -> int:
    """Edge-type id of a node→pivot edge at `scale`."""
    return 1 + scale


def pivot_parent_type(scale: int) -> int:
    """Edge-type id of a pivot→parent edge from `scale` to `scale + 1`."""
    return 1 + MAX_SCALES + scale


@dataclass(frozen=True)
class PivotTree:
    """Nested pivots of one mesh. pivots[s]: (P_s,) node ids; parent[s]: (P_s,) node id of each one's parent
    at scale s + 1 (for s < S - 1)."""

    pivots: list[np.ndarray]
    parent: list[np.ndarray]

    @property
    def num_scales(self) -> int:
        return len(self.pivots)


def _nearest_to_centroid(points: np.ndarray, candidates: np.ndarray, cells: np.ndarray) -> dict[tuple[int, int], int]:
    """For every occupied cell, the candidate node nearest the centroid of all nodes in that cell.

    points (N, 2); candidates (K,) node ids; cells (N, 2) int cell of every node."""
    keys, inverse = np.unique(cells, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    sums = np.zeros((len(keys), 2))
    np.add.at(sums, inverse, points)
    centroids = sums / np.bincount(inverse, minlength=len(keys))[:, None]
    slot = inverse[candidates]
    dist = ((points[candidates] - centroids[slot]) ** 2).sum(axis=1)
    order = np.lexsort((candidates, dist, slot))  # per cell: nearest first, ties to the lower id
    first = np.ones(len(order), dtype=bool)
    first[1:] = slot[order][1:] != slot[order][:-1]
    winners = order[first]
    return {tuple(keys[slot[w]].tolist()): int(candidates[w]) for w in winners}


def build_pivot_tree(points: np.ndarray, num_scales: int, base_spacing: float) -> PivotTree:
    """Pivots of `points` (N, 2) at `num_scales` nested scales.

    `base_spacing` is the finest cell size as a fraction of the bounding box's longer side (0.25 on the
    unit square: 4×4 cells, then 2×2, then one root cell)."""
    if not 1 <= num_scales <= MAX_SCALES:
        raise ValueError(f"num_scales must be in 1..{MAX_SCALES}, got {num_scales}")
    low = points.min(axis=0)
    extent = float((points.max(axis=0) - low).max()) or 1.0
    per_side = max(1, int(np.ceil(1.0 / base_spacing - 1e-9)))
    base_cells = np.minimum(np.floor((points - low) / (base_spacing * extent)), per_side - 1).astype(np.int64)
    pivots: list[np.ndarray] = []
    parent: list[np.ndarray] = []
    candidates = np.arange(len(points))
    for scale in range(num_scales):
        cells = base_cells // 2**scale  # aligned grids: every fine cell sits inside one coarse cell
        cell_to_pivot = _nearest_to_centroid(points, candidates, cells)
        if scale > 0:
            parent.append(np.array([cell_to_pivot[tuple(cells[p].tolist())] for p in pivots[-1]], dtype=np.int64))
        pivots.append(np.array(sorted(cell_to_pivot.values()), dtype=np.int64))
        candidates = pivots[-1]
    return PivotTree(pivots=pivots, parent=parent)


def select_nodes(error: np.ndarray, fraction: float) -> np.ndarray:
    """Indices of the top-`fraction` nodes by `error` (N,), at least one; ties broken by lower index."""
    count = max(1, round(fraction * len(error)))
    return np.lexsort((np.arange(len(error)), -error))[:count]


def mise_edges(
    points: np.ndarray, error: np.ndarray, fraction: float, tree: PivotTree
) -> tuple[np.ndarray, np.ndarray]:
    """Augmented edges from predicted error. points (N, 2), error (N,) → edges (M, 2), types (M,)."""
    selected = select_nodes(error, fraction)
    edges: dict[tuple[int, int], int] = {}

    def add(a: int, b: int, kind: int) -> None:
        if a != b:
            edges.setdefault((min(a, b), max(a, b)), kind)

    used: np.ndarray = np.empty(0, dtype=np.int64)
    for scale in range(tree.num_scales):
        pivots = tree.pivots[scale]
        _, nearest = cKDTree(points[pivots]).query(points[selected])
        targets = pivots[np.atleast_1d(nearest)]
        for node, pivot in zip(selected.tolist(), targets.tolist(), strict=True):
            add(node, pivot, node_pivot_type(scale))
        if scale > 0:  # ancestors of the finer scale's used pivots belong to the tree too
            lookup = dict(zip(tree.pivots[scale - 1].tolist(), tree.parent[scale - 1].tolist(), strict=True))
            parents = np.array([lookup[p] for p in used.tolist()], dtype=np.int64)
            for child, par in zip(used.tolist(), parents.tolist(), strict=True):
                add(child, par, pivot_parent_type(scale - 1))
            used = np.union1d(targets, parents)
        else:
            used = np.unique(targets)
    if not edges:
        return np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.int64)
    pairs = np.array(list(edges.keys()), dtype=np.int64)
    return pairs, np.array(list(edges.values()), dtype=np.int64)


def random_edges(num_nodes: int, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """`count` distinct uniformly random node pairs (no self-loops) → edges (count, 2), types (count,)."""
    count = min(count, num_nodes * (num_nodes - 1) // 2)
    chosen: set[tuple[int, int]] = set()
    while len(chosen) < count:
        a, b = rng.integers(0, num_nodes, size=(2, 2 * (count - len(chosen)) + 4))
        for i, j in zip(a.tolist(), b.tolist(), strict=True):
            if i != j and len(chosen) < count:
                chosen.add((min(i, j), max(i, j)))
    pairs = np.array(sorted(chosen), dtype=np.int64).reshape(-1, 2)
    return pairs, np.full(len(pairs), RANDOM, dtype=np.int64)
