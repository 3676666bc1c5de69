"""Metrics of one SPADE trial: the Design-Bench scores of the proposals, the conservatism probe and the
surrogate's rank quality on held-out data.

- Design-Bench protocol: the oracle scores the k proposals, normalised with the full task's y_min/y_max;
  report the 100th (max) and 50th (median) percentiles.
- Conservatism probe (the paper's "scores shrink outside the support"): along random unit directions u
  in z-space, take the training design with the largest projection on u and step `distance` z-units
  (i.e. σ of the data) further along u. Compare the LCB there with the LCB at that far point's nearest
  training design, with the same sampler noise for both (common random numbers).
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.stats import spearmanr

from raygent.jobs.spade.regularizers import KnnSupport
from raygent.jobs.spade.search import LcbScorer
from raygent.jobs.spade.tasks import OfflineTask


def design_bench_scores(task: OfflineTask, designs: np.ndarray) -> dict[str, float]:
    """Normalised max and median oracle score of raw-space designs (k, D)."""
    scores = task.score(designs)
    return {"max": float(np.max(scores)), "median": float(np.median(scores))}


def far_probes(x_train: torch.Tensor, n_probes: int, distance: float, generator: torch.Generator) -> torch.Tensor:
    """Designs `distance` beyond the data's extreme along random directions: (N, D) → (n_probes, D)."""
    directions = torch.randn((n_probes, x_train.shape[1]), generator=generator)
    directions = directions / directions.norm(dim=1, keepdim=True)
    extreme = x_train[(x_train @ directions.T).argmax(dim=0)]
    return extreme + distance * directions


def lcb_gap_far_vs_nearest(
    scorer: LcbScorer, knn: KnnSupport, far: torch.Tensor, generator: torch.Generator
) -> torch.Tensor:
    """LCB(far) − LCB(nearest training design of far), same noise for both: (M, D) → (M,)."""
    nearest = knn.x[knn.nearest(far)]
    noise = torch.randn((scorer.n_samples, far.shape[0]), generator=generator)
    both = scorer.score(torch.cat([far, nearest]), noise=torch.cat([noise, noise], dim=1))
    return both[: far.shape[0]] - both[far.shape[0] :]


def conservatism(scorer: LcbScorer, knn: KnnSupport, *, n_probes: int, distance: float, seed: int) -> dict[str, float]:
    """Fraction of far probes whose LCB is below their nearest training design's, and the mean gap."""
    generator = torch.Generator().manual_seed(seed)
    far = far_probes(knn.x, n_probes, distance, generator)
    gap = lcb_gap_far_vs_nearest(scorer, knn, far, generator)
    return {"frac_below": float((gap < 0).float().mean()), "gap": float(gap.mean())}


def heldout_spearman(scorer: LcbScorer, x: torch.Tensor, y: np.ndarray) -> float:
    """Spearman rank correlation between the surrogate's sample mean and the labels of held-out designs."""
    if x.shape[0] < 3:
        return float("nan")
    mu = scorer.samples(x).mean(dim=0).numpy()
    return float(spearmanr(mu, y).statistic)
