"""The ToolCalc checker: a pure function from a task and a final answer to a reward and a success verdict."""

from __future__ import annotations

from dataclasses import dataclass

from raygent.platform.contracts import Task


@dataclass(frozen=True)
class Verdict:
    """`reward` is 1.0 for a correct final answer and 0.0 otherwise; `success` says the same as a bool."""

    reward: float
    success: bool


def check(task: Task, answer: int | str | None) -> Verdict:
    """Judge a final answer to a ToolCalc task: exact integer match with ``task.params["answer"]``.

    `answer` is the integer from ``answer(N)``, or its text; None or unparsable text (no answer given) scores 0.

    >>> from raygent.environments.toolcalc.tasks import make_task
    >>> task = make_task("a*b+c", [37, 12, 5])
    >>> check(task, 449)
    Verdict(reward=1.0, success=True)
    >>> check(task, "448")
    Verdict(reward=0.0, success=False)
    >>> check(task, None)
    Verdict(reward=0.0, success=False)
    """
    if isinstance(answer, str):
        try:
            answer = int(answer.strip())
        except ValueError:
            answer = None
    success = answer is not None and answer == int(task.params["answer"])
    return Verdict(reward=1.0 if success else 0.0, success=success)
