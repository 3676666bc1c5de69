"""Hindsight goals: which of the app's tasks an episode achieved on the way, whatever it was asked to do.

A tiny policy that has never seen the GRPO app almost never solves the task it is given (the SFT model's
sampled success on the media player is about 0.02), so GRPO's group-normalised advantage is zero for nearly every
group. But its exploring clicks do change the app: a menu item mutes the sound, cycles repeat, turns shuffle on.
`HindsightGoals` knows a set of candidate tasks for the episode — for each hindsight template, a few
train-seed parameter sets placed on the episode's own playlist (`library`) — and after every step reports the
candidates whose checker now passes and did not pass on the episode's first state: goals achieved, not goals
that were already true. `CompactWebEnv` puts them in `info["hindsight"]` (`encode`); the
trainer turns each into a demonstration of the episode's steps up to that point (the web agent's
`jobs/web_agent/replay.py`, a trainer hook).

This is hindsight experience replay (Andrychowicz et al., 2017) with the app's own checkers as the goal test. SEAgent
gets the same effect differently: its Curriculum Generator proposes new tasks from what the agent was seen to do,
judged by the World State Model; here the candidate goals are the suite's templates (no generated curriculum).
Candidates are re-drawn per episode from its task id, so a run is reproducible.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from raygent.environments.web.agent.splits import TRAIN_POOL
from raygent.environments.web.registry import TaskInstance, make_task
from raygent.platform.contracts import Task

INFO_KEY = "hindsight"
"""`info[INFO_KEY]`: `encode`d `[task id, instruction]` pairs first achieved at that step."""

Demonstration = tuple[Task, list[tuple[str, str]]]
"""A (relabeled) task and the turns `(observation text, action)` that achieve it."""


def encode(achieved: Sequence[tuple[str, str]]) -> str:
    """The `info[INFO_KEY]` value an environment reports for goals `(task id, instruction)` achieved at a step."""
    return json.dumps([list(goal) for goal in achieved], ensure_ascii=False)


class HindsightGoals:
    """Candidate goals of one episode at a time (see the module docstring)."""

    def __init__(self, templates: Sequence[str], per_template: int = 8) -> None:
        self.templates = list(templates)
        self.per_template = per_template
        self._open: list[tuple[TaskInstance, dict[str, Any]]] = []

    def reset(self, episode: TaskInstance, start: dict[str, Any] | None, also: Sequence[TaskInstance] = ()) -> None:
        """New candidates for `episode` (its task) and `also` these, placed on its playlist, keeping those its
        first state `start` does not satisfy (none when the first state could not be read)."""
        rng = random.Random(episode.full_id)
        library = episode.params.get("library")
        self._open = []
        if start is None:
            return
        drawn = [
            make_task(f"{template}/{seed}", ui_seed=episode.ui_seed)
            for template in self.templates
            for seed in rng.sample(range(TRAIN_POOL), self.per_template)
        ]
        for candidate in [*drawn, *also]:
            params = placed(candidate, library)
            if candidate.template == episode.template and params == episode.params:
                continue
            if not satisfied(candidate, params, start):
                self._open.append((candidate, params))

    def achieved(self, state: dict[str, Any] | None) -> list[tuple[str, str]]:
        """`(task id, instruction)` of every open candidate `state` satisfies; they are closed (reported once)."""
        if state is None:
            return []
        done: list[tuple[TaskInstance, dict[str, Any]]] = []
        still_open: list[tuple[TaskInstance, dict[str, Any]]] = []
        for candidate, params in self._open:
            (done if satisfied(candidate, params, state) else still_open).append((candidate, params))
        self._open = still_open
        seen: dict[str, tuple[str, str]] = {}
        for candidate, params in done:
            goal = candidate.task.goal(params)
            seen.setdefault(goal, (goal_id(candidate, params), goal))
        return list(seen.values())


def placed(candidate: TaskInstance, library: Any) -> dict[str, Any]:
    """`candidate`'s parameters on the playlist `library` (its own parameters when there is none)."""
    return {**candidate.params, "library": library} if library is not None else candidate.params


def goal_id(candidate: TaskInstance, params: dict[str, Any]) -> str:
    """The task id a goal's demonstration is relabeled with: the candidate's id and the playlist it was placed on."""
    return f"{candidate.full_id}#library={params.get('library')}"


def candidate_of(task_id: str, ui_seed: int = 0) -> TaskInstance:
    """The candidate task of a `goal_id`."""
    return make_task(task_id.split("#", 1)[0], ui_seed=ui_seed)


def satisfied(candidate: TaskInstance, params: dict[str, Any], state: dict[str, Any]) -> bool:
    """Whether app `state` passes `candidate`'s checker with `params` (its own, or placed on another playlist)."""
    reward, done, _ = candidate.task.validate(state, params)
    return bool(done) and float(reward) >= 1.0
