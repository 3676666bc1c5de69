"""The losses and terms by name: the explicit registries the learner and job configs refer to (no import-time
registration). `LOSSES` are the pure loss functions; `TERMS` the learner's loss terms built on them
(`learner.loss.terms`); `ADVANTAGE_ESTIMATORS` the built-in advantage estimators (`learner.loss.advantage`). A
plugin term or estimator is named by `"module:attr"` instead (`platform.plugins`)."""

from __future__ import annotations

from collections.abc import Callable

from raygent.platform.losses.advantages import ADVANTAGE_ESTIMATORS
from raygent.platform.losses.adversarial_imitation import adversarial_imitation_loss
from raygent.platform.losses.grpo import grpo_loss
from raygent.platform.losses.result import LossResult
from raygent.platform.losses.sft import sft_loss
from raygent.platform.losses.terms import TERMS

LOSSES: dict[str, Callable[..., LossResult]] = {
    "grpo": grpo_loss,
    "sft": sft_loss,
    "adversarial_imitation": adversarial_imitation_loss,
}

__all__ = ["ADVANTAGE_ESTIMATORS", "LOSSES", "TERMS"]
