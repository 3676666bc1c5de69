"""FactGuardEnv: one synthetic video per episode; the agent checks its claim and gives a verdict.

The first observation is the video's transcript and length (the claim is the task instruction); it does not show
the frames' forensic flags or any fact-check. Each turn the agent sends one action (`tools.py`): `analyze_clip(S, E)`
and `retrieve(QUERY)` answer with the tool's text as the next observation (reward 0; per-episode budgets),
`verdict(real|fake, C)` ends the episode with reward 1.0 when the label is right and 0.0 otherwise (the outcome;
the decision-aware reward model in `rewards/factguard/decision_aware.py` judges the whole trajectory instead).
An unparsable action returns an `error: ...` observation and uses a turn; `max_turns` actions without a verdict
truncate the episode (reward 0).

Tool calls are environment steps here, in process, so the environment is complete on its own (gymnasium users,
the scripted expert, tests). In a training run the agent loop (`jobs/factguard/loop.py`) answers them first,
agent-side, through the tool actors; this environment then only ever sees the verdict.

`info`: `valid_action`, `tool_calls` (by tool), `refused_calls`, `kind`, and on the final step `success`,
`verdict`, `confidence` (None when truncated) and `label`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, SupportsFloat

import gymnasium
from gymnasium import spaces
from pydantic import BaseModel, ConfigDict, Field, field_validator

from raygent.environments.factguard.tools import (
    DEFAULT_BUDGETS,
    ActionError,
    EpisodeTools,
    LocalTools,
    ToolCall,
    check_budgets,
    parse_action,
)
from raygent.environments.factguard.world import ENV_ID
from raygent.environments.text import text_space
from raygent.platform.contracts import Task

DEFAULT_MAX_TURNS = 4
MAX_TEXT = 256
DONE_TEXT = "done"

Observation = dict[str, Any]


def first_observation(task: Task) -> str:
    """What the agent sees of the video before any tool: its transcript and its length."""
    return f"transcript: {task.params['transcript']}. video: {len(task.params['frames'])} seconds"


class FactGuardEnv(gymnasium.Env[Observation, str]):
    """The FactGuard environment (module docstring); registered as `raygent/FactGuard-v0`.

    Args:
        max_turns: actions allowed per episode (tool calls and the verdict).
        budgets: calls allowed per tool and episode (`analyze_clip`, `retrieve`; default 2 each).
    """

    metadata = {"render_modes": [], "render_fps": 1}  # noqa: RUF012 (gymnasium's class attribute)

    class Settings(BaseModel):
        """`env.kwargs`, checked when the config is (`platform.rl.settings.EnvSettings`)."""

        model_config = ConfigDict(frozen=True, extra="forbid")

        max_turns: int = Field(default=DEFAULT_MAX_TURNS, ge=1, strict=True)
        budgets: dict[str, int] | None = None

        @field_validator("budgets")
        @classmethod
        def _budgets(cls, value: dict[str, int] | None) -> dict[str, int] | None:
            try:
                return None if value is None else check_budgets(value)
            except ValueError as exc:  # its message names `budgets:` already
                raise ValueError(str(exc).removeprefix("budgets: ")) from None

    def __init__(self, max_turns: int = DEFAULT_MAX_TURNS, budgets: Mapping[str, int] | None = None) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {max_turns}")
        self.max_turns = max_turns
        self.budgets = check_budgets(budgets or DEFAULT_BUDGETS)
        self.observation_space = spaces.Dict(
            {
                "text": text_space(MAX_TEXT, min_length=1),
                "turn": spaces.Discrete(max_turns + 1),
                "last_action_error": text_space(MAX_TEXT, min_length=0),
            }
        )
        self.action_space = text_space(MAX_TEXT, min_length=1)
        self._local: dict[int, LocalTools] = {}
        self._task: Task | None = None
        self._tools: EpisodeTools | None = None
        self._turn = 0
        self._invalid = 0
        self._done = True

    @property
    def task(self) -> Task | None:
        return self._task

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict]:
        """Start an episode of `options["task"]` (a FactGuard `Task` or its dict); without one, one train item."""
        super().reset(seed=seed)
        given = (options or {}).get("task")
        if given is None:
            from raygent.environments.factguard.tasks import factguard_tasks

            given = factguard_tasks("train", int(self.np_random.integers(2**31)), 1)[0]
        task = given if isinstance(given, Task) else Task.model_validate(given)
        if task.env != ENV_ID or task.params.get("kind") is None:
            raise ValueError(f"task {task.id!r} is not a FactGuard task (env {task.env!r})")
        world_seed = int(task.params.get("world_seed", 0))
        if world_seed not in self._local:
            self._local[world_seed] = LocalTools(world_seed)
        self._task = task
        self._tools = EpisodeTools(
            self._local[world_seed], task.params["frames"], self.budgets, bool(task.params.get("tools", True))
        )
        self._turn, self._invalid, self._done = 0, 0, False
        return self._observation(first_observation(task), ""), {"kind": task.params["kind"]}

    def _observation(self, text: str, error: str) -> Observation:
        return {"text": text[:MAX_TEXT], "turn": self._turn, "last_action_error": error[:MAX_TEXT]}

    def _info(self, valid: bool) -> dict[str, Any]:
        assert self._task is not None and self._tools is not None
        return {
            "valid_action": valid,
            "invalid_actions": self._invalid,
            "tool_calls": self._tools.total,
            "refused_calls": self._tools.refused,
            "kind": self._task.params["kind"],
        }

    def step(self, action: str) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._done or self._task is None or self._tools is None:
            raise RuntimeError("call reset() before step() (the episode is over)")
        self._turn += 1
        try:
            move = parse_action(action)
        except ActionError as refused:
            self._invalid += 1
            return self._after(self._observation(str(refused), str(refused)), valid=False)
        if isinstance(move, ToolCall):
            text = self._tools.call(move)
            return self._after(self._observation(text, text if text.startswith("error:") else ""), valid=True)
        self._done = True
        success = move.label == self._task.params["label"]
        info = {
            **self._info(True),
            "success": success,
            "verdict": move.label,
            "confidence": move.confidence,
            "label": self._task.params["label"],
        }
        return self._observation(DONE_TEXT, ""), 1.0 if success else 0.0, True, False, info

    def _after(self, observation: Observation, valid: bool) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        info = self._info(valid)
        if self._turn >= self.max_turns:
            self._done = True
            assert self._task is not None
            info.update(success=False, verdict=None, confidence=None, label=self._task.params["label"])
            return observation, 0.0, False, True, info
        return observation, 0.0, False, False, info


def register_envs() -> None:
    """Register `raygent/FactGuard-v0` with gymnasium (idempotent)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="raygent.environments.factguard.env:FactGuardEnv")
