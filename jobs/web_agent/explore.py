"""Self-exploration of the RL app: a random clicker whose reached goals become demonstrations.

SEAgent learns a novel app from its own exploration: a curriculum proposes tasks from what the agent was seen
to do and a World State Model judges what it achieved. Here the explorer is a random clicker over the elements of the
screen the policy would see (`observation.compact`; no model) that prefers what the last click brought up
(`NOVELTY`: a menu's items after its button, a dialog's fields), and the judge is the app's own
checkers through `HindsightGoals`: every candidate goal an exploration episode reaches (and its own task, if
it is reached) becomes a demonstration — the episode's clicks so far that the app took, on their screens, cut to
the shortest suffix that still reaches the goal from the first screen (`_shortest_suffix`, checked by replay).
A goal reached in at most `PRUNE_SUFFIXES` clicks is then replayed on `transfers` other train tasks of its
template (other playlists and starting states, `_transfer`); every goal the same clicks reach there — the same one
on another screen, or another from another start ("Stop playing in random order" where shuffle was on) — is one
more demonstration. The recipe seeds the trainer's hindsight buffer with them, so the RL
stage's hindsight SFT steps (`web.replay`, `replay.py`) replay them beside the goals GRPO's own episodes reach.

Exploration episodes run on train-seed tasks of the RL app (never the held-out ones), are seeded by their task
id, and are cached like the experts' demonstrations (`demos.ensure_recorded`) under a key of their settings.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from typing import Any

from raygent.environments.web.agent.demos import Turns, cache_path, ensure_recorded, load_body
from raygent.environments.web.agent.hindsight import HindsightGoals, candidate_of
from raygent.environments.web.agent.observation import compact
from raygent.environments.web.agent.splits import TRAIN_POOL
from raygent.environments.web.env import BrowserEnv
from raygent.environments.web.observe import parse
from raygent.environments.web.registry import TaskInstance
from raygent.platform.contracts import Task

EXPLORE_VERSION = "6"
"""Part of the cache key: bump it when `explore` changes what it keeps."""
NOVELTY = 0.75
"""Chance that a click goes to an element the previous screen did not have (when there is one)."""
PRUNE_SUFFIXES = 2
"""Suffix lengths `_shortest_suffix` tries on a reached goal's clicks (one replayed episode each)."""


def explore(
    env: BrowserEnv, task: Task, goals: HindsightGoals, steps: int, transfers: int = 0
) -> list[tuple[str, str, Turns]]:
    """One exploration episode of `task`: `(task id, instruction, turns)` for every goal it reached, and for each
    goal reached from the first screen the goals its clicks reach on `transfers` other tasks (`_transfer`)."""
    rng = random.Random(task.id)
    seen: set[tuple[str, str]] = set()

    def click_something(_: int, text: str) -> str | None:
        nonlocal seen
        elements = [element for element in parse(text) if element.id is not None]
        if not elements:
            return None
        new = [element for element in elements if (element.role, element.name) not in seen]
        seen = {(element.role, element.name) for element in elements}
        pool = new if new and rng.random() < NOVELTY else elements
        return f"click({rng.choice(pool).id})"

    found = []
    for task_id, goal, turns in _episode(env, task, goals, click_something, steps):
        pruned = _shortest_suffix(env, task, goals, (task_id, goal), turns)
        found.append((task_id, goal, pruned))
        if len(pruned) <= PRUNE_SUFFIXES:  # short clicks from the first screen: worth trying on other tasks
            actions = [action for _, action in pruned]
            template = task_id.rsplit("/", 1)[0]  # `app/template` of `app/template/seed...`
            targets = [f"{template}/{rng.randrange(TRAIN_POOL)}" for _ in range(transfers)]
            found += [reached for target in targets for reached in _transfer(env, goals, task_id, actions, target)]
    return found


def _episode(
    env: BrowserEnv,
    task: Task | str,
    goals: HindsightGoals,
    choose: Callable[[int, str], str | None],
    steps: int,
    also: Sequence[TaskInstance] = (),
) -> list[tuple[str, str, Turns]]:
    """An episode of `task` (`goals` drawn for it, and `also`) whose `steps` clicks `choose(index, screen text)`
    picks (None ends it): `(task id, instruction, turns)` of every goal reached, and of the task itself if it is
    solved, with the turns up to there. A refused click changes nothing and is left out of the turns."""
    observation, _ = env.reset(options={"task": task})
    assert env.task is not None
    goals.reset(env.task, env.read_state(), also)
    own = (env.task.full_id, env.task.goal)
    turns: Turns = []
    reached: list[tuple[str, str, Turns]] = []
    for index in range(steps):
        text = compact(str(observation["text"]))
        action = choose(index, text)
        if action is None:
            break
        observation, _, terminated, truncated, info = env.step(action)
        if info.get("infra_failure"):  # the recording retries the episode
            raise RuntimeError(str(info.get("message")))
        if not observation["last_action_error"]:
            turns.append((text, action))
        now = goals.achieved(env.last_state) + ([own] if info.get("success") else [])
        reached += [(task_id, goal, list(turns)) for task_id, goal in now]
        if terminated or truncated:
            break
    return reached


def _scripted(actions: Sequence[str]) -> Callable[[int, str], str | None]:
    return lambda index, _: actions[index] if index < len(actions) else None


def _shortest_suffix(env: BrowserEnv, task: Task, goals: HindsightGoals, goal: tuple[str, str], turns: Turns) -> Turns:
    """The turns of the shortest of the last 1 … `PRUNE_SUFFIXES` clicks of `turns` that reach `goal` again when
    replayed from the task's first screen (its own screens), else `turns`.

    A random clicker's way to a goal is mostly detours (a menu opened and left, a track selected on the way);
    imitating them teaches the detours. Replaying a suffix in a fresh episode of the same task checks that the
    detours were not needed."""
    for length in range(1, min(PRUNE_SUFFIXES, len(turns) - 1) + 1):
        actions = [action for _, action in turns[-length:]]
        for task_id, reached, replayed in _episode(env, task, goals, _scripted(actions), length):
            if (task_id, reached) == goal:
                return replayed
    return turns


def _transfer(
    env: BrowserEnv, goals: HindsightGoals, goal: str, actions: Sequence[str], target: str
) -> list[tuple[str, str, Turns]]:
    """`actions` replayed from the first screen of train task `target`: every goal they reach there — `target`'s
    own, `goals` drawn for it, and `goal`'s candidate placed on its playlist.

    Exploration finds a goal on one playlist from one starting state; the held-out tasks show others. The targets
    are train tasks of the goal's template, which start in the states its other instructions are about (shuffle
    on, the sound muted, repeat on), so the same clicks there show, beside the same goal on another playlist's
    screens, what they achieve from another start ("Stop playing in random order", "bring it back")."""
    return _episode(env, target, goals, _scripted(actions), len(actions), also=[candidate_of(goal)])


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
