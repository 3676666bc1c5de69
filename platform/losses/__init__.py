"""Losses and advantages for the learner: pure functions of `[B, T]` tensors (see `aggregation.py` for the layout).

One loss per module: `grpo`, `sft`, `adversarial_imitation`; shared pieces in `surrogate` (the clipped
objective), `kl` (k1/k2/k3), `advantages` (group-normalized advantages and sample masks), `importance`
(stale-sample weights), `logprobs` (from logits), `aggregation` (masking and reduction). `terms` wraps them as
the learner's loss terms; `LOSSES`, `TERMS` and `ADVANTAGE_ESTIMATORS` name them; `LossConfig` records every knob.
"""

from raygent.platform.losses.adversarial_imitation import adversarial_imitation_loss
from raygent.platform.losses.aggregation import Aggregation, aggregate
from raygent.platform.losses.config import LossConfig
from raygent.platform.losses.grpo import grpo_loss
from raygent.platform.losses.registry import ADVANTAGE_ESTIMATORS, LOSSES, TERMS
from raygent.platform.losses.result import LossResult
from raygent.platform.losses.sft import sft_loss

__all__ = [
    "ADVANTAGE_ESTIMATORS",
    "LOSSES",
    "TERMS",
    "Aggregation",
    "LossConfig",
    "LossResult",
    "adversarial_imitation_loss",
    "aggregate",
    "grpo_loss",
    "sft_loss",
]
