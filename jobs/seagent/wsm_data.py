"""Judged trajectories of the suite's apps for the World State Model: recorded in the browser, labelled by checkers.

For each task (a suite template with a checker and a scripted expert) three episodes are recorded in Chromium,
each kept as the screens (the compact observation text the agent reads, before each step and after the last) and
the actions:

- **expert**: the template's scripted solver; from it come the trajectory `expert` (all its steps, then
  `finished()`) and one `prefix` trajectory: the first k of its n steps, then `finished()` (k drawn in 1..n−1);
  the checker's verdict after step k (`info["validate"]`, every step has one) says whether it succeeded.
- **deviation**: the expert's first k steps (k drawn in 0..n−1), then one random click on an element of the
  screen that is not the expert's next action, then `finished()`.
- **random**: 1–3 random clicks, then `finished()`.

Labels: `success` is the checker's verdict at the end (never a guess); `state` is the app's state at the end
(what every checker reads), so another task's checker can label the same trajectory under its instruction
(`wsm_train.samples`' swapped done questions). `first_error` (failures only) is the
first step that leaves the expert's path: the first action that differs from the expert's at the same index, or
the `finished()` step when every action before it was the expert's (the episode stopped short). A run is
deterministic from the task and the seed, so the expert's path is the reference; this is how the apps' checkers
and experts label steps here (SEAgent labelled its WSM data with a stronger model).

`record_tasks(tasks, workers, seed)` records what is missing into the cache
(`<cache>/seagent/wsm/<app fingerprint>/<task id>.json`, one file per task and seed) and returns the
trajectories as dicts: `task_id`, `app`, `instruction`, `kind`, `screens`, `actions`, `success`, `first_error`,
`state`.
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError

from raygent.environments.web.agent.demos import BLIND_LOOKS, fingerprint, on_threads
from raygent.environments.web.agent.env import release_thread_browser, thread_browser
from raygent.environments.web.agent.observation import compact
from raygent.environments.web.env import BrowserEnv
from raygent.environments.web.server import ui_spec
from raygent.environments.web.task import verdict
from raygent.platform.contracts import Task
from raygent.policies.cache import cache_root

FINISH = "finished()"
VERSION = "2"
"""2: records carry the final `state`."""
_IDS = re.compile(r"^\[(\d+)\]", re.M)

Record = dict[str, Any]


def data_root() -> Path:
    return cache_root("seagent", "wsm")


def cache_file(task: Task, seed: int, root: Path | None = None) -> Path:
    app = str(task.params["app"])
    return (root or data_root()) / f"{fingerprint(app)}-v{VERSION}" / f"{task.id.replace('/', '__')}.{seed}.json"


def random_click(screen: str, rng: random.Random, avoid: str = "") -> str:
    """A click on a random element id of `screen`, not `avoid`; `finished()` on a screen without ids."""
    ids = [f"click({i})" for i in _IDS.findall(screen)]
    choices = [a for a in ids if a != avoid] or ids
    return rng.choice(choices) if choices else FINISH


def first_error(actions: Sequence[str], expert: Sequence[str]) -> int:
    """The first index where `actions` leave the expert's path (see the module docstring)."""
    for index, action in enumerate(actions):
        if is_finish(action) or index >= len(expert) or action != expert[index]:
            return index
    return len(actions) - 1


def is_finish(action: str) -> bool:
    return action.strip().startswith("finished")


class _Episode:
    """Steps one task in `env`, keeping compact screens and each step's checker verdict."""

    def __init__(self, env: BrowserEnv, task: Task) -> None:
        observation, _ = env.reset(options={"task": task})
        self.env = env
        self.full = str(observation["text"])
        self.screens = [compact(self.full)]
        self.actions: list[str] = []
        self.success = False
        self.over = False
        self.state: dict[str, Any] = {}

    def step(self, action: str) -> None:
        if self.over:
            return
        observation, _, terminated, truncated, info = self.env.step(action)
        if info.get("infra_failure"):
            raise RuntimeError(f"infrastructure failure: {info.get('message')}")
        self.full = str(observation["text"])
        self.actions.append(action)
        self.screens.append(compact(self.full))
        result = info.get("validate")
        self.success = verdict(result).success if result else False
        self.over = terminated or truncated

    def finish(self) -> None:
        """The closing `finished()` (the screen does not change; the verdict is the last step's) and the app's state."""
        self.actions.append(FINISH)
        self.screens.append(self.screens[-1])
        self.state = self.env.read_state()


def _expert_actions(env: BrowserEnv, task: Task) -> tuple[_Episode, list[str]]:
    episode = _Episode(env, task)
    instance = env.task
    assert instance is not None
    solver = instance.task.solve(instance.params, ui_spec(instance.app, instance.ui_seed))
    try:
        action = next(solver)
        if action in BLIND_LOOKS:  # a look before any observation: changes nothing, dropped
            action = solver.send(episode.full)
        while not episode.over:
            episode.step(action)
            if episode.over:
                break
            action = solver.send(episode.full)
    except StopIteration:
        pass
    return episode, list(episode.actions)


def _record(episode: _Episode, task: Task, kind: str, expert: Sequence[str], screens: int | None = None) -> Record:
    actions = episode.actions if screens is None else episode.actions[: screens - 1]
    kept = episode.screens if screens is None else episode.screens[:screens]
    return {
        "task_id": task.id,
        "app": task.params["app"],
        "instruction": task.instruction,
        "kind": kind,
        "screens": kept,
        "actions": actions,
        "success": bool(episode.success),
        "first_error": None if episode.success else first_error(actions, expert),
        "state": episode.state,
    }


def record_task(env: BrowserEnv, task: Task, seed: int) -> list[Record]:
    """The expert, prefix, deviation and random trajectories of `task` (see the module docstring)."""
    rng = random.Random(f"{task.id}/{seed}")
    expert_episode, expert = _expert_actions(env, task)
    if not expert_episode.success or not expert:
        raise LookupError(f"the expert did not solve {task.id}")
    records = []
    full = _Episode.__new__(_Episode)
    full.__dict__.update(expert_episode.__dict__)
    full.actions, full.screens = list(expert_episode.actions), list(expert_episode.screens)
    full.finish()
    records.append(_record(full, task, "expert", expert))
    if len(expert) > 1:  # a prefix: the verdict after its k steps is a fresh episode's (states are deterministic)
        k = rng.randint(1, len(expert) - 1)
        prefix = _Episode(env, task)
        for action in expert[:k]:
            prefix.step(action)
        prefix.finish()
        records.append(_record(prefix, task, "prefix", expert))
    k = rng.randint(0, len(expert) - 1)
    deviation = _Episode(env, task)
    for action in expert[:k]:
        deviation.step(action)
    deviation.step(random_click(deviation.screens[-1], rng, avoid=expert[k]))
    deviation.finish()
    records.append(_record(deviation, task, "deviation", expert))
    wandering = _Episode(env, task)
    for _ in range(rng.randint(1, 3)):
        wandering.step(random_click(wandering.screens[-1], rng))
        if wandering.over:
            break
    wandering.finish()
    records.append(_record(wandering, task, "random", expert))
    return records


def _share(tasks: Sequence[Task], seed: int, root: Path, done: Callable[[], None]) -> None:
    host = thread_browser()
    env = BrowserEnv(browser=host)
    try:
        for task in tasks:
            for attempt in range(2):
                try:
                    records = record_task(env, task, seed)
                except (RuntimeError, LookupError, PlaywrightError) as error:
                    if attempt == 1:
                        warnings.warn(f"could not record {task.id}: {str(error)[:200]}", stacklevel=1)
                    continue
                path = cache_file(task, seed, root)
                path.parent.mkdir(parents=True, exist_ok=True)
                partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
                partial.write_text(json.dumps(records, ensure_ascii=False))
                partial.replace(path)
                break
            done()
    finally:
        env.close()
        release_thread_browser(host)


def record_tasks(
    tasks: Sequence[Task],
    workers: int = 2,
    seed: int = 0,
    root: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Record]:
    """Record the missing tasks on `workers` threads (each its own Chromium); every task's trajectories."""
    root = root or data_root()
    missing = [t for t in {t.id: t for t in tasks}.values() if not cache_file(t, seed, root).is_file()]
    if missing:
        on_threads(missing, workers, lambda share, done: _share(share, seed, root, done), progress)
    out: list[Record] = []
    for task in tasks:
        path = cache_file(task, seed, root)
        if path.is_file():
            out.extend(json.loads(path.read_text()))
    return out
