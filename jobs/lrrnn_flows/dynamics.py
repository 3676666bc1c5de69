"""Dynamics of a finite low-rank network read off its loadings: fixed points, limit-cycle period, ring drift.

For loadings (m_i, n_i), i = 1..N, noise-free activity x = M kappa obeys the exact R-dimensional ODE

    dkappa/dt = G(kappa) = -kappa + (1/N) sum_i n_i tanh(m_i^T kappa)

and the non-trivial eigenvalues of the full network's Jacobian at x* = M kappa* are those of the latent
Jacobian -I + (1/N) sum_i n_i m_i^T tanh'(m_i^T kappa*) (the other N - R are -1). So stability, periods and
drift of a network sampled from the learned distribution at any N' are computed in R dimensions.
Fixed points come from `scipy.optimize.root` started on a grid; the paper does not say how it counts them.
Also here: the distribution statistics of the claim (KS normality of residual marginals, kurtosis).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats


def latent_velocity(kappa: np.ndarray, m: np.ndarray, n: np.ndarray) -> np.ndarray:
    """G(kappa) for kappa (..., R); m, n (N, R). Returns (..., R)."""
    return -kappa + np.tanh(kappa @ m.T) @ n / m.shape[0]


def latent_jacobian(kappa: np.ndarray, m: np.ndarray, n: np.ndarray) -> np.ndarray:
    """dG/dkappa at one kappa (R,); returns (R, R)."""
    gain = 1.0 - np.tanh(m @ kappa) ** 2
    return -np.eye(m.shape[1]) + (n * gain[:, None]).T @ m / m.shape[0]


@dataclass(frozen=True)
class FixedPoints:
    """Distinct fixed points (K, R) and whether each is linearly stable (K,)."""

    points: np.ndarray
    stable: np.ndarray

    @property
    def n_stable(self) -> int:
        return int(self.stable.sum())


def start_grid(rank: int, radius: float) -> np.ndarray:
    """Starting points for the root finder: a grid in [-radius, radius]^R; (K, R)."""
    per_axis = {1: 41, 2: 11, 3: 6}.get(rank, 4)
    axes = [np.linspace(-radius, radius, per_axis)] * rank
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, rank)


def find_fixed_points(
    m: np.ndarray, n: np.ndarray, radius: float = 3.0, tol: float = 1e-8, merge: float = 1e-3
) -> FixedPoints:
    """All fixed points reached by `scipy.optimize.root` (hybr) from a start grid, deduplicated."""
    rank = m.shape[1]
    found: list[np.ndarray] = []
    for start in start_grid(rank, radius):
        sol = optimize.root(
            latent_velocity, start, args=(m, n), jac=latent_jacobian, method="hybr", options={"maxfev": 200}
        )
        if not sol.success or np.linalg.norm(latent_velocity(sol.x, m, n)) > tol ** 0.5:
            continue
        scale = max(1.0, float(np.linalg.norm(sol.x)))
        if all(np.linalg.norm(sol.x - p) > merge * scale for p in found):
            found.append(sol.x)
    points = np.array(found).reshape(-1, rank)
    stable = np.array([np.linalg.eigvals(latent_jacobian(p, m, n)).real.max() < 0 for p in points], dtype=bool)
    return FixedPoints(points=points, stable=stable)


def simulate_latent(m: np.ndarray, n: np.ndarray, kappa0: np.ndarray, dt: float, n_steps: int) -> np.ndarray:
    """RK4 integration of dkappa/dt = G(kappa) from kappa0 (B, R); returns (B, n_steps + 1, R)."""
    out = [kappa0]
    k = kappa0
    for _ in range(n_steps):
        k1 = latent_velocity(k, m, n)
        k2 = latent_velocity(k + 0.5 * dt * k1, m, n)
        k3 = latent_velocity(k + 0.5 * dt * k2, m, n)
        k4 = latent_velocity(k + dt * k3, m, n)
        k = k + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(k)
    return np.stack(out, axis=1)


def oscillation_period(signal: np.ndarray, dt: float) -> float:
    """Mean interval between upward mean-crossings of a 1-D signal (NaN if fewer than three crossings)."""
    centred = signal - signal.mean()
    if np.ptp(centred) < 1e-3:
        return float("nan")
    idx = np.nonzero((centred[:-1] < 0) & (centred[1:] >= 0))[0]
    if idx.size < 3:
        return float("nan")
    frac = -centred[idx] / (centred[idx + 1] - centred[idx])
    times = (idx + frac) * dt
    return float(np.diff(times).mean())


def limit_cycle_period(
    m: np.ndarray, n: np.ndarray, dt: float = 0.05, t_transient: float = 20.0, t_measure: float = 40.0
) -> float:
    """Period of the attractor reached from a small kick off the origin (NaN if it settles to a point)."""
    rank = m.shape[1]
    kappa0 = np.full((1, rank), 0.3)
    traj = simulate_latent(m, n, kappa0, dt, int((t_transient + t_measure) / dt))[0]
    tail = traj[int(t_transient / dt) :]
    centred = tail - tail.mean(axis=0)
    axis = np.linalg.svd(centred, full_matrices=False)[2][0]
    return oscillation_period(centred @ axis, dt)


@dataclass(frozen=True)
class RingStats:
    """Mean absolute angular drift (degrees over the window), mean ring radius, radius spread (CV)."""

    drift_deg: float
    radius: float
    radius_cv: float


def ring_drift(
    m: np.ndarray, n: np.ndarray, n_angles: int = 12, t_relax: float = 5.0, t_drift: float = 10.0, dt: float = 0.1
) -> RingStats:
    """Start `n_angles` points on the attractor's mean radius and measure how far each slides along it.

    A first pass relaxes from radius 1.5 to find the attractor's mean radius; the second starts exactly
    there at equally spaced angles and integrates `t_drift`. Angles are in the network's own latent frame
    (rank 2 only). A perfect ring has zero drift; a network with a few point attractors drifts towards them
    (up to 45 degrees for four, 90 for two).
    """
    if m.shape[1] != 2:
        raise ValueError("ring drift is defined for rank-2 networks")
    theta = 2 * np.pi * np.arange(n_angles) / n_angles
    circle = np.stack([np.cos(theta), np.sin(theta)], axis=-1)
    relaxed = simulate_latent(m, n, 1.5 * circle, dt, int(t_relax / dt))[:, -1]
    radius = np.linalg.norm(relaxed, axis=1)
    final = simulate_latent(m, n, radius.mean() * circle, dt, int(t_drift / dt))[:, -1]
    drift = np.abs(np.angle(np.exp(1j * (np.arctan2(final[:, 1], final[:, 0]) - theta))))
    return RingStats(
        drift_deg=float(np.degrees(drift).mean()),
        radius=float(radius.mean()),
        radius_cv=float(radius.std() / max(radius.mean(), 1e-12)),
    )


def resampled_ring_drift(
    m: np.ndarray, n: np.ndarray, n_neurons: int, draws: int, rng: np.random.Generator
) -> np.ndarray:
    """Ring drift (degrees) of `draws` networks of `n_neurons` neurons drawn iid, with replacement, from the
    rows of (m, n) (N, 2); returns (draws,).

    This is the finite-size noise floor of a perfect sampler of that population at N' = `n_neurons`:
    the drift a sampled network shows even when the learned distribution is exactly the empirical one.
    """
    picks = [rng.integers(0, m.shape[0], size=n_neurons) for _ in range(draws)]
    return np.array([ring_drift(m[idx], n[idx]).drift_deg for idx in picks])


def gaussian_ks_p(values: np.ndarray) -> float:
    """KS p-value of a 1-D sample against the normal law with its own mean and standard deviation."""
    z = (values - values.mean()) / max(values.std(ddof=1), 1e-12)
    return float(stats.kstest(z, "norm").pvalue)


def residual_ks_p(residual: np.ndarray) -> float:
    """Smallest KS normality p-value over the principal axes of a residual sample (N, R)."""
    centred = residual - residual.mean(axis=0)
    axes = np.linalg.svd(centred, full_matrices=False)[2]
    return min(gaussian_ks_p(centred @ axis) for axis in axes)


def kurtosis(values: np.ndarray) -> float:
    """Pearson kurtosis E[(x - mu)^4] / sigma^4 of a 1-D sample (3 for a Gaussian)."""
    return float(stats.kurtosis(values, fisher=False))
