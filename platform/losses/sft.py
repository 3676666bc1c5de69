"""Supervised fine-tuning: cross-entropy on demonstration tokens, token-mean over the trained tokens.

    loss = Σ_{b,t} m_bt · −log softmax(logits_bt)[y_bt] / Σ_{b,t} m_bt

The mask keeps prompt, observation and padding tokens out, so only the demonstrated responses are learned
(the usual "train on completions only"). Difference from a plain `F.cross_entropy(ignore_index=-100)`: the mask
is explicit and the reduction can be rescaled for sharded batches (`denominator`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from raygent.platform.losses import result as keys
from raygent.platform.losses.aggregation import aggregate, check_token_shapes, masked_mean
from raygent.platform.losses.result import LossResult


def sft_loss(logits: Tensor, target_ids: Tensor, loss_mask: Tensor, *, denominator: float | None = None) -> LossResult:
    """Token-mean cross-entropy.

    Shapes: logits `[B, T, V]` (already shifted: position t scores target t), target_ids `[B, T]` (int64; any value
    at masked positions, e.g. −100), loss_mask `[B, T]`. Stats: loss (= nll), token_accuracy (argmax hits), tokens.
    """
    check_token_shapes(loss_mask, target_ids=target_ids)
    if logits.dim() != 3 or logits.shape[:2] != loss_mask.shape:
        raise ValueError(f"logits must be [B, T, V] with [B, T] = {tuple(loss_mask.shape)}, got {tuple(logits.shape)}")
    # Padding logits may hold anything; zeroing them keeps NaN out of the (zero) gradient they receive.
    logits = logits.float().masked_fill((loss_mask == 0).unsqueeze(-1), 0.0)
    safe_targets = target_ids.masked_fill(loss_mask == 0, 0)
    nll = F.cross_entropy(logits.flatten(0, 1), safe_targets.flatten(), reduction="none").view(loss_mask.shape)
    loss = aggregate(nll, loss_mask, "token-mean", denominator)
    with torch.no_grad():
        hits = (logits.argmax(dim=-1) == safe_targets).float()
        stats = {
            keys.LOSS: loss.detach(),
            keys.NLL: loss.detach(),
            keys.TOKEN_ACCURACY: masked_mean(hits, loss_mask),
            keys.TOKENS: (loss_mask != 0).sum().float(),
        }
    return LossResult(loss, stats)
