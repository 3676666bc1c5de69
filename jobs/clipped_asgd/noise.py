"""Sub-Weibull(θ) gradient noise and the noisy gradient oracle the workers call.

Sub-Weibull(θ): P(|ξ| ≥ t) ≤ 2·exp(−(t/K)^{1/θ}); θ = ½ is sub-Gaussian, θ = 1 sub-exponential, θ > 1
heavier. Sampled as ξ = K·sign(z)·|z|^{2θ} with z ~ N(0, 1), coordinate-wise (the method notes' recipe):
symmetric, so E ξ = 0 and the oracle stays unbiased. Reconstruction [rec]: the paper states the noise as an
assumption on the oracle; adding it coordinate-wise to the exact gradient is our choice of oracle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from raygent.jobs.clipped_asgd.objective import Objective


def sub_weibull(rng: np.random.Generator, size: int | tuple[int, ...], theta: float, scale: float) -> np.ndarray:
    """Samples K·sign(z)·|z|^{2θ}, z ~ N(0, 1) iid, of shape `size`; θ > 0, K = `scale` ≥ 0."""
    if theta <= 0:
        raise ValueError(f"sub-Weibull tail parameter theta must be > 0, got {theta}")
    z = rng.standard_normal(size)
    return scale * np.sign(z) * np.abs(z) ** (2.0 * theta)


@dataclass(frozen=True)
class NoisyGradient:
    """The picklable oracle `grad_fn(x, rng) -> g = ∇f(x) + ξ`, ξ ∈ R^d sub-Weibull(θ) with scale K."""

    objective: Objective
    theta: float
    scale: float

    def __call__(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.objective.grad(x) + sub_weibull(rng, x.shape, self.theta, self.scale)
