"""A trainer hook for the resume tests (`run_killed_at_grpo_step` in `tests/conftest.py`): the first run that
reaches GRPO step `step` writes `marker` after that step's update and then blocks, so the test kills it at a known
point whatever the machine's speed (a toy GRPO step takes ~0.2 s, shorter than a poll of the metrics file). A
resumed run finds the marker and passes through."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from raygent.platform.contracts import Trajectory
from raygent.platform.rl.hooks import HookContext, TrainerHook


class PauseOnce(TrainerHook):
    def __init__(self, step: int, marker: str) -> None:
        self.step = step
        self.marker = Path(marker)

    def after_update(self, step: int, trajectories: Sequence[Trajectory], context: HookContext) -> dict[str, float]:
        if step == self.step and not self.marker.exists():
            self.marker.write_text(str(step))
            while True:  # until the test kills the run
                time.sleep(1)
        return {}
