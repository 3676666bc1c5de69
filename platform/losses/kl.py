"""Per-token estimators of KL[π_θ ‖ π_ref] from log-probabilities of sampled tokens (Schulman, "Approximating KL
Divergence", 2020).

With x sampled from q = π_θ and log r = log π_ref(x) − log π_θ(x):

- k1 = −log r                  unbiased, high variance, negative on some samples
- k2 = ½ (log r)²              biased, low variance, always ≥ 0
- k3 = (r − 1) − log r         unbiased, low variance, always ≥ 0 (DeepSeekMath's GRPO KL term)

Difference from the source: in GRPO the tokens were sampled from the behaviour policy, not from π_θ, so the
estimates are approximate off-policy; like DeepSeekMath and TRL, the estimator is used as is. All inputs and
outputs are `[B, T]`; the reference is detached, so only π_θ receives gradient.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import torch
from torch import Tensor

KLEstimator = Literal["k1", "k2", "k3"]


def kl_k1(logprobs: Tensor, ref_logprobs: Tensor) -> Tensor:
    """k1 = log π_θ − log π_ref."""
    return logprobs - ref_logprobs.detach()


def kl_k2(logprobs: Tensor, ref_logprobs: Tensor) -> Tensor:
    """k2 = ½ (log π_ref − log π_θ)²."""
    return 0.5 * (ref_logprobs.detach() - logprobs).square()


def kl_k3(logprobs: Tensor, ref_logprobs: Tensor) -> Tensor:
    """k3 = exp(log π_ref − log π_θ) − (log π_ref − log π_θ) − 1."""
    log_ratio = ref_logprobs.detach() - logprobs
    return torch.exp(log_ratio) - log_ratio - 1.0


KL_ESTIMATORS: dict[KLEstimator, Callable[[Tensor, Tensor], Tensor]] = {"k1": kl_k1, "k2": kl_k2, "k3": kl_k3}


def kl_estimate(logprobs: Tensor, ref_logprobs: Tensor, estimator: KLEstimator = "k3") -> Tensor:
    """The named estimator, per token: `[B, T]` → `[B, T]`."""
    try:
        function = KL_ESTIMATORS[estimator]
    except KeyError:
        raise ValueError(f"unknown KL estimator {estimator!r}; expected one of {sorted(KL_ESTIMATORS)}") from None
    return function(logprobs, ref_logprobs)
