"""Self-exploration of the RL app: a random clicker whose reached goals become demonstrations.

SEAgent learns a novel app from its own exploration: a curriculum proposes tasks from what the agent was seen
to do and a World State Model judges what it achieved. Here the explorer is a random clicker over the elements of the
screen the policy would see (`observation.compact`; no model) that prefers what the last click brought up
(`NOVELTY`: a menu's items after its button, a dialog's fields), and the judge is the app's own
checkers through `HindsightGoals`: every candidate goal an exploration episode reaches (and its own task, if
it is reached) becomes a demonstration — the episode's clicks so far that the app took, on their screens, cut to
the shortest suffix that still reaches the goal from the first screen (`_shortest_suffix`, checked by replay).
A goal reached in at most `PRUNE_SUFFIXES` clicks is then replayed on `transfers` other train tasks (other
playlists and starting states, `_transfer`); where the same clicks reach the same goal there, that is one more
demonstration of it on another screen. The recipe seeds the trainer's hindsight buffer with them, so the RL
stage's hindsight SFT steps (`trainer.hindsight_demos`) replay them beside the goals GRPO's own episodes reach.

Exploration episodes run on train-seed tasks of the RL app (never the held-out ones), are seeded by their task
id, and are cached like the experts' demonstrations (`demos.ensure_recorded`) under a key of their settings.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from typing import Any

from raygent.environments.web.env import BrowserEnv
from raygent.environments.web.observe import parse
from raygent.jobs.web_agent.demos import Turns, cache_path, ensure_recorded, load_body
from raygent.jobs.web_agent.hindsight import HindsightGoals, candidate_of, goal_id, placed, satisfied
from raygent.jobs.web_agent.observation import compact
from raygent.jobs.web_agent.splits import TRAIN_POOL
from raygent.platform.contracts import Task

EXPLORE_VERSION = "4"
"""Part of the cache key: bump it when `explore` changes what it keeps."""
NOVELTY = 0.75
"""Chance that a click goes to an element the previous screen did not have (when there is one)."""
PRUNE_SUFFIXES = 2
"""Suffix lengths `_shortest_suffix` tries on a reached goal's clicks (one replayed episode each)."""


def explore(
    env: BrowserEnv, task: Task, goals: HindsightGoals, steps: int, transfers: int = 0
) -> list[tuple[str, str, Turns]]:
    """One exploration episode of `task`: `(task id, instruction, turns)` for every goal it reached, and for each
    goal reached from the first screen up to `transfers` more on other playlists (`_transfer`)."""
    rng = random.Random(task.id)
    observation = _start(env, task, goals)
    turns: Turns = []
    reached: list[tuple[str, str, Turns]] = []
    seen: set[tuple[str, str]] = set()
    for _ in range(steps):
        text = compact(str(observation["text"]))
        elements = [element for element in parse(text) if element.id is not None]
        if not elements:
            break
        new = [element for element in elements if (element.role, element.name) not in seen]
        seen = {(element.role, element.name) for element in elements}
        pool = new if new and rng.random() < NOVELTY else elements
        action = f"click({rng.choice(pool).id})"
        observation, terminated, truncated, info = _click(env, action)
        if not observation["last_action_error"]:
            turns.append((text, action))
        goals_now = goals.achieved(env.last_state)
        if info.get("success"):
            goals_now.append((task.id, task.instruction))
        reached += [(task_id, goal, list(turns)) for task_id, goal in goals_now]
        if terminated or truncated:
            break
    found = []
    for task_id, goal, turns in reached:
        if task_id == task.id:
            found.append((task_id, goal, turns))
            continue
        pruned = _shortest_suffix(env, task, goals, (task_id, goal), turns)
        found.append((task_id, goal, pruned))
        if len(pruned) <= PRUNE_SUFFIXES:  # short clicks from the first screen: worth trying on other playlists
            targets = [f"{rng.choice(goals.templates)}/{rng.randrange(TRAIN_POOL)}" for _ in range(transfers)]
            found += filter(None, (_transfer(env, task_id, [a for _, a in pruned], t) for t in targets))
    return found


def _shortest_suffix(env: BrowserEnv, task: Task, goals: HindsightGoals, goal: tuple[str, str], turns: Turns) -> Turns:
    """The turns of the shortest of the last 1 … `PRUNE_SUFFIXES` clicks of `turns` that reach `goal` again when
    replayed from the task's first screen (its own screens), else `turns`.

    A random clicker's way to a goal is mostly detours (a menu opened and left, a track selected on the way);
    imitating them teaches the detours. Replaying a suffix in a fresh episode of the same task checks that the
    detours were not needed."""
    for length in range(1, min(PRUNE_SUFFIXES, len(turns) - 1) + 1):
        replayed = _replay(env, task, goals, goal, [action for _, action in turns[-length:]])
        if replayed is not None:
            return replayed
    return turns


def _replay(
    env: BrowserEnv, task: Task, goals: HindsightGoals, goal: tuple[str, str], actions: list[str]
) -> Turns | None:
    """`actions` from the first screen of `task`; the turns up to the one that reaches `goal`, None if none does
    (or one is refused)."""
    observation = _start(env, task, goals)
    return _clicks_until(env, observation, actions, lambda state: goal in goals.achieved(state))


def _transfer(env: BrowserEnv, goal: str, actions: list[str], target: str) -> tuple[str, str, Turns] | None:
    """`actions` replayed from the first screen of train task `target`, checked against the candidate of `goal`
    placed on `target`'s playlist: its relabeled `(task id, instruction, turns)` when they reach it (and it was
    not already reached at the start), else None.

    Exploration finds a goal on one playlist; the held-out tasks show others. The same clicks on other
    playlists' screens show the policy which part of the screen its action does not depend on."""
    observation, _ = env.reset(options={"task": target})
    assert env.task is not None
    candidate = candidate_of(goal, env.task.ui_seed)
    params = placed(candidate, env.task.params.get("library"))
    if satisfied(candidate, params, env.read_state()):
        return None
    turns = _clicks_until(env, observation, actions, lambda state: satisfied(candidate, params, state))
    return (goal_id(candidate, params), candidate.task.goal(params), turns) if turns else None


def _clicks_until(
    env: BrowserEnv, observation: dict[str, Any], actions: list[str], reached: Callable[[dict[str, Any]], bool]
) -> Turns | None:
    """`actions` from `observation` until the app's state is `reached`: the turns so far, None if it never is (or
    an action is refused, or the episode ends first)."""
    turns: Turns = []
    for action in actions:
        text = compact(str(observation["text"]))
        observation, terminated, truncated, _ = _click(env, action)
        if observation["last_action_error"] or env.last_state is None:
            return None
        turns.append((text, action))
        if reached(env.last_state):
            return turns
        if terminated or truncated:
            return None
    return None


def _start(env: BrowserEnv, task: Task, goals: HindsightGoals) -> dict[str, Any]:
    """A fresh episode of `task` with `goals` drawn for it; its first observation."""
    observation, _ = env.reset(options={"task": task})
    assert env.task is not None
    goals.reset(env.task, env.read_state())
    return observation


def _click(env: BrowserEnv, action: str) -> tuple[dict[str, Any], bool, bool, dict[str, Any]]:
    """One step; a browser failure raises, so the recording retries the episode."""
    observation, _, terminated, truncated, info = env.step(action)
    if info.get("infra_failure"):
        raise RuntimeError(str(info.get("message")))
    return observation, terminated, truncated, info


def cache_kind(templates: Sequence[str], per_template: int, steps: int, transfers: int = 0) -> str:
    """The recording kind of explorations with these settings (`demos.cache_path`)."""
    settings = json.dumps([EXPLORE_VERSION, sorted(templates), per_template, steps, transfers])
    return "explore-" + hashlib.sha256(settings.encode()).hexdigest()[:12]


def explorations(
    tasks: Sequence[Task],
    templates: Sequence[str],
    per_template: int,
    steps: int,
    workers: int,
    env_id: str,
    transfers: int = 0,
) -> list[tuple[Task, Turns]]:
    """The demonstrations `explore` finds in one episode of each task (recorded first when missing)."""
    kind = cache_kind(templates, per_template, steps, transfers)

    def take(env: BrowserEnv, task: Task) -> dict[str, Any]:
        return {"demos": explore(env, task, HindsightGoals(templates, per_template), steps, transfers)}

    ensure_recorded(tasks, workers, kind=kind, take=take)
    found: list[tuple[Task, Turns]] = []
    for task in tasks:
        body = load_body(cache_path(task, kind=kind)) or {"demos": []}
        for task_id, instruction, turns in body["demos"]:
            if not turns:
                continue
            relabeled = Task(id=str(task_id), env=env_id, instruction=str(instruction))
            found.append((relabeled, [(str(text), str(action)) for text, action in turns]))
    return found
