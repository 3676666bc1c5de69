"""The losses by name: the explicit registry the trainer and job configs refer to (no import-time registration)."""

from __future__ import annotations

from collections.abc import Callable

from raygent.platform.losses.adversarial_imitation import adversarial_imitation_loss
from raygent.platform.losses.grpo import grpo_loss
from raygent.platform.losses.ppo import ppo_loss
from raygent.platform.losses.result import LossResult
from raygent.platform.losses.sft import sft_loss

LOSSES: dict[str, Callable[..., LossResult]] = {
    "grpo": grpo_loss,
    "ppo": ppo_loss,
    "sft": sft_loss,
    "adversarial_imitation": adversarial_imitation_loss,
}
