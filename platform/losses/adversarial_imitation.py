"""SEAgent's adversarial imitation of failure actions: push the policy away from the reference on the tokens of
an action the judge marked as the first error.

    L_AI = γ · mean_t −log σ(−β·x_t) = γ · mean_t softplus(β·x_t)
    x_t  = log π_θ(a_t | s, a_<t) − log π_ref(a_t | s, a_<t)

How this reads SEAgent (from its official code `grpo_trainer.py`; docs/architecture.md, "Reward models"): the
failure action a_F
is teacher-forced, so x_t uses the per-token conditional probabilities of its tokens; with β = 1 (the code) the
term is γ · mean_t log(1 + π_θ/π_ref), γ = `neg_gamma` = 0.2. It is a positive loss added to GRPO's, so
minimizing it lowers π_θ(a_F); its gradient with respect to log π_θ is γ·β·σ(β·x_t)/N ∈ (0, γβ/N), which fades
as π_θ drops below π_ref, unlike unlikelihood or a plain +log π term, which grow without bound. The paper's
equation may carry an extra β inside the sigmoid; `beta` is that switch (β = 1 is the code's form).
Relation to NPO (Zhang et al., 2024): NPO's (2/β) log(1 + (π_θ/π_ref)^β) is sequence-level with a 2/β scale;
here the ratio is per token and averaged. `mean_t` is the chosen aggregation: with SEAgent's per-device batch
of one action both aggregations are the same number.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
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


def adversarial_imitation_loss(
    logprobs: Tensor,
    ref_logprobs: Tensor,
    loss_mask: Tensor,
    *,
    gamma: float = 0.2,
    beta: float = 1.0,
    aggregation: Aggregation = "seq-mean-token-mean",
    denominator: float | None = None,
) -> LossResult:
    """γ · aggregate(softplus(β (log π_θ − log π_ref))) over the failure-action tokens.

    Shapes: logprobs `[B, T]` (differentiable, teacher-forced failure-action tokens), ref_logprobs `[B, T]`
    (detached), loss_mask `[B, T]` (nonzero on the failure action's tokens). Stats: loss, log_ratio_ref (mean x_t),
    tokens.
    """
    check_token_shapes(loss_mask, logprobs=logprobs, ref_logprobs=ref_logprobs)
    if gamma < 0 or beta <= 0:
        raise ValueError(f"need gamma >= 0 and beta > 0, got gamma={gamma}, beta={beta}")
    logprobs = masked_fill_zero(logprobs.float(), loss_mask)
    log_ratio = logprobs - masked_fill_zero(ref_logprobs.detach().float(), loss_mask)
    loss = gamma * aggregate(F.softplus(beta * log_ratio), loss_mask, aggregation, denominator)
    with torch.no_grad():
        stats = {
            keys.LOSS: loss.detach(),
            keys.LOG_RATIO_REF: masked_mean(log_ratio, loss_mask),
            keys.TOKENS: (loss_mask != 0).sum().float(),
        }
    return LossResult(loss, stats)
