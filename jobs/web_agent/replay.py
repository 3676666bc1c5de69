"""Hindsight demonstrations: goals an episode achieved on the way, relabeled into imitation data.

An environment that can tell which of its goals the current state satisfies reports, per step,
`info["hindsight"]`: a JSON list of `[task id, instruction]` first achieved at that step (the web agent's
`CompactWebEnv` does, from its app's task checkers). `relabel` turns each into a demonstration: the episode's
effective turns up to and including that step (a turn whose action did not parse, or that the environment refused,
changes nothing and is dropped) under the achieved goal's instruction. `HindsightBuffer` keeps the
`per_goal` shortest distinct demonstrations of each instruction seen so far in the run (a replay buffer, saved with
the trainer's checkpoints). `HindsightReplay` is the trainer hook (`raygent.platform.rl.hooks`) that uses it: it
takes `updates` SFT steps on a seeded choice of at most `demos` of them (stratified by task family) after each GRPO
update, before the new weights are pushed, and `warmup` such steps before the first GRPO step when the buffer starts
seeded (the recipe's exploration). Its settings are the `web.replay` section of the job config.

This is hindsight experience replay (Andrychowicz et al., 2017) as self-imitation of the relabeled successes,
not as relabeled policy-gradient samples: the rollout's logprobs were computed under the original instruction,
so the relabeled turns are trained with the SFT loss, which needs none.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from raygent.environments.web.agent.hindsight import INFO_KEY, Demonstration
from raygent.platform.contracts import Task, Trajectory
from raygent.platform.rl.batch import Sample, samples_from_demonstration
from raygent.platform.rl.hooks import HookContext, TrainerHook
from raygent.platform.rl.tasks import batch_seed


def _effective(trajectory: Trajectory, index: int) -> bool:
    """Whether step `index`'s action parsed and the environment took it (the next observation has no complaint)."""
    steps = trajectory.steps
    if not steps[index].valid_action:
        return False
    return index + 1 >= len(steps) or not steps[index + 1].observation.last_action_error


def relabel(trajectories: Sequence[Trajectory]) -> list[Demonstration]:
    """(relabeled task, turns) for every goal the trajectories report achieved, in trajectory order (see the
    module docstring); the buffer decides which to keep."""
    found: list[Demonstration] = []
    for trajectory in trajectories:
        if trajectory.infra_failure:
            continue
        for index, step in enumerate(trajectory.steps):
            raw = step.info.get(INFO_KEY)
            if not raw:
                continue
            turns = [
                (s.observation.text, s.action)
                for position, s in enumerate(trajectory.steps[: index + 1])
                if position == index or _effective(trajectory, position)
            ]
            for task_id, instruction in json.loads(str(raw)):
                if instruction == trajectory.task.instruction:
                    continue  # its own goal: the task's reward already says so
                found.append((Task(id=str(task_id), env=trajectory.task.env, instruction=str(instruction)), turns))
    return found


def family(task: Task) -> str:
    """A task's family: its id up to the last "/" (the suite's ids are `app/template/seed...`)."""
    return task.id.rsplit("/", 1)[0]


class HindsightBuffer:
    """The `per_goal` shortest distinct demonstrations of each relabeled instruction seen so far.

    More than one per goal (`web.replay.per_goal`) shows the same instruction on different screens (another
    playlist, another starting state), so the policy can learn what the action depends on and what it does not;
    with one, a tiny policy ties the action to incidental details of that one screen.
    """

    def __init__(self, per_goal: int = 1) -> None:
        if per_goal < 1:
            raise ValueError(f"per_goal must be >= 1, got {per_goal}")
        self.per_goal = per_goal
        self._kept: dict[str, list[Demonstration]] = {}

    def __len__(self) -> int:
        return sum(len(kept) for kept in self._kept.values())

    def add(self, demonstrations: Sequence[Demonstration]) -> int:
        """Keep each demonstration that is new and, once a goal has `per_goal`, shorter than its longest kept one
        (which it replaces); returns how many were kept."""
        added = 0
        for task, turns in demonstrations:
            kept = self._kept.setdefault(task.instruction, [])
            if any(turns == known for _, known in kept):
                continue
            if len(kept) == self.per_goal:
                if len(turns) >= len(kept[-1][1]):
                    continue
                kept.pop()
            kept.append((task, list(turns)))
            kept.sort(key=lambda demonstration: len(demonstration[1]))  # stable: the earlier of equals first
            added += 1
        return added

    def demonstrations(self) -> list[Demonstration]:
        return [demonstration for instruction in sorted(self._kept) for demonstration in self._kept[instruction]]

    def sample(self, limit: int, seed: int) -> list[Demonstration]:
        """At most `limit` of them, a seeded choice stratified by task family (`family`): families take turns,
        so one family with many instructions (a track title per instruction) does not crowd out the rest."""
        rng = random.Random(seed)
        families: dict[str, list[Demonstration]] = {}
        for demonstration in self.demonstrations():
            families.setdefault(family(demonstration[0]), []).append(demonstration)
        queues = [rng.sample(members, len(members)) for _, members in sorted(families.items())]
        rng.shuffle(queues)
        chosen: list[Demonstration] = []
        while len(chosen) < limit and any(queues):
            for queue in queues:
                if queue and len(chosen) < limit:
                    chosen.append(queue.pop())
        return chosen

    def state(self) -> list[dict[str, Any]]:
        """JSON-serializable contents (for the trainer's checkpoint)."""
        return [{"task": task.model_dump(), "turns": turns} for task, turns in self.demonstrations()]

    def load_state(self, state: Sequence[dict[str, Any]]) -> None:
        self._kept = {}
        self.add([(Task.model_validate(item["task"]), [tuple(turn) for turn in item["turns"]]) for item in state])


class ReplaySettings(BaseModel):
    """`web.replay`: the hindsight replay hook's knobs; `demos: 0` turns it off."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    demos: int = Field(default=0, ge=0)
    """Demonstrations per replay SFT step (drawn from the buffer, stratified by family)."""
    updates: int = Field(default=1, ge=1)
    """Replay SFT steps after each GRPO update."""
    per_goal: int = Field(default=1, ge=1)
    """Distinct demonstrations the buffer keeps per goal (the shortest ones)."""
    warmup: int = Field(default=0, ge=0)
    """Replay SFT steps on the seeded buffer before the first GRPO step."""


class HindsightReplay(TrainerHook):
    """The trainer hook of hindsight replay (see the module docstring); `seed` demonstrations start the buffer."""

    def __init__(self, settings: ReplaySettings, seed: Sequence[Demonstration] = ()) -> None:
        self.settings = settings
        self.buffer = HindsightBuffer(settings.per_goal)
        self.buffer.add(seed)  # a resumed run replaces it with its checkpoint's buffer

    def on_start(self, context: HookContext) -> dict[str, float]:
        if not (self.settings.warmup and len(self.buffer)):
            return {}
        return {"hindsight/buffer": float(len(self.buffer)), **self._replay(context, 0, self.settings.warmup)}

    def after_update(self, step: int, trajectories: Sequence[Trajectory], context: HookContext) -> dict[str, float]:
        added = self.buffer.add(relabel(trajectories))
        stats = {"hindsight/new": float(added), "hindsight/buffer": float(len(self.buffer))}
        return stats | (self._replay(context, step, self.settings.updates) if len(self.buffer) else {})

    def _replay(self, context: HookContext, step: int, updates: int) -> dict[str, float]:
        """`updates` SFT steps, each on a seeded draw from the buffer; the last step's stats as `hindsight/*`."""
        stats: dict[str, float] = {}
        for update in range(updates):
            seed = batch_seed(context.seed, step, f"hindsight/{update}")
            samples: list[Sample] = []
            for task, turns in self.buffer.sample(self.settings.demos, seed):
                samples += samples_from_demonstration(context.tokenizer, context.prompt_format, task, turns)
            stats = context.learner.sft(samples)
        return {f"hindsight/{key.split('/')[-1]}": value for key, value in stats.items()}

    def state(self) -> Any:
        return self.buffer.state()

    def load_state(self, state: Any) -> None:
        self.buffer.load_state(state)
