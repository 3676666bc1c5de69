"""Evaluation metrics of the surrogate, as pure numpy functions."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

REL_L2 = "test/rel_l2"  # mean over test meshes of the field's relative L2 error
SPEARMAN = "test/spearman"  # mean over test meshes of Spearman(ê, true node error)
EDGES = "graph/edges"  # mean undirected edges per test mesh, mesh + augmented
AUG_EDGES = "graph/aug_edges"  # mean augmented edges per test mesh
TRAIN_LOSS = "train/loss"
TRAIN_EPOCH = "train/epoch"
TRAIN_SECONDS = "time/train_s"


def relative_l2(pred: np.ndarray, target: np.ndarray) -> float:
    """‖pred − target‖₂ / ‖target‖₂ over all nodes and channels of one mesh: (N, C), (N, C) → float.

    >>> relative_l2(np.array([[1.0], [1.0]]), np.array([[1.0], [2.0]]))  # doctest: +ELLIPSIS
    0.447...
    """
    return float(np.linalg.norm(pred - target) / max(float(np.linalg.norm(target)), 1e-12))


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rank correlation of two (N,) vectors (average ranks for ties); 0 when either is constant.

    >>> spearman(np.array([1.0, 2.0, 3.0]), np.array([10.0, 30.0, 20.0]))
    0.5
    """
    ra, rb = rankdata(a), rankdata(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = float(np.sqrt((ra**2).sum() * (rb**2).sum()))
    return float((ra * rb).sum() / denom) if denom > 0 else 0.0
