"""The learning-rate schedule of one training stage: linear warm-up, then constant, linear or cosine decay.

    learner:
      lr: 0.0002
      schedule: {warmup_steps: 2, decay: cosine, min_lr_ratio: 0.1}

The learner owns one `LRSchedule` per stage (SFT, then RL): `reset_optimizer(lr, total_steps)` starts it again,
each optimizer step takes `next_lr()`, and its step count is saved with the optimizer state, so a resumed run goes
on at the learning rate it stopped at. `total_steps` is the stage's number of optimizer steps (SFT: `sft.steps`;
RL: `trainer.steps × learner.updates_per_batch`); without it a decay has nothing to decay over and the rate stays
at `lr` after the warm-up. The factor is a pure function of the step (`lr_factor`).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Decay = Literal["constant", "linear", "cosine"]


class ScheduleSettings(BaseModel):
    """`learner.schedule`: `warmup_steps` optimizer steps rising linearly to the stage's rate, then `decay` down to
    `min_lr_ratio` × the rate at the stage's last step."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    warmup_steps: int = Field(default=0, ge=0)
    decay: Decay = "constant"
    min_lr_ratio: float = Field(default=0.0, ge=0.0, le=1.0)


def lr_factor(step: int, settings: ScheduleSettings, total_steps: int | None) -> float:
    """The multiplier of the base rate for optimizer step `step` (0-based) of a stage of `total_steps` steps."""
    if step < settings.warmup_steps:
        return (step + 1) / settings.warmup_steps
    if settings.decay == "constant" or not total_steps:
        return 1.0
    span = max(total_steps - settings.warmup_steps, 1)
    progress = min(max(step - settings.warmup_steps, 0) / span, 1.0)
    shape = 1.0 - progress if settings.decay == "linear" else 0.5 * (1.0 + math.cos(math.pi * progress))
    return settings.min_lr_ratio + (1.0 - settings.min_lr_ratio) * shape


class LRSchedule:
    """A stage's schedule: `next_lr()` is the rate of the next optimizer step (and counts it)."""

    def __init__(self, lr: float, settings: ScheduleSettings, total_steps: int | None = None) -> None:
        self.lr, self.settings, self.total_steps = lr, settings, total_steps
        self.steps = 0

    def next_lr(self) -> float:
        rate = self.lr * lr_factor(self.steps, self.settings, self.total_steps)
        self.steps += 1
        return rate

    def state(self) -> dict[str, Any]:
        return {"lr": self.lr, "total_steps": self.total_steps, "steps": self.steps}

    def load_state(self, state: dict[str, Any]) -> None:
        if state:
            self.lr, self.total_steps, self.steps = float(state["lr"]), state["total_steps"], int(state["steps"])
