"""PPO-clip with per-token advantages and an optional clipped value loss.

    loss = aggregate(w · −min(r·A_t, clip(r, 1 − ε_low, 1 + ε_high)·A_t))  +  c_v · aggregate(l^V)
    l^V_t = ½ · max((V_t − R_t)², (clip(V_t, V_old − ε_v, V_old + ε_v) − R_t)²)     (½ (V_t − R_t)² without ε_v)

Source: Schulman et al., 2017 (and CleanRL's `ppo.py`, whose value clipping this follows). Differences: the
entropy bonus is left to the caller; clip bounds may be asymmetric (DAPO); the aggregation and the importance
weights for stale samples are the same knobs as GRPO's. Advantages and returns (e.g. GAE) come from the caller.
"""

from __future__ import annotations

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
from raygent.platform.losses.result import LossResult
from raygent.platform.losses.surrogate import clipped_policy_term


def value_loss_per_token(
    values: Tensor, returns: Tensor, old_values: Tensor | None = None, value_clip: float | None = None
) -> tuple[Tensor, Tensor]:
    """½ (V − R)², clipped around `old_values` when `value_clip` is set: `[B, T]` → (`[B, T]` loss, bool clipped).

    `clipped` marks tokens where the clipped branch is the larger one (the value gets no gradient there).
    """
    returns = returns.detach()
    unclipped = (values - returns).square()
    if value_clip is None:
        return 0.5 * unclipped, torch.zeros_like(unclipped, dtype=torch.bool)
    if old_values is None:
        raise ValueError("value_clip needs old_values")
    old_values = old_values.detach()
    clipped_values = old_values + (values - old_values).clamp(-value_clip, value_clip)
    clipped = (clipped_values - returns).square()
    return 0.5 * torch.maximum(unclipped, clipped), clipped > unclipped


def ppo_loss(
    logprobs: Tensor,
    old_logprobs: Tensor,
    advantages: Tensor,
    loss_mask: Tensor,
    *,
    clip_low: float = 0.2,
    clip_high: float = 0.2,
    aggregation: Aggregation = "token-mean",
    importance_weights: Tensor | None = None,
    values: Tensor | None = None,
    returns: Tensor | None = None,
    old_values: Tensor | None = None,
    value_clip: float | None = None,
    value_coef: float = 0.5,
    denominator: float | None = None,
) -> LossResult:
    """The PPO-clip loss.

    Shapes: logprobs, old_logprobs, advantages, loss_mask, importance_weights, values, returns, old_values all
    `[B, T]`. `values` (differentiable) and `returns` turn the value loss on; `old_values` with `value_clip`
    clips it. Detached: old_logprobs, advantages, importance_weights, returns, old_values.
    Returns the scalar loss and stats: loss, policy_loss, clip fractions, approx_kl, ratio_mean, tokens, and
    value_loss / value_clip_fraction when the value loss is on.
    """
    check_token_shapes(loss_mask, values=values, returns=returns, old_values=old_values)
    if (values is None) != (returns is None):
        raise ValueError("the value loss needs both values and returns")
    policy = clipped_policy_term(
        logprobs,
        old_logprobs,
        advantages,
        loss_mask,
        clip_low=clip_low,
        clip_high=clip_high,
        aggregation=aggregation,
        importance_weights=importance_weights,
        denominator=denominator,
    )
    loss = policy.loss
    stats = policy.stats
    if values is not None and returns is not None:
        value_per_token, value_clipped = value_loss_per_token(
            masked_fill_zero(values.float(), loss_mask),
            masked_fill_zero(returns.float(), loss_mask),
            None if old_values is None else masked_fill_zero(old_values.float(), loss_mask),
            value_clip,
        )
        value_loss = aggregate(value_per_token, loss_mask, aggregation, denominator)
        loss = loss + value_coef * value_loss
        stats[keys.VALUE_LOSS] = value_loss.detach()
        stats[keys.VALUE_CLIP_FRACTION] = masked_mean(value_clipped.float(), loss_mask)
    stats[keys.LOSS] = loss.detach()
    return LossResult(loss, stats)
