"""GRPO policy loss: the clipped surrogate with group-normalized advantages, an optional KL-to-reference term, a
loss mask for multi-turn agents, and optional importance weights for stale samples.

Per trained token t of sequence b:

    l_bt = w_bt · −min(r·A_b, clip(r, 1 − ε_low, 1 + ε_high)·A_b)  +  β · k(log π_θ, log π_ref)
    loss = aggregate(l, loss_mask)          token-mean | seq-mean-token-mean

Source: DeepSeekMath (Shao et al., 2024), which uses seq-mean-token-mean, a symmetric ε = 0.2, k3 with β = 0.04
and no loss mask. Differences here, each a knob: asymmetric clipping (DAPO's clip-higher); token-mean
aggregation (DAPO); KL off by default, so no reference model is needed (β = 0 ignores `ref_logprobs`); any of
k1/k2/k3 (`kl.py`); a `loss_mask` that removes environment/tool tokens, padding and truncated responses; and
truncated importance weights w (`importance.py`, AReaL's decoupled objective) that multiply the policy term, not
the KL term. With a single gradient step per batch and `old_logprobs = logprobs.detach()` the ratio is 1 and
this is TRL-0.14's (and SEAgent's) form, exp(log π − sg(log π))·A. The advantages are computed by the caller
(`advantages.py`).
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
from raygent.platform.losses.kl import KLEstimator, kl_estimate
from raygent.platform.losses.logprobs import entropy_from_logits
from raygent.platform.losses.result import LossResult
from raygent.platform.losses.surrogate import clipped_policy_term


def grpo_loss(
    logprobs: Tensor,
    old_logprobs: Tensor,
    advantages: Tensor,
    loss_mask: Tensor,
    *,
    clip_low: float = 0.2,
    clip_high: float = 0.2,
    kl_coef: float = 0.0,
    kl_estimator: KLEstimator = "k3",
    ref_logprobs: Tensor | None = None,
    aggregation: Aggregation = "token-mean",
    importance_weights: Tensor | None = None,
    logits: Tensor | None = None,
    denominator: float | None = None,
) -> LossResult:
    """The GRPO loss of a batch of responses.

    Shapes (B sequences, T response positions, V vocabulary):
        logprobs:           [B, T]  log π_θ of the sampled tokens, differentiable
        old_logprobs:       [B, T]  log π_old, the policy the ratio is taken against (the learner's weights at
                                    the start of the update, or the generation-time logprobs); detached
        advantages:         [B] (one per rollout, broadcast over its tokens) or [B, T]; detached
        loss_mask:          [B, T]  nonzero on the tokens to train (the policy's own response tokens)
        ref_logprobs:       [B, T]  log π_ref; required only when kl_coef > 0; detached
        importance_weights: [B, T]  w for stale samples (`truncated_importance_weights`); detached
        logits:             [B, T, V] optional, only for the entropy statistic
    `denominator`: see `aggregation.aggregate` (sharded batches).
    Returns the scalar loss and stats: loss, policy_loss, clip fractions (total, low, high), approx_kl (k3 of
    π_old vs π_θ), ratio_mean, tokens, and kl_ref/kl_loss when KL is on, importance_weight_mean and entropy when
    given.
    """
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(-1).expand_as(loss_mask)
    check_token_shapes(loss_mask, ref_logprobs=ref_logprobs)
    if kl_coef < 0:
        raise ValueError(f"kl_coef must be >= 0, got {kl_coef}")
    if kl_coef > 0 and ref_logprobs is None:
        raise ValueError("kl_coef > 0 needs ref_logprobs (set kl_coef = 0 to train without a reference model)")

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
    if kl_coef > 0 and ref_logprobs is not None:
        kl_per_token = kl_estimate(policy.logprobs, masked_fill_zero(ref_logprobs.float(), loss_mask), kl_estimator)
        kl_term = kl_coef * aggregate(kl_per_token, loss_mask, aggregation, denominator)
        loss = loss + kl_term
        stats[keys.KL_LOSS] = kl_term.detach()
        stats[keys.KL_REF] = masked_mean(kl_per_token.detach(), loss_mask)
    stats[keys.LOSS] = loss.detach()
    if logits is not None:
        with torch.no_grad():
            stats[keys.ENTROPY] = masked_mean(entropy_from_logits(logits), loss_mask)
    return LossResult(loss, stats)
