"""Point estimate of a low-rank RNN, gauge fixing, the identifiable projection and max-entropy residuals.

Pipeline steps 1-4 of the method notes ("Implementable pipeline", all [rec]; summarised in docs/studies.md):

1. `fit_lrrnn`: rank-R loadings by BPTT (Adam, MSE on activity). We backpropagate through windows of
   `window` Euler steps started at the recorded state (multiple shooting), not through whole trials: with
   noisy trials and a limit cycle, whole-trial BPTT mostly fits phase noise.
   Initialisation (``init``): ``"warm"`` starts from a gauge-scrambled, perturbed copy of given loadings
   (a connectome-constrained fit: the data exert no force on the dynamically null part of n, so the fit keeps
   whatever structure the start had; this is how the planted spurious residual reaches the point estimate);
   ``"random"`` starts from the activity's principal axes for M and small Gaussian n, so the null part of the
   point estimate is the Gaussian initialisation.
2. `gauge_fix`: whiten the latents kappa and orthogonalise M (order by column norm, sign by skewness).
3. `identifiable_projection`: g(m) = sum_k c_k tanh(m^T kappa_k), least squares (ridge) of n_i on these
   features at K states kappa_k covering the visited latent manifold (greedy farthest-point selection).
4. `maxent_residuals`: residuals r_i = n_i - g(m_i) are redrawn from N(mu_r, Sigma_r), the maximum-entropy
   law under the same first and second moments. `weight` (the study's lambda) interpolates:
   r~ = mu + sqrt(1 - w)(r - mu) + sqrt(w) L xi keeps Sigma_r for every w; w = 0 is the point estimate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch


@dataclass(frozen=True)
class FitResult:
    """Loadings m, n (N, R) and the training loss curve."""

    m: np.ndarray
    n: np.ndarray
    losses: list[float]


def rollout(m: torch.Tensor, n: torch.Tensor, x0: torch.Tensor, n_steps: int, dt: float) -> torch.Tensor:
    """Noise-free Euler rollout of the rate network from x0 (B, N); returns (B, n_steps, N) after x0."""
    size = m.shape[0]
    xs = []
    x = x0
    for _ in range(n_steps):
        x = x + dt * (-x + (torch.tanh(x) @ n) @ m.T / size)
        xs.append(x)
    return torch.stack(xs, dim=1)


def random_gauge(rank: int, rng: np.random.Generator) -> np.ndarray:
    """A random well-conditioned A in GL(R): rotation times scales in [0.7, 1.4]."""
    q, _ = np.linalg.qr(rng.standard_normal((rank, rank)))
    return q @ np.diag(rng.uniform(0.7, 1.4, size=rank))


def warm_start(
    m: np.ndarray, n: np.ndarray, rank: int, noise: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Gauge-scrambled, perturbed copy of (m, n), truncated or zero-padded to `rank` columns."""
    a = random_gauge(m.shape[1], rng)
    m0, n0 = m @ a, n @ np.linalg.inv(a).T
    size = m.shape[0]
    pad = max(rank - m.shape[1], 0)
    m0 = np.concatenate([m0, np.zeros((size, pad))], axis=1)[:, :rank]
    n0 = np.concatenate([n0, np.zeros((size, pad))], axis=1)[:, :rank]
    return m0 + noise * rng.standard_normal(m0.shape), n0 + noise * rng.standard_normal(n0.shape)


def pca_start(
    x: np.ndarray, rank: int, rng: np.random.Generator, n_scale: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """M on the top-R principal axes of the activity (unit second moment per column), n ~ N(0, n_scale^2)."""
    flat = x.reshape(-1, x.shape[-1])
    axes = np.linalg.svd(flat - flat.mean(axis=0), full_matrices=False)[2][:rank].T
    size = x.shape[-1]
    return np.sqrt(size) * axes, n_scale * rng.standard_normal((size, rank))


def fit_lrrnn(
    x: np.ndarray,
    rank: int,
    dt: float,
    rng: np.random.Generator,
    init: Literal["warm", "random"] = "random",
    start: tuple[np.ndarray, np.ndarray] | None = None,
    warm_noise: float = 0.2,
    iters: int = 400,
    window: int = 15,
    batch: int = 32,
    lr: float = 0.02,
) -> FitResult:
    """Fit rank-R loadings to recorded activity x (trials, T, N) by BPTT through `window`-step rollouts."""
    if init == "warm":
        if start is None:
            raise ValueError("init='warm' needs start=(m, n)")
        m0, n0 = warm_start(*start, rank, warm_noise, rng)
    else:
        m0, n0 = pca_start(x, rank, rng)
    m = torch.tensor(m0, dtype=torch.float32, requires_grad=True)
    n = torch.tensor(n0, dtype=torch.float32, requires_grad=True)
    data = torch.tensor(x, dtype=torch.float32)
    trials, length = x.shape[0], x.shape[1]
    window = min(window, length - 1)
    opt = torch.optim.Adam([m, n], lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, iters)
    losses = []
    for _ in range(iters):
        tr = torch.as_tensor(rng.integers(0, trials, size=batch))
        t0 = torch.as_tensor(rng.integers(0, length - window, size=batch))
        steps = t0[:, None] + torch.arange(window + 1)[None, :]
        segment = data[tr[:, None], steps]
        pred = rollout(m, n, segment[:, 0], window, dt)
        loss = ((pred - segment[:, 1:]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    return FitResult(m=m.detach().double().numpy(), n=n.detach().double().numpy(), losses=losses)


def latents(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Least-squares latent coordinates kappa of activity x (..., N) on the columns of m; (..., R)."""
    return x @ m @ np.linalg.inv(m.T @ m)


def gauge_fix(m: np.ndarray, n: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Canonical gauge (M A, N A^-T): latents of x whitened, M^T M diagonal and descending, skew(m) >= 0."""
    kappa = latents(x.reshape(-1, x.shape[-1]), m)
    evals, evecs = np.linalg.eigh(np.cov(kappa.T).reshape(m.shape[1], m.shape[1]))
    a = evecs @ np.diag(np.sqrt(np.maximum(evals, 1e-12))) @ evecs.T
    m1, n1 = m @ a, n @ np.linalg.inv(a).T
    _, rot = np.linalg.eigh(m1.T @ m1)
    rot = rot[:, ::-1]
    m2, n2 = m1 @ rot, n1 @ rot
    sign = np.where(((m2 - m2.mean(axis=0)) ** 3).sum(axis=0) >= 0, 1.0, -1.0)
    return m2 * sign, n2 * sign


def farthest_points(points: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Greedy farthest-point subset of `points` (P, R) of size k; (k, R)."""
    chosen = [int(rng.integers(points.shape[0]))]
    dist = np.linalg.norm(points - points[chosen[0]], axis=1)
    for _ in range(min(k, points.shape[0]) - 1):
        chosen.append(int(dist.argmax()))
        dist = np.minimum(dist, np.linalg.norm(points - points[chosen[-1]], axis=1))
    return points[chosen]


@dataclass(frozen=True)
class Projection:
    """g(m) = tanh(m kappas^T) coef: kappas (K, R), coef (K, R)."""

    kappas: np.ndarray
    coef: np.ndarray

    def __call__(self, m: np.ndarray) -> np.ndarray:
        return np.tanh(m @ self.kappas.T) @ self.coef


def identifiable_projection(
    m: np.ndarray, n: np.ndarray, visited: np.ndarray, n_features: int, rng: np.random.Generator, ridge: float = 1e-4
) -> Projection:
    """Ridge least squares of n (N, R) on tanh(m^T kappa_k) for kappa_k covering `visited` (P, R)."""
    kappas = farthest_points(visited, n_features, rng)
    psi = np.tanh(m @ kappas.T)
    gram = psi.T @ psi
    reg = ridge * np.trace(gram) / gram.shape[0]
    coef = np.linalg.solve(gram + reg * np.eye(gram.shape[0]), psi.T @ n)
    return Projection(kappas=kappas, coef=coef)


def maxent_residuals(residual: np.ndarray, weight: float, copies: int, rng: np.random.Generator) -> np.ndarray:
    """`copies` redraws of each residual row (N, R) -> (copies, N, R), mixing in N(mu, Sigma) with `weight`."""
    mu = residual.mean(axis=0)
    centred = residual - mu
    chol = np.linalg.cholesky(np.cov(centred.T).reshape(mu.size, mu.size) + 1e-9 * np.eye(mu.size))
    xi = rng.standard_normal((copies, *residual.shape)) @ chol.T
    return mu + np.sqrt(1.0 - weight) * centred[None] + np.sqrt(weight) * xi
