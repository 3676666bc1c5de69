"""The clipped policy-gradient surrogate shared by PPO and GRPO, with asymmetric clip bounds.

Per token, with ratio r = π_θ / π_old and advantage A:

    loss_t = −min(r·A, clip(r, 1 − ε_low, 1 + ε_high)·A)

Written as: the token is *clipped* when A > 0 and r > 1 + ε_high, or A < 0 and r < 1 − ε_low; a clipped token's
loss is the constant −clip(r)·A (no gradient), any other token's is −r·A. This equals PPO's min form everywhere
and fixes the boundary convention: at exactly r = 1 ± ε the gradient still flows. ε_high > ε_low is DAPO's
"clip-higher" (ε_low = 0.2, ε_high = 0.28 in DAPO), which leaves more room to raise unlikely tokens.

`clipped_policy_term` is the whole policy part of both losses: masking, surrogate, importance weights,
aggregation and the shared statistics.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from raygent.platform.losses import result as keys
from raygent.platform.losses.aggregation import (
    Aggregation,
    aggregate,
    check_token_shapes,
    masked_fill_zero,
    masked_mean,
)


class Surrogate(NamedTuple):
    """Per-token pieces, all `[B, T]`: `loss` (differentiable), `ratio`, and where each clip bound was active."""

    loss: Tensor
    ratio: Tensor
    clipped_low: Tensor
    clipped_high: Tensor


def check_clip(clip_low: float, clip_high: float) -> None:
    """Raise ValueError unless 0 ≤ ε_low < 1 and ε_high ≥ 0."""
    if not 0.0 <= clip_low < 1.0:
        raise ValueError(f"clip_low must be in [0, 1), got {clip_low}")
    if not clip_high >= 0.0:
        raise ValueError(f"clip_high must be >= 0, got {clip_high}")


def clipped_surrogate(
    logprobs: Tensor, old_logprobs: Tensor, advantages: Tensor, clip_low: float, clip_high: float
) -> Surrogate:
    """The clipped surrogate per token: `[B, T]` ×3 → `Surrogate` of `[B, T]` tensors.

    `old_logprobs` and `advantages` are detached. The caller masks padding (see `aggregation.masked_fill_zero`).
    """
    check_clip(clip_low, clip_high)
    advantages = advantages.detach()
    ratio = torch.exp(logprobs - old_logprobs.detach())
    clipped_high = (advantages > 0) & (ratio > 1.0 + clip_high)
    clipped_low = (advantages < 0) & (ratio < 1.0 - clip_low)
    bound = torch.where(clipped_high, 1.0 + clip_high, 1.0 - clip_low)
    loss = -advantages * torch.where(clipped_high | clipped_low, bound.to(ratio.dtype), ratio)
    return Surrogate(loss=loss, ratio=ratio, clipped_low=clipped_low, clipped_high=clipped_high)


class PolicyTerm(NamedTuple):
    """The aggregated policy loss, the masked float32 `logprobs` it was computed from, and its stats."""

    loss: Tensor
    logprobs: Tensor
    stats: dict[str, Tensor]


def clipped_policy_term(
    logprobs: Tensor,
    old_logprobs: Tensor,
    advantages: Tensor,
    loss_mask: Tensor,
    *,
    clip_low: float,
    clip_high: float,
    aggregation: Aggregation,
    importance_weights: Tensor | None,
    denominator: float | None,
) -> PolicyTerm:
    """Mask the inputs, apply the clipped surrogate and the importance weights, aggregate. All inputs `[B, T]`.

    Stats: policy_loss, clip_fraction (= low + high), clip_fraction_low, clip_fraction_high, approx_kl (k3 of
    π_old vs π_θ: mean of (r − 1) − log r), ratio_mean, tokens, and importance_weight_mean when weights are given.
    """
    check_token_shapes(
        loss_mask,
        logprobs=logprobs,
        old_logprobs=old_logprobs,
        advantages=advantages,
        importance_weights=importance_weights,
    )
    logprobs = masked_fill_zero(logprobs.float(), loss_mask)
    old_logprobs = masked_fill_zero(old_logprobs.detach().float(), loss_mask)
    advantages = masked_fill_zero(advantages.detach().float(), loss_mask)
    surrogate = clipped_surrogate(logprobs, old_logprobs, advantages, clip_low, clip_high)
    per_token = surrogate.loss
    if importance_weights is not None:
        per_token = per_token * masked_fill_zero(importance_weights.detach().float(), loss_mask)
    loss = aggregate(per_token, loss_mask, aggregation, denominator)

    with torch.no_grad():
        log_ratio = logprobs - old_logprobs
        low = masked_mean(surrogate.clipped_low.float(), loss_mask)
        high = masked_mean(surrogate.clipped_high.float(), loss_mask)
        stats = {
            keys.POLICY_LOSS: loss.detach(),
            keys.CLIP_FRACTION: low + high,
            keys.CLIP_FRACTION_LOW: low,
            keys.CLIP_FRACTION_HIGH: high,
            keys.APPROX_KL: masked_mean(torch.expm1(log_ratio) - log_ratio, loss_mask),
            keys.RATIO_MEAN: masked_mean(surrogate.ratio, loss_mask),
            keys.TOKENS: (loss_mask != 0).sum().float(),
        }
        if importance_weights is not None:
            stats[keys.IMPORTANCE_WEIGHT_MEAN] = masked_mean(importance_weights.float(), loss_mask)
    return PolicyTerm(loss=loss, logprobs=logprobs, stats=stats)
