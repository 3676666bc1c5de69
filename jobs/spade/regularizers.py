"""SPADE's two regularisers on the DDIM moments (μ̂, σ̂), the kNN statistics they use, and the
optional test-time support transform.

- Calibrated Diffusion Estimation: L_cal = MSE(μ̂, y) + mean over sampled pairs with y_i > y_j of
  softplus(−T·(μ̂_i − μ̂_j)) (moment + pairwise ranking).
- Support-Proximity Regularisation: with r_k the distance to the k-th training neighbour and ȳ_k the
  neighbours' mean label, L_sup = mean[ReLU(μ̂ − ȳ_k − τ_a·log r_k) + ReLU(σ_a0 + σ_a1·log r_k − σ̂)]
  ("mean shrink + variance floor").
- Test-time transform: μ ← μ − τ_a·log r_k, σ ← max(σ, σ_a0 + σ_a1·log r_k), applied to the samples.

Signs and constants follow the official code. As there, the kNN statistics of the training designs are
cached and each design counts as its own first neighbour. One addition [rec]: `KnnSupport.query` also
serves fresh off-support points (the trainer's optional "support probes", see `train.py`); the official
trainer applies L_sup to the training batch only.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def moment_loss(mu: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """MSE between the DDIM mean and the label: (B,), (B,) → scalar."""
    return F.mse_loss(mu, y)


def ranking_loss(
    mu: torch.Tensor, y: torch.Tensor, first: torch.Tensor, second: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """Pairwise rank term: mean over pairs (i, j) = (first[p], second[p]) with y_i > y_j of
    softplus(−T·(μ_i − μ_j)); zero when no pair is ordered.

    mu, y: (B,); first, second: (P,) integer indices into the batch → scalar.
    """
    ordered = y[first] > y[second]
    if not bool(ordered.any()):
        return mu.sum() * 0.0
    diff = mu[first[ordered]] - mu[second[ordered]]
    return F.softplus(-temperature * diff).mean()


def calibration_loss(
    mu: torch.Tensor,
    y: torch.Tensor,
    *,
    n_pairs: int,
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """L_cal = moment_loss + ranking_loss over `n_pairs` uniformly drawn pairs: (B,), (B,) → scalar."""
    first = torch.randint(0, y.shape[0], (n_pairs,), generator=generator)
    second = torch.randint(0, y.shape[0], (n_pairs,), generator=generator)
    return moment_loss(mu, y) + ranking_loss(mu, y, first, second, temperature)


def support_proximity_loss(
    mu: torch.Tensor,
    sigma: torch.Tensor,
    neighbour_mean: torch.Tensor,
    knn_radius: torch.Tensor,
    *,
    tau_a: float,
    sigma_a0: float,
    sigma_a1: float,
) -> torch.Tensor:
    """L_sup = mean[ReLU(μ − ȳ_k − τ_a log r_k) + ReLU(σ_a0 + σ_a1 log r_k − σ)].

    mu, sigma, neighbour_mean (ȳ_k), knn_radius (r_k): all (B,) → scalar.
    """
    log_r = torch.log(knn_radius + 1e-8)
    mean_shrink = F.relu(mu - neighbour_mean - tau_a * log_r)
    variance_floor = F.relu(sigma_a0 + sigma_a1 * log_r - sigma)
    return (mean_shrink + variance_floor).mean()


def support_transform(
    samples: torch.Tensor, knn_radius: torch.Tensor, *, tau_a: float, sigma_a0: float, sigma_a1: float
) -> torch.Tensor:
    """Shift each design's samples to mean μ − τ_a log r_k and stretch them to std ≥ σ_a0 + σ_a1 log r_k.

    samples (S, B), knn_radius (B,) → (S, B).
    """
    log_r = torch.log(knn_radius + 1e-8)
    mu = samples.mean(dim=0)
    sigma = samples.std(dim=0, unbiased=False)
    stretched = torch.maximum(sigma, sigma_a0 + sigma_a1 * log_r) / (sigma + 1e-8)
    return (samples - mu) * stretched + (mu - tau_a * log_r)


class KnnSupport:
    """kNN statistics (ȳ_k, r_k) against a fixed training set in the surrogate's (z-scored) space."""

    def __init__(self, x_train: torch.Tensor, y_train: torch.Tensor, k: int, *, chunk: int = 1024) -> None:
        """x_train (N, D), y_train (N,); the training designs' own statistics are computed once here."""
        self.x = x_train.detach()
        self.y = y_train.detach()
        self.k = min(k, x_train.shape[0])
        self.chunk = chunk
        self.train_mean, self.train_radius = self.query(self.x)

    def query(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, D) → ȳ_k (B,), r_k (B,); a training design is its own nearest neighbour."""
        means, radii = [], []
        with torch.no_grad():
            for start in range(0, x.shape[0], self.chunk):
                dist = torch.cdist(x[start : start + self.chunk].detach(), self.x)
                nearest, index = dist.topk(self.k, dim=1, largest=False)
                means.append(self.y[index].mean(dim=1))
                radii.append(nearest[:, -1])
        return torch.cat(means), torch.cat(radii)

    def nearest(self, x: torch.Tensor) -> torch.Tensor:
        """Index of each query's nearest training design: (B, D) → (B,)."""
        with torch.no_grad():
            return torch.cdist(x.detach(), self.x).argmin(dim=1)
