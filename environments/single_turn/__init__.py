"""Single-turn tasks: a prompt, one completion, a reward function, as TRL writes a task, as a gymnasium environment.

A task is two functions:

- a task function `f(split: str, seed: int, n: int) -> list[Task]` (or a list of prompts, `prompt_tasks`): each
  `Task.instruction` is the user message, `Task.params` whatever the reward reads (the right answer);
- a reward function `reward(completion: str, task: Task) -> float`, or `-> (float, bool)` to give the success
  verdict itself; otherwise an episode succeeds when its reward is at least `success_threshold`.

`SingleTurnEnv` is the one-step environment around the reward: `reset(options={"task": task})` starts the
episode (the first observation is empty, so with `policy.prompt.framing: chat` the prompt is exactly the
instruction), `step(completion)` scores the completion and ends the episode. The agent job `single_turn`
(`jobs/single_turn/`, `docs/single-turn.md`) wires both into the RL core. Nothing here imports Ray or torch.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, SupportsFloat

import gymnasium
from gymnasium import spaces

from raygent.environments.text import text_space
from raygent.platform.contracts import Task

ENV_ID = "raygent/SingleTurn-v0"
ENV_NAME = "single_turn"
"""`Task.env` of the tasks `prompt_tasks` makes."""
MAX_TEXT = 1 << 20
"""The observation and action spaces' text bound (completions are bounded by the sampler's tokens, not here)."""

Reward = float | tuple[float, bool]
RewardFunction = Callable[[str, Task], Reward]
Observation = dict[str, Any]


def score(reward_fn: RewardFunction, completion: str, task: Task, success_threshold: float = 1.0) -> tuple[float, bool]:
    """(reward, success) of one completion: the reward function's value, and its own verdict when it returns a
    pair, else `reward >= success_threshold`. A value that is not a finite number (or a pair of a number and a
    bool) is a `TypeError`/`ValueError` naming the function."""
    value = reward_fn(completion, task)
    verdict: bool | None = None
    if isinstance(value, tuple):
        if len(value) != 2 or not isinstance(value[1], bool):
            raise TypeError(f"reward function {_name(reward_fn)} returned {value!r}; expected a float or (float, bool)")
        value, verdict = value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"reward function {_name(reward_fn)} returned {value!r}; expected a float or (float, bool)")
    reward = float(value)
    if not math.isfinite(reward):
        raise ValueError(f"reward function {_name(reward_fn)} returned {reward}; expected a finite number")
    return reward, (reward >= success_threshold) if verdict is None else verdict


def _name(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"


def load_reward(reward: str | RewardFunction) -> RewardFunction:
    """A reward function, or the one a `"module:attr"` names."""
    if callable(reward):
        return reward
    from raygent.platform.config import load_entry

    loaded = load_entry(reward)
    if not callable(loaded):
        raise TypeError(f"{reward!r} is not a function")
    return loaded


class SingleTurnEnv(gymnasium.Env[Observation, str]):
    """One completion per episode, scored by `reward` (see the module docstring); registered as
    `raygent/SingleTurn-v0`.

    Args:
        reward: the reward function, or its `"module:attr"` (how a config names it).
        success_threshold: the reward at or above which an episode succeeds (when the function gives no verdict).
    """

    metadata = {"render_modes": []}  # noqa: RUF012 (gymnasium's class attribute)

    def __init__(self, reward: str | RewardFunction, success_threshold: float = 1.0) -> None:
        self.reward_fn = load_reward(reward)
        self.success_threshold = float(success_threshold)
        self.observation_space = spaces.Dict({"text": text_space(MAX_TEXT, min_length=0)})
        self.action_space = text_space(MAX_TEXT, min_length=0)
        self._task: Task | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict]:
        super().reset(seed=seed)
        task = (options or {}).get("task")
        if task is None:
            raise ValueError("SingleTurnEnv.reset needs options={'task': Task}: a single-turn task has no default")
        self._task = task if isinstance(task, Task) else Task.model_validate(task)
        return {"text": ""}, {"task_id": self._task.id}

    def step(self, action: str) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._task is None:
            raise RuntimeError("step() before reset(): the episode has no task")
        reward, success = score(self.reward_fn, str(action), self._task, self.success_threshold)
        self._task = None  # one step per episode
        return {"text": ""}, reward, True, False, {"success": success, "valid_action": True}


def register_envs() -> list[str]:
    """Register `SingleTurnEnv` with gymnasium (idempotent); returns the registered ids."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="raygent.environments.single_turn:SingleTurnEnv")
    return [ENV_ID]


PromptEntry = str | Mapping[str, Any]
"""A prompt of a list: its text, or a mapping with `prompt` (the text) and any other keys, which become the task's
`params` (what the reward function reads, e.g. `answer`), as a TRL dataset's extra columns reach its reward."""


def prompt_task(entry: PromptEntry, index: int, split: str) -> Task:
    """The task of one prompt entry (see `PromptEntry`); its id is `<split>:<index>`."""
    if isinstance(entry, str):
        text, params = entry, {}
    else:
        if not isinstance(entry.get("prompt"), str):
            raise ValueError(f"prompt {index} of split {split!r}: a mapping needs a 'prompt' string, got {entry!r}")
        text, params = entry["prompt"], {k: v for k, v in entry.items() if k != "prompt"}
    return Task(id=f"{split}:{index}", env=ENV_NAME, instruction=text, params=dict(params))


def prompt_tasks(
    split: str,
    seed: int,
    n: int,
    prompts: Sequence[PromptEntry] = (),
    eval_prompts: Sequence[PromptEntry] | None = None,
    eval_split: str = "heldout",
) -> list[Task]:
    """The task function of a list of prompts: split `eval_split` gives the first `n` of `eval_prompts` (each
    once, in order; the training prompts when None), any other split `n` prompts drawn with replacement from
    `prompts` by `seed`."""
    if split == eval_split:
        pool = list(prompts if eval_prompts is None else eval_prompts)
        return [prompt_task(entry, index, split) for index, entry in enumerate(pool[:n])]
    if not prompts:
        raise ValueError("prompt_tasks needs at least one prompt")
    rng = random.Random(seed)
    picks = [rng.randrange(len(prompts)) for _ in range(n)]
    return [prompt_task(prompts[index], index, split) for index in picks]


__all__ = [
    "ENV_ID",
    "ENV_NAME",
    "PromptEntry",
    "RewardFunction",
    "SingleTurnEnv",
    "load_reward",
    "prompt_task",
    "prompt_tasks",
    "register_envs",
    "score",
]
