"""Randomized smoothing (Cohen, Rosenfeld & Kolter 2019): CERTIFY with a one-sided Clopper–Pearson bound.

g(x) = argmax_c P(f(x + ε) = c), ε ~ N(0, σ²I). CERTIFY draws N0 noisy copies to guess c_A, then N more to count
n_A; p_A = the (1 − α) Clopper–Pearson lower bound of n_A/N; if p_A > 1/2 the prediction c_A is certified within
ℓ2 radius σ·Φ⁻¹(p_A), else it abstains. The HySCAN base classifier is itself random (attention noise, RP scale);
since that randomness is independent of ε and x, f̄(z) = P_ξ(f(z; ξ) = c) is a [0, 1]-valued function and the
certificate holds for it unchanged (Salman et al. 2019), provided every draw is independent, which holds because
each sample gets its own noise.

We report only this certificate. The notebook's deterministic margin/(2L) radius would need the attention noise
off and a proven L for the attention residual, which we do not have (pitfall (a) of the method notes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import binom, norm
from torch import Tensor

ABSTAIN = -1


def clopper_pearson_lower(successes: np.ndarray | int, trials: int, alpha: float) -> np.ndarray:
    """One-sided (1 − α) Clopper–Pearson lower bound on a binomial p: the p with P(Bin(n, p) ≥ k) = α (0 for k = 0).

    Found by bisection on the binomial tail (the definition), vectorised over `successes`; it equals the Beta
    quantile B⁻¹(α; k, n − k + 1), which the tests check. Returns float64 of the shape of `successes`.
    """
    k = np.asarray(successes, dtype=np.float64)
    lo, hi = np.zeros_like(k), np.ones_like(k)
    for _ in range(60):
        mid = (lo + hi) / 2
        too_high = binom.sf(k - 1, trials, mid) > alpha  # P(X ≥ k | mid) > α: bound lies below mid
        hi = np.where(too_high, mid, hi)
        lo = np.where(too_high, lo, mid)
    return np.where(k > 0, lo, 0.0)


def certified_radius(p_lower: np.ndarray, sigma: float) -> np.ndarray:
    """σ·Φ⁻¹(p_A) where p_A > 1/2, else −1 (abstain)."""
    p = np.asarray(p_lower, dtype=np.float64)
    return np.where(p > 0.5, sigma * norm.ppf(np.clip(p, 0.5, 1.0)), -1.0)


def sample_counts(
    predict: Callable[[Tensor], Tensor], x: Tensor, num: int, sigma: float, num_classes: int, batch: int = 4096
) -> Tensor:
    """Class counts (B, num_classes) of `predict` (labels of a batch) on `num` noisy copies of each of x (B, ...)."""
    counts = torch.zeros(len(x), num_classes, dtype=torch.long)
    per_call = max(1, batch // max(1, num))
    for start in range(0, len(x), per_call):
        chunk = x[start : start + per_call]
        remaining = num
        while remaining > 0:
            reps = min(remaining, max(1, batch // len(chunk)))
            noisy = chunk.repeat_interleave(reps, dim=0)
            noisy = noisy + sigma * torch.randn_like(noisy)
            labels = predict(noisy).view(len(chunk), reps).cpu()
            counts[start : start + len(chunk)] += torch.nn.functional.one_hot(labels, num_classes).sum(1)
            remaining -= reps
    return counts


@dataclass(frozen=True)
class Certificate:
    """Per test point: the smoothed prediction (−1 = abstain) and its certified ℓ2 radius (−1 = abstain)."""

    prediction: np.ndarray
    radius: np.ndarray

    def accuracy_at(self, labels: np.ndarray, radii: Sequence[float]) -> list[float]:
        """Certified accuracy: the fraction of points predicted correctly with radius ≥ r, for each r."""
        correct = self.prediction == labels
        return [float(np.mean(correct & (self.radius >= r))) for r in radii]


def certify(
    predict: Callable[[Tensor], Tensor],
    x: Tensor,
    sigma: float,
    num_classes: int,
    n0: int,
    n: int,
    alpha: float,
    batch: int = 4096,
) -> Certificate:
    """Cohen et al.'s CERTIFY on every point of x (B, C, H, W), selection and estimation draws independent."""
    guess = sample_counts(predict, x, n0, sigma, num_classes, batch).argmax(dim=1)
    counts = sample_counts(predict, x, n, sigma, num_classes, batch)
    n_a = counts.gather(1, guess.view(-1, 1)).squeeze(1).numpy()
    radius = certified_radius(clopper_pearson_lower(n_a, n, alpha), sigma)
    prediction = np.where(radius >= 0, guess.numpy(), ABSTAIN)
    return Certificate(prediction=prediction, radius=radius)
