"""The `single_turn` job's config: the agent sections, and a `single_turn` section naming the task and its reward.

    single_turn:
      tasks: my_task:tasks              # f(split, seed, n) -> list[Task]   (or prompts: [...], a list)
      reward: my_task:reward            # reward(completion, task) -> float, or (float, bool)
      success_threshold: 1.0            # success = reward >= it (when the function gives no verdict)

The environment is derived from this section (`raygent/SingleTurn-v0` around the reward, the task function or
`prompt_tasks` over the list), so `env.id`, `env.registration`, `env.tasks` and `env.kwargs` are not given;
`env.task_kwargs` (the task function's keyword arguments), `env.demonstrations` (for an SFT stage), the splits
and every other section are the RL core's (`raygent.platform.rl.settings`). Every key is checked before Ray starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, ValidationError, model_validator

from raygent.environments.single_turn import ENV_ID
from raygent.platform.config import entry_validator
from raygent.platform.rl.settings import AgentRunConfig, EnvSettings, PolicySettings, Section
from raygent.policies.prompts import PromptFormat

REGISTRATION = "raygent.environments.single_turn:register_envs"
PROMPT_TASKS = "raygent.environments.single_turn:prompt_tasks"

TaskFunctionEntry = Annotated[str, entry_validator("function", "a task function f(split, seed, n) -> list[Task]", 3)]
RewardEntry = Annotated[
    str, entry_validator("function", "a reward function reward(completion, task) -> float or (float, bool)", 2)
]
Prompt = str | dict[str, Any]
"""A prompt's text, or a mapping with `prompt` and the task's params (`raygent.environments.single_turn`)."""


class SingleTurnSettings(Section):
    """The task (`tasks` or `prompts`, exactly one) and its reward (module docstring)."""

    tasks: TaskFunctionEntry | None = None
    """`"module:attr"` of the task function `f(split, seed, n, **env.task_kwargs) -> list[Task]`."""
    prompts: list[Prompt] | None = Field(default=None, min_length=1)
    """Training prompts: each a text (the user message) or `{prompt: text, <param>: value, ...}`."""
    eval_prompts: list[Prompt] | None = Field(default=None, min_length=1)
    """Held-out prompts (with `prompts`); None: the training prompts are evaluated (the report says so)."""
    reward: RewardEntry
    success_threshold: float = 1.0
    min_gain: float = 0.0
    """The gain of held-out success the report's verdict asks for."""

    @model_validator(mode="after")
    def _one_task_source(self) -> SingleTurnSettings:
        if (self.tasks is None) == (self.prompts is None):
            raise ValueError("give exactly one of tasks ('module:attr' of a task function) or prompts (a list)")
        if self.eval_prompts is not None and self.prompts is None:
            raise ValueError("eval_prompts goes with prompts; a task function gives its own held-out split")
        for where, prompts in (("prompts", self.prompts), ("eval_prompts", self.eval_prompts)):
            for index, entry in enumerate(prompts or []):
                if isinstance(entry, dict) and not isinstance(entry.get("prompt"), str):
                    raise ValueError(f"{where}.{index}: a mapping needs a 'prompt' string, got {entry!r}")
        return self

    def source(self) -> str:
        """What the tasks are, in words (for the report)."""
        if self.tasks is not None:
            return self.tasks
        held = f"{len(self.eval_prompts)} held-out prompts" if self.eval_prompts else "held-out = the same prompts"
        assert self.prompts is not None
        return f"a list of {len(self.prompts)} prompts ({held})"


class SingleTurnEnvSettings(EnvSettings):
    """`env`, derived from `single_turn` (see the module docstring): its own keys default to the single-turn env."""

    id: str = ENV_ID
    registration: Annotated[str, entry_validator("function", "a function that registers the environment", 0)] = (
        REGISTRATION
    )
    tasks: Annotated[str, entry_validator("function", "a task source f(split, seed, n) -> list[Task]", 3)] = (
        PROMPT_TASKS
    )


class SingleTurnPolicySettings(PolicySettings):
    """`policy`, with the chat framing by default: the prompt is exactly the task's instruction."""

    prompt: PromptFormat = PromptFormat(framing="chat")


DERIVED = ("id", "registration", "tasks", "kwargs")
"""The `env` keys the `single_turn` section sets."""


class SingleTurnConfig(AgentRunConfig):
    """The sections of a `single_turn` run: `AgentRunConfig`'s, `env` derived from `single_turn`."""

    policy: SingleTurnPolicySettings = SingleTurnPolicySettings()
    env: SingleTurnEnvSettings = SingleTurnEnvSettings()
    single_turn: SingleTurnSettings

    @model_validator(mode="before")
    @classmethod
    def _env_from_single_turn(cls, data: Any) -> Any:
        if not isinstance(data, Mapping) or "single_turn" not in data:
            return data
        try:
            task = SingleTurnSettings.model_validate(data["single_turn"])
        except ValidationError:
            return data  # reported, with its key, by the field's own validation
        given = data.get("env") or {}
        env = dict(given.model_dump() if isinstance(given, EnvSettings) else given)
        default = SingleTurnEnvSettings().model_dump()
        derived = derived_env(task, env)
        for key in DERIVED:
            if key in env and env[key] not in (default[key], derived[key]):
                raise ValueError(f"env.{key}: set by the single_turn section (tasks or prompts, reward); leave it out")
        if task.prompts is not None and env.get("task_kwargs") not in (None, {}, derived["task_kwargs"]):
            raise ValueError("env.task_kwargs: a list of prompts takes no task_kwargs (they are a task function's)")
        return {**data, "env": {**env, **derived}}

    @model_validator(mode="after")
    def _sft_needs_demonstrations(self) -> SingleTurnConfig:
        if self.sft.steps > 0 and self.env.demonstrations is None:
            raise ValueError(
                f"sft.steps: {self.sft.steps} SFT steps need env.demonstrations ('module:attr' of an expert "
                "f(tasks) -> [[(observation, completion)]] per task); sft.steps=0 trains with GRPO only"
            )
        return self


def derived_env(task: SingleTurnSettings, env: Mapping[str, Any]) -> dict[str, Any]:
    """The `env` keys `task` sets (`DERIVED`, and `task_kwargs` for a list of prompts)."""
    derived: dict[str, Any] = {
        "id": ENV_ID,
        "registration": REGISTRATION,
        "tasks": task.tasks or PROMPT_TASKS,
        "kwargs": {"reward": task.reward, "success_threshold": task.success_threshold},
    }
    if task.prompts is not None:
        derived["task_kwargs"] = {
            "prompts": task.prompts,
            "eval_prompts": task.eval_prompts,
            "eval_split": env.get("eval_split", "heldout"),
        }
    return derived
