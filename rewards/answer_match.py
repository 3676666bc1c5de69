"""`AnswerMatch`: a rule-based reward model for tasks that carry their expected answer.

It reads only the trajectory: success iff the episode's last environment action is `answer(X)` (the form is a
setting) and X equals `task.params[answer_key]` (numbers compared as numbers); the score is 1.0 or 0.0. It judges
without the environment, so it can run as a remote judge on a cluster (`reward.entry:
raygent.rewards.answer_match:AnswerMatch`) and its agreement with the environment's own checker is logged
(`judge/agreement`). It gives no per-step labels (`first_error_step` stays None).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from raygent.platform.contracts import Judgement, Trajectory


class AnswerMatch:
    class Settings(BaseModel):
        """`reward.kwargs` of `AnswerMatch`: the task param holding the answer, and the action's regex (its
        `value` group is the answer)."""

        model_config = ConfigDict(frozen=True, extra="forbid")

        answer_key: str = "answer"
        action: str = r"answer\((?P<value>[^)]*)\)"

        @field_validator("action")
        @classmethod
        def _has_value_group(cls, value: str) -> str:
            try:
                pattern = re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a regular expression ({exc})") from None
            if "value" not in pattern.groupindex:
                raise ValueError("the pattern needs a (?P<value>...) group")
            return value

    def __init__(self, **kwargs: Any) -> None:
        settings = self.Settings(**kwargs)
        self.answer_key = settings.answer_key
        self.pattern = re.compile(settings.action)

    def judge(self, trajectories: Sequence[Trajectory]) -> list[Judgement]:
        return [self._judge(t) for t in trajectories]

    def _judge(self, trajectory: Trajectory) -> Judgement:
        expected = trajectory.task.params.get(self.answer_key)
        acted = [step for step in trajectory.steps if not step.tool_call]
        match = self.pattern.search(acted[-1].action) if acted else None
        if expected is None:
            return Judgement(score=0.0, success=False, reason=f"task has no params[{self.answer_key!r}]")
        if match is None:
            return Judgement(score=0.0, success=False, reason="no answer given")
        given = match.group("value").strip()
        ok = _same(given, expected)
        return Judgement(score=float(ok), success=ok, reason=f"answered {given}, expected {expected}")


def _same(given: str, expected: object) -> bool:
    try:
        return float(given) == float(expected)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return given == str(expected)
