"""Trainer hooks: a paper's feature that is neither a reward model, a task source, an agent loop nor a loss term
plugs in here (e.g. the web agent's hindsight replay, `jobs/web_agent/replay.py`).

    trainer:
      hooks:
        - {entry: "my_pkg.replay:Replay", kwargs: {updates: 4}}

A hook is a component (`platform.plugins`: its kwargs are checked against the class's `Settings`, if it declares
one), built as `cls(**kwargs)` (or handed to `AgentTrainer(hooks=...)` already built, e.g. seeded by a
recipe) and subclasses `TrainerHook`, overriding what it needs. Per RL step, in order:

    tasks = hook.on_tasks(step, tasks)                      # before the batch that trains at `step` is dispatched
    trajectories = hook.on_trajectories(step, trajectories) # after the judge stage, before the update
    stats |= hook.after_update(step, trajectories, context) # after the learner's update, before the weight push

`on_start(context)` runs once before the first RL step (after SFT); `on_eval(step, sets)` after each evaluation with
its greedy episodes by set name ("" for the held-out tasks, then `AgentTrainer(extra_evals=...)`'s names). `context`
gives the learner group (`sft`, `policy_update`), the tokenizer, the prompt format and the run's seed. A hook's
`state()` is saved in every checkpoint under its position and class name and handed back to `load_state` on resume.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from transformers import PreTrainedTokenizerBase

from raygent.platform.contracts import Task, Trajectory
from raygent.platform.plugins import Component, build
from raygent.policies.prompts import PromptFormat


@dataclass(frozen=True)
class HookContext:
    learner: Any
    """The `LearnerGroup`: `sft(samples)`, `policy_update(samples)`."""
    tokenizer: PreTrainedTokenizerBase
    prompt_format: PromptFormat
    seed: int


class TrainerHook:
    """The base class: every method does nothing."""

    def on_start(self, context: HookContext) -> dict[str, float]:
        return {}

    def on_tasks(self, step: int, tasks: list[Task]) -> list[Task]:
        return tasks

    def on_eval(self, step: int, sets: dict[str, list[Trajectory]]) -> None:
        return None

    def on_trajectories(self, step: int, trajectories: list[Trajectory]) -> list[Trajectory]:
        return trajectories

    def after_update(self, step: int, trajectories: Sequence[Trajectory], context: HookContext) -> dict[str, float]:
        return {}

    def state(self) -> Any:
        return None

    def load_state(self, state: Any) -> None:
        return None


def build_hooks(settings: Sequence[Component]) -> list[TrainerHook]:
    """The configured hooks (`trainer.hooks`), in order."""
    return [build(spec, TrainerHook) for spec in settings]


def hook_key(index: int, hook: TrainerHook) -> str:
    """The key of a hook's state in the checkpoint."""
    return f"{index}:{type(hook).__name__}"
