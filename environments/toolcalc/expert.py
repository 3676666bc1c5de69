"""The ToolCalc scripted expert: solves every task through the same action strings a policy emits.

It reads the calculator's results from the observation texts (it does no arithmetic of its own on tool tasks), so
its episodes are faithful demonstrations for SFT: `demonstrate` runs it through the environment and returns the
(observation, action) turns. On `compare` tasks it answers directly, as no tool helps there.
"""

from __future__ import annotations

from raygent.environments.experts import Demonstration, run_expert
from raygent.environments.toolcalc.env import ToolCalcEnv
from raygent.environments.toolcalc.grammar import format_answer, format_call, parse_result
from raygent.environments.toolcalc.tasks import TEMPLATES
from raygent.platform.contracts import Task


class ScriptedExpert:
    """A policy over observation texts: call `reset(task)` at the start of an episode, then `act(text)` per turn."""

    def __init__(self) -> None:
        self._task: Task | None = None
        self._calls = 0
        self._result: int | None = None

    def reset(self, task: Task) -> None:
        """Start an episode of `task`."""
        self._task = task
        self._calls = 0
        self._result = None

    def act(self, observation_text: str) -> str:
        """The next action string, given the latest observation text."""
        if self._task is None:
            raise RuntimeError("call reset(task) before act()")
        spec = TEMPLATES[self._task.params["template"]]
        operands = dict(zip("abc", self._task.params["operands"], strict=False))
        if self._calls > 0:
            self._result = parse_result(observation_text)
            if self._result is None:
                raise RuntimeError(f"expected a calculator result, got {observation_text!r}")
        if self._calls < len(spec.steps):
            expression = spec.steps[self._calls].format(**operands, r=self._result)
            self._calls += 1
            return format_call(expression)
        if self._result is None:
            return format_answer(spec.answer(self._task.params["operands"]))
        return format_answer(self._result)


def demonstrate(task: Task, env: ToolCalcEnv | None = None) -> Demonstration:
    """Run the scripted expert on `task` through a ToolCalc environment (a fresh default one if none is given)."""
    return run_expert(ScriptedExpert(), task, env or ToolCalcEnv())
