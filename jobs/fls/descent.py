"""The paper's protocol: full-batch gradient descent stopped at the first iterate whose train loss <= target.

Any model exposing `loss_and_step` (the two-layer numpy net, the deep torch net) runs through the same loop,
which caps the number of steps, records whether the target was reached, and hands out checkpoints so a long
cluster-scale trial can resume where it stopped.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol


class DescentModel(Protocol):
    """A model trained by full-batch GD on a fixed training set."""

    def loss_and_step(self, lr: float, target: float) -> float:
        """Training loss at the current weights; takes one GD step only if that loss exceeds `target`."""
        ...

    def get_state(self) -> dict[str, Any]: ...

    def set_state(self, state: dict[str, Any]) -> None: ...


@dataclass(frozen=True)
class Descent:
    """Outcome of `descend_to_target`: steps taken, the train loss at the returned weights, and whether
    that loss is <= target (False when the step cap was hit or the loss stopped being finite)."""

    steps: int
    train_loss: float
    reached_target: bool


def descend_to_target(
    model: DescentModel,
    *,
    lr: float,
    target: float,
    max_iters: int,
    start_step: int = 0,
    checkpoint_every: int = 0,
    on_checkpoint: Callable[[int, float], None] | None = None,
) -> Descent:
    """Run GD from step `start_step` until the train loss <= `target` or `max_iters` steps were taken.

    The loss is evaluated before every step, so the weights returned are those of the first iterate at or
    below the target. `on_checkpoint(step, loss)` is called every `checkpoint_every` steps (0: never), after
    the step, with the loss of the iterate before it.
    """
    step = start_step
    while True:
        # At the cap an infinite target evaluates the loss without stepping, so weights and loss match.
        loss = model.loss_and_step(lr, target if step < max_iters else math.inf)
        if loss <= target or not math.isfinite(loss) or step >= max_iters:
            return Descent(steps=step, train_loss=loss, reached_target=loss <= target)
        step += 1
        if on_checkpoint is not None and checkpoint_every > 0 and step % checkpoint_every == 0:
            on_checkpoint(step, loss)
