"""single_turn: the generic agent job for a single-turn task, a prompt source and a reward function.

    raygent run single_turn                                     # the shipped example (one-digit sums on SmolLM2)
    raygent run my_task.yaml                                    # entry: raygent.jobs.single_turn.recipe:SingleTurn

The config's `single_turn` section names the task function (or a list of prompts) and the reward function
(`SingleTurnSettings`, below); the recipe runs them through the RL core as one-step episodes of `SingleTurnEnv`: an
optional SFT stage (`sft.steps` with `env.demonstrations`), then GRPO, with greedy success on the held-out split
before and after.
The prompt is the task's instruction as it is (`policy.prompt.framing: chat`, the default here), so SFT, GRPO,
evaluation and `raygent serve` render the same messages TRL or an OpenAI client would send. The report says what
ran (e.g. "GRPO only, no SFT"), on which tasks, with which reward and success threshold.

    single_turn:
      tasks: my_task:tasks              # f(split, seed, n) -> list[Task]   (or prompts: [...], a list)
      reward: my_task:reward            # reward(completion, task) -> float, or (float, bool)
      success_threshold: 1.0            # success = reward >= it (when the function gives no verdict)

The environment is derived from this section (`raygent/SingleTurn-v0` around the reward, the task function or
`prompt_tasks` over the list), so `env.id`, `env.registration`, `env.tasks` and `env.kwargs` are not given;
`env.task_kwargs` (the task function's keyword arguments), `env.demonstrations` (for an SFT stage), the splits
and every other section are the RL core's (`raygent.platform.rl.settings`). Every key is checked before Ray starts.

`policy.model` is a checkpoint or a pretrained preset (`smollm2-135m-instruct`); unset, a tiny model of
`policy.preset` is built with a tokenizer trained on the tasks' text (the tests' setting).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, ValidationError, model_validator
from rich.console import Console

from raygent.environments.single_turn import ENV_ID
from raygent.platform.config import JobConfig, entry_validator, load_entry
from raygent.platform.rl.recipe import AgentRecipe, Setup, Trained
from raygent.platform.rl.settings import AgentRunConfig, EnvSettings, PolicySettings, Section
from raygent.platform.rl.tasks import heldout_seed
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


TOKENIZER_TASKS = 512
"""Training tasks whose text (with the held-out ones) trains the tokenizer of a tiny model built from scratch."""


def stages(config: SingleTurnConfig) -> str:
    """What the run trains, in words: "GRPO only, no SFT", "SFT (20 steps), then GRPO (12 steps)", ..."""
    sft, rl = config.sft.steps, config.trainer.steps
    if sft and rl:
        return f"SFT ({sft} steps), then GRPO ({rl} steps)"
    if sft:
        return f"SFT only ({sft} steps), no GRPO"
    if rl:
        return f"GRPO only ({rl} steps), no SFT"
    return "no training (evaluation only)"


def tokenizer_text(config: SingleTurnConfig) -> list[str]:
    """The tasks' instructions, for the tokenizer of a tiny model built from scratch."""
    env = config.env
    task_fn = load_entry(env.tasks)
    seed = config.trainer.seed
    tasks = task_fn(env.train_split, seed, TOKENIZER_TASKS, **env.task_kwargs)
    tasks += task_fn(env.eval_split, heldout_seed(seed), max(config.trainer.eval_tasks, 1), **env.task_kwargs)
    return [task.instruction for task in tasks]


class SingleTurn(AgentRecipe):
    name = "single_turn"
    summary = "GRPO (optionally after SFT) on a single-turn task: a prompt source and a reward function by module:attr"
    claim = "held-out greedy success rises by >= single_turn.min_gain"
    config_model = SingleTurnConfig
    examples_kept = (3, 1)

    def prepare(self, agent: Any, run_dir: Path, console: Console) -> Setup:
        return Setup(tokenizer_text=tokenizer_text(agent) if agent.policy.model is None else [])

    def report(
        self, config: JobConfig, agent: Any, run_dir: Path, trained: Trained, console: Console
    ) -> dict[str, Any]:
        task = agent.single_turn
        ran = stages(agent)
        before, after = float(trained.result["eval/before"]), float(trained.result["eval/after"])
        evaluated = agent.trainer.eval_tasks > 0
        held_out = (
            f"{agent.trainer.eval_tasks} tasks of split {agent.env.eval_split!r}"
            if evaluated
            else "none (trainer.eval_tasks=0)"
        )
        if task.prompts is not None and task.eval_prompts is None and evaluated:
            held_out += " (no eval_prompts: the training prompts)"
        claim = (
            f"{ran}: held-out greedy success (reward >= {task.success_threshold:g}) rises by >= {task.min_gain:g}"
            f" from the model as {'SFT left it' if agent.sft.steps else 'it started'}"
        )
        summary = self.write(
            config,
            agent,
            run_dir,
            trained,
            claim=claim,
            min_gain=task.min_gain,
            extra={
                "run": ran,
                "sft_steps": agent.sft.steps,
                "grpo_steps": agent.trainer.steps,
                "tasks": task.source(),
                "reward": task.reward,
                "success_threshold": task.success_threshold,
                "held_out": held_out,
                "model": agent.policy.model or f"{agent.policy.preset} (built from scratch)",
                "framing": agent.policy.prompt.framing,
                "prompts_per_step": agent.rollout.groups_per_step,
                "group_size": agent.rollout.group_size,
            },
        )
        if evaluated and not (math.isnan(before) or math.isnan(after)):
            console.print(
                f"{ran}: held-out greedy success {before:.3f} → {after:.3f} (gain {after - before:+.3f} on {held_out})"
            )
        else:
            console.print(f"{ran}: no held-out evaluation (trainer.eval_tasks=0)")
        return summary
