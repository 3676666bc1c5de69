"""`JudgedExamples`: a trainer hook that keeps the latest judged training trajectories for the report.

The trainer logs every judgement (`metrics.jsonl`, stage `judge`) but keeps no trajectory; the report shows a
few whole: instruction, each step's screen (compact text) and action, the WSM's caption and label of each step,
the final screen, the verdict and the first error step. Half of the kept ones are judged successes where there
are some. Nothing is changed: the hook returns the trajectories it is given.
"""

from __future__ import annotations

from typing import Any

from raygent.platform.contracts import Trajectory
from raygent.platform.rl.hooks import TrainerHook
from raygent.rewards.seagent.wsm import screens


def describe(step: int, trajectory: Trajectory) -> dict[str, Any]:
    judgement = trajectory.judgement
    info = judgement.info if judgement is not None else {}
    texts = screens(trajectory)
    return {
        "step": step,
        "instruction": trajectory.task.instruction,
        "actions": [s.action for s in trajectory.steps],
        "screens": texts,
        "captions": list(info.get("captions") or []),
        "labels": list(judgement.step_labels or []) if judgement is not None else [],
        "success": bool(trajectory.success),
        "first_error_step": judgement.first_error_step if judgement is not None else None,
        "reason": judgement.reason if judgement is not None else "",
    }


class JudgedExamples(TrainerHook):
    def __init__(self, keep: int = 8) -> None:
        self.keep = keep
        self.kept: list[dict[str, Any]] = []

    def on_trajectories(self, step: int, trajectories: list[Trajectory]) -> list[Trajectory]:
        if self.keep:
            judged = [t for t in trajectories if not t.infra_failure and t.judgement is not None]
            wins = [t for t in judged if t.success][: (self.keep + 1) // 2]
            losses = [t for t in judged if not t.success][: self.keep - len(wins)]
            self.kept = [describe(step, t) for t in (*wins, *losses)] or self.kept
        return trajectories

    def state(self) -> Any:
        return {"kept": self.kept}

    def load_state(self, state: Any) -> None:
        self.kept = list((state or {}).get("kept", []))
