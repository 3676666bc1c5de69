"""Synthetic low-rank RNNs with known connectivity distributions, and noisy trials simulated from them.

The network is the rate model of the paper (standard lrRNN theory, Mastrogiuseppe & Ostojic 2018):

    tau dx/dt = -x + (1/N) M N^T tanh(x) + noise,    x in R^N,  M, N in R^{N x R}

so neuron i carries loadings (m_i, n_i) in R^{2R} and noise-free activity stays in span(M): x = M kappa.
The five ground truths follow the method notes ("CPU-scale experiment"; docs/studies.md); the exact
constants are our reconstruction [rec], chosen so that each case has the named qualitative dynamics:

- ``bistable``      R=1, m ~ N(0,1), n = 2.2 m: stable fixed points at +-kappa*, unstable origin.
- ``multistable``   R=2, a 4-component Gaussian mixture; components (+-1, 0) drive axis 1 and (0, +-1) drive
                    axis 2 (n = 3 m_axis e_axis): two decoupled bistable axes, so 4 stable fixed points.
- ``limit_cycle``   R=2, m ~ N(0,I), n = A m with A = [[2, -2.5], [2.5, 2]]: mean-field period 2*pi*2/2.5.
- ``ring``          R=2, m isotropic (a polar lattice of 32 angles x 16 radii, so the finite network has 32-fold
                    symmetry and a near-perfect ring), n = 2 m: a continuous ring attractor.
- ``heavy_tailed``  R=1, m ~ Student-t(3)/sqrt(3), n = 2.2 m: bistable, with a fixed-point position set by the
                    tails of p(m) (E[m tanh(m kappa)] differs from the Gaussian case at equal variance).

Every case adds a planted *spurious* residual to n: a bimodal cluster (+-1 along a random direction, plus
small Gaussian jitter) that is independent of m and then projected out of the span of the features
tanh(m_i^T kappa) over a dense kappa grid, so it is dynamically null at finite N and invisible in the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

Case = Literal["bistable", "multistable", "limit_cycle", "ring", "heavy_tailed"]
CASES: tuple[Case, ...] = ("bistable", "multistable", "limit_cycle", "ring", "heavy_tailed")
TRUE_RANK: dict[str, int] = {"bistable": 1, "multistable": 2, "limit_cycle": 2, "ring": 2, "heavy_tailed": 1}

SPURIOUS_AMPLITUDE = 1.0
SPURIOUS_JITTER = 0.15


@dataclass(frozen=True)
class GroundTruth:
    """A synthetic lrRNN. ``m``, ``n``: (N, R) loadings (``n`` includes ``spurious``, also (N, R))."""

    case: str
    m: np.ndarray
    n: np.ndarray
    spurious: np.ndarray

    @property
    def rank(self) -> int:
        return int(self.m.shape[1])

    @property
    def n_neurons(self) -> int:
        return int(self.m.shape[0])


def kappa_grid(rank: int, radius: float = 3.0, per_axis: int | None = None) -> np.ndarray:
    """A regular grid of latent states in [-radius, radius]^R; (K, R)."""
    per_axis = per_axis or {1: 41, 2: 13}.get(rank, 7)
    axes = [np.linspace(-radius, radius, per_axis)] * rank
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, rank)


def project_out_features(r: np.ndarray, m: np.ndarray, kappas: np.ndarray, rel_tol: float = 1e-3) -> np.ndarray:
    """Remove from the columns of ``r`` (N, R) their projection on span{tanh(m kappa_k)} (N, K)."""
    features = np.tanh(m @ kappas.T)
    u, s, _ = np.linalg.svd(features, full_matrices=False)
    u = u[:, s > rel_tol * s[0]]
    return r - u @ (u.T @ r)


def _signal_loadings(case: Case, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if case == "bistable":
        m = rng.standard_normal((n, 1))
        return m, 2.2 * m
    if case == "heavy_tailed":
        m = rng.standard_t(3.0, size=(n, 1)) / np.sqrt(3.0)
        return m, 2.2 * m
    if case == "multistable":
        component = rng.integers(0, 4, size=n)
        axis, sign = component // 2, np.where(component % 2 == 0, 1.0, -1.0)
        m = 0.1 * rng.standard_normal((n, 2))
        rows = np.arange(n)
        m[rows, axis] = sign + 0.5 * rng.standard_normal(n)
        nn = np.zeros((n, 2))
        nn[rows, axis] = 3.0 * m[rows, axis]
        return m, nn
    if case == "limit_cycle":
        m = rng.standard_normal((n, 2))
        a = np.array([[2.0, -2.5], [2.5, 2.0]])
        return m, m @ a.T
    if case == "ring":
        n_angles = 32
        n_radii = -(-n // n_angles)
        radii = np.sqrt(-2.0 * np.log(1.0 - (np.arange(n_radii) + 0.5) / n_radii))  # Rayleigh quantiles
        offsets = rng.uniform(0.0, 2.0 * np.pi / n_angles, size=n_radii)
        angles = 2.0 * np.pi * np.arange(n_angles)[None, :] / n_angles + offsets[:, None]
        rho = np.repeat(radii[:, None], n_angles, axis=1)
        m = np.stack([rho * np.cos(angles), rho * np.sin(angles)], axis=-1).reshape(-1, 2)
        m = m[np.sort(rng.permutation(m.shape[0])[:n])] if m.shape[0] != n else m
        return m, 2.0 * m
    raise ValueError(f"unknown case {case!r}; expected one of {CASES}")


def make_ground_truth(case: Case, n_neurons: int, rng: np.random.Generator) -> GroundTruth:
    """Draw a ground-truth lrRNN of the named case with a planted, dynamically null bimodal residual."""
    m, signal = _signal_loadings(case, n_neurons, rng)
    rank: int = m.shape[1]
    direction = rng.standard_normal(rank)
    direction /= np.linalg.norm(direction)
    sign = rng.permutation(np.resize([1.0, -1.0], n_neurons))
    spurious = SPURIOUS_AMPLITUDE * sign[:, None] * direction[None, :]
    spurious = spurious + SPURIOUS_JITTER * rng.standard_normal((n_neurons, rank))
    spurious = project_out_features(spurious, m, kappa_grid(rank))
    return GroundTruth(case=case, m=m, n=signal + spurious, spurious=spurious)


def initial_latents(case: str, rank: int, n_trials: int, rng: np.random.Generator) -> np.ndarray:
    """Initial latent states that make the trials visit the whole attractor landscape; (trials, R)."""
    if rank == 1:
        return rng.uniform(-2.0, 2.0, size=(n_trials, 1))
    if case in ("limit_cycle", "ring"):
        angle = rng.uniform(0.0, 2.0 * np.pi, size=n_trials)
        radius = rng.uniform(0.2, 2.5, size=n_trials)
        return radius[:, None] * np.stack([np.cos(angle), np.sin(angle)], axis=-1)
    return rng.uniform(-2.0, 2.0, size=(n_trials, rank))


def simulate_network(
    m: np.ndarray,
    n: np.ndarray,
    x0: np.ndarray,
    n_steps: int,
    dt: float,
    rng: np.random.Generator | None = None,
    sigma_latent: float = 0.0,
    sigma_private: float = 0.0,
) -> np.ndarray:
    """Euler-Maruyama integration of the rate network (tau = 1).

    m, n: (N, R); x0: (B, N). Latent noise enters along M (sigma_latent per unit kappa), private noise on every
    neuron. Returns x of shape (B, n_steps + 1, N), starting with x0.
    """
    n_neurons = m.shape[0]
    xs = [x0]
    x = x0
    for _ in range(n_steps):
        drift = -x + (np.tanh(x) @ n) @ m.T / n_neurons
        x = x + dt * drift
        if rng is not None and sigma_latent > 0:
            x = x + np.sqrt(dt) * sigma_latent * rng.standard_normal((x.shape[0], m.shape[1])) @ m.T
        if rng is not None and sigma_private > 0:
            x = x + np.sqrt(dt) * sigma_private * rng.standard_normal(x.shape)
        xs.append(x)
    return np.stack(xs, axis=1)


def simulate_trials(
    gt: GroundTruth,
    n_trials: int,
    n_steps: int,
    dt: float,
    rng: np.random.Generator,
    sigma_latent: float = 0.1,
    sigma_private: float = 0.2,
    sigma_obs: float = 0.1,
) -> np.ndarray:
    """Noisy recorded activity of ``gt``: (trials, n_steps + 1, N) = network state plus observation noise."""
    kappa0 = initial_latents(gt.case, gt.rank, n_trials, rng)
    x0 = kappa0 @ gt.m.T + sigma_private * rng.standard_normal((n_trials, gt.n_neurons))
    x = simulate_network(gt.m, gt.n, x0, n_steps, dt, rng, sigma_latent, sigma_private)
    return x + sigma_obs * rng.standard_normal(x.shape)
