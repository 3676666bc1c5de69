"""ToolCalc: a multi-turn text environment with a calculator tool, the proof environment of the RL core.

An episode is one arithmetic or comparison question (`tasks.py`). Each turn the agent sends one action string
(`grammar.py`): ``calc(EXPR)`` returns ``result: N`` as the next observation, ``answer(N)`` ends the episode with
reward 1.0 when the checker accepts N and 0.0 otherwise. Invalid actions (unparsable, unknown tool, non-integer
answer) and calculator errors return an ``error: ...`` observation and use up a turn; the episode is truncated with
reward 0.0 after `max_turns` actions without an answer.

Observations are dicts: ``text`` (what the model reads), ``turn`` (actions taken so far) and ``last_action_error``
(the error text of the previous action, empty when it was fine). `info` says whether the action was
``valid_action`` (a calculator error is a valid action), counts ``invalid_actions``, ``tool_calls`` and
``tool_errors`` so far and, on the final step, gives ``success`` and ``answer`` (None when truncated).

A rollout worker chooses the task with ``reset(options={"task": task})`` (a `Task` or its dict); without one, the
environment draws a task of its configured split, types and difficulties from its seeded ``np_random``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, SupportsFloat

import gymnasium
from gymnasium import spaces

from raygent.environments.toolcalc.calculator import CalcError, evaluate
from raygent.environments.toolcalc.checker import check
from raygent.environments.toolcalc.grammar import (
    CHARSET,
    ActionError,
    Answer,
    parse_action,
    render_calc_error,
    render_result,
)
from raygent.environments.toolcalc.tasks import (
    DIFFICULTY_RANGES,
    ENV_ID,
    SPLITS,
    TASK_TYPES,
    TEMPLATES,
    sample_task,
)
from raygent.platform.contracts import Task

MAX_OBSERVATION_CHARS = 128
MAX_ACTION_CHARS = 64
DEFAULT_MAX_TURNS = 4
DONE_TEXT = "done"
"""The observation text after the final answer (no policy reads it)."""

_ALLOWED = frozenset(CHARSET)

Observation = dict[str, Any]


def _clean(text: str) -> str:
    """Keep an observation text inside the observation space: foreign characters become '?', long text is cut."""
    return "".join(char if char in _ALLOWED else "?" for char in text)[:MAX_OBSERVATION_CHARS]


class ToolCalcEnv(gymnasium.Env[Observation, str]):
    """The ToolCalc environment (see the module docstring); registered as ``raygent/ToolCalc-v0``.

    Args:
        split: which split `reset` draws tasks from when not given one (`train` or `heldout`).
        task_types: the task types drawn from (`compare`, `single`, `chain`).
        difficulty: the difficulty level(s) drawn from (0, 1, 2: operand digits).
        max_turns: actions allowed per episode; a `chain` task needs 3.
        calc_max_ops: binary operations the calculator accepts per call (None: unlimited).
        tool_latency_s: seconds each calculator call waits, as a remote tool or a browser would (0: none); for
            benchmarks of rollout scheduling.
        render_mode: None or ``"ansi"`` (the transcript so far).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012 (gymnasium's class attribute)

    def __init__(
        self,
        split: str = "train",
        task_types: Sequence[str] = TASK_TYPES,
        difficulty: int | Sequence[int] = 1,
        max_turns: int = DEFAULT_MAX_TURNS,
        calc_max_ops: int | None = 1,
        tool_latency_s: float = 0.0,
        render_mode: str | None = None,
    ) -> None:
        difficulties = (difficulty,) if isinstance(difficulty, int) else tuple(difficulty)
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        if not task_types or any(task_type not in TASK_TYPES for task_type in task_types):
            raise ValueError(f"task_types must be a non-empty subset of {TASK_TYPES}, got {task_types!r}")
        if not difficulties or any(level not in DIFFICULTY_RANGES for level in difficulties):
            raise ValueError(f"difficulty must be among {sorted(DIFFICULTY_RANGES)}, got {difficulty!r}")
        if max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {max_turns}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.split = split
        self.task_types = tuple(task_types)
        self.difficulties = difficulties
        self.max_turns = max_turns
        self.calc_max_ops = calc_max_ops
        if tool_latency_s < 0:
            raise ValueError(f"tool_latency_s must be >= 0, got {tool_latency_s}")
        self.tool_latency_s = tool_latency_s
        self.render_mode = render_mode
        self.observation_space = spaces.Dict(
            {
                "text": spaces.Text(MAX_OBSERVATION_CHARS, min_length=1, charset=CHARSET),
                "turn": spaces.Discrete(max_turns + 1),
                "last_action_error": spaces.Text(MAX_OBSERVATION_CHARS, min_length=0, charset=CHARSET),
            }
        )
        self.action_space = spaces.Text(MAX_ACTION_CHARS, min_length=1, charset=CHARSET)
        self._task: Task | None = None
        self._done = True
        self._turn = 0
        self._counts = {"invalid_actions": 0, "tool_calls": 0, "tool_errors": 0}
        self._transcript: list[str] = []

    @property
    def task(self) -> Task | None:
        """The current episode's task (None before the first reset)."""
        return self._task

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict]:
        """Start an episode of ``options["task"]`` if given, else of a task drawn from the seeded generator."""
        super().reset(seed=seed)
        given = (options or {}).get("task")
        if given is None:
            rng = self.np_random
            task_type = self.task_types[int(rng.integers(len(self.task_types)))]
            level = self.difficulties[int(rng.integers(len(self.difficulties)))]
            task = sample_task(rng, task_type=task_type, difficulty=level, split=self.split)
        else:
            task = given if isinstance(given, Task) else Task.model_validate(given)
            if task.env != ENV_ID or task.params.get("template") not in TEMPLATES:
                raise ValueError(f"task {task.id!r} is not a ToolCalc task (env {task.env!r})")
        self._task = task
        self._done = False
        self._turn = 0
        self._counts = dict.fromkeys(self._counts, 0)
        self._transcript = [task.instruction]
        info = {
            "task_id": task.id,
            "task_type": task.params["task_type"],
            "split": task.params["split"],
            "difficulty": task.difficulty,
        }
        return self._observation(task.instruction, ""), info

    def step(self, action: str) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply one action string; see the module docstring for the rules."""
        if self._task is None or self._done:
            raise RuntimeError("step() called before reset() or after the episode ended")
        self._turn += 1
        reward, terminated, answer = 0.0, False, None
        error, valid = "", True
        try:
            parsed = parse_action(action if isinstance(action, str) else "")
        except ActionError as invalid:
            valid = False
            self._counts["invalid_actions"] += 1
            text = error = invalid.observation
        else:
            if isinstance(parsed, Answer):
                answer = parsed.value
                verdict = check(self._task, answer)
                reward, terminated, text = verdict.reward, True, DONE_TEXT
            else:
                self._counts["tool_calls"] += 1
                try:
                    if self.tool_latency_s:
                        time.sleep(self.tool_latency_s)
                    text = render_result(evaluate(parsed.expression, max_ops=self.calc_max_ops))
                except CalcError as refused:
                    self._counts["tool_errors"] += 1
                    text = error = render_calc_error(str(refused))
        truncated = not terminated and self._turn >= self.max_turns
        self._done = terminated or truncated
        self._transcript += [f"> {action}", text]
        info: dict[str, Any] = {"task_id": self._task.id, "valid_action": valid, **self._counts}
        if self._done:
            info["success"] = reward > 0
            info["answer"] = answer
        return self._observation(text, error), reward, terminated, truncated, info

    def render(self) -> str | None:  # type: ignore[override]
        """The transcript so far (``ansi`` mode), one line per observation or action."""
        if self.render_mode != "ansi":
            return None
        return "\n".join(self._transcript)

    def _observation(self, text: str, error: str) -> Observation:
        return {"text": _clean(text), "turn": self._turn, "last_action_error": _clean(error)}


def register_envs() -> list[str]:
    """Register the ToolCalc environment with gymnasium (idempotent); returns the registered ids.

    Afterwards ``gymnasium.make("raygent/ToolCalc-v0", split="heldout", difficulty=1)`` builds one.
    """
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="raygent.environments.toolcalc.env:ToolCalcEnv")
    return [ENV_ID]
