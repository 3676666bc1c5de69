"""Scripted-expert demonstrations recorded in the browser, cached on disk by task id.

`record` runs a template's `solve` through a real `BrowserEnv` (full observation text for the solver, as the
suite's tests do) and keeps each turn as `(compact observation, action)`: what the policy would have seen and
what the expert did. The solvers' first action is a blind look (`wait()` or `hotkey("Escape")`, taken before any
observation exists); it changes nothing, so it is dropped. A task whose solver fails keeps no turns.

The cache is `<cache root>/<fingerprint>/<task id>.json`. The fingerprint hashes the sources a recording
depends on (the app's files, the shared app code, the observation format) and `RECORDING_VERSION`, so editing
an app or the compact format records again and nothing stale is read. The root is
`$RAYGENT_CACHE/web_agent/demos` (default `~/.cache/raygent/web_agent/demos`). Missing tasks are recorded by
`workers` threads, each with its own Chromium (`env.thread_browser`): the browser's waits overlap, which is what
makes recording faster on 2 cores.

`first_screens` caches the compact first screen of tasks without acting (unlabelled text, e.g. of the RL app for the
tokenizer, as SEAgent's first phase describes the app's opening screen before it trains on it).

SEAgent builds its SFT data from its own judged rollouts; here the platform's scripted experts stand in for
the judged-successful trajectories of the four known apps.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import os
import threading
import warnings
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from raygent.environments.web.agent.env import release_thread_browser, thread_browser
from raygent.environments.web.agent.observation import compact
from raygent.environments.web.env import BrowserEnv
from raygent.environments.web.registry import APPS_DIR, from_platform
from raygent.environments.web.server import ui_spec
from raygent.environments.web.task import Solver
from raygent.platform.contracts import Task
from raygent.policies.cache import cache_root as shared_cache_root

Turns = list[tuple[str, str]]
BLIND_LOOKS = ("wait()", 'hotkey("Escape")')
"""Solvers' first actions, taken before they have seen anything."""
DEFAULT_WORKERS = 3
RECORDING_VERSION = "1"
"""Part of the cache fingerprint: bump it when `record` changes what it keeps."""
RECORD_ATTEMPTS = 2
"""Tries per task; a task that fails them all is not cached (the next call tries again) and has no turns."""


def cache_root() -> Path:
    return shared_cache_root("web_agent", "demos")


@lru_cache(maxsize=16)
def fingerprint(app: str) -> str:
    """A hash of what a recording of `app` depends on (see the module docstring)."""
    digest = hashlib.sha256(RECORDING_VERSION.encode())
    sources = sorted(p for p in (APPS_DIR / app).rglob("*") if p.is_file() and p.suffix in {".py", ".js", ".html"})
    sources += sorted(p for p in (APPS_DIR / "common").rglob("*") if p.is_file() and p.suffix in {".py", ".js"})
    sources.append(Path(__file__).with_name("observation.py"))
    for path in sources:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_path(task: Task, root: Path | None = None, kind: str = "demo") -> Path:
    """Where the `kind` ("demo", "screen" or another, e.g. an exploration's) recording of `task` is cached."""
    app = str(task.params["app"])
    suffix = ".json" if kind == "demo" else f".{kind}.json"
    return (root or cache_root()) / fingerprint(app) / (task.id.replace("/", "__") + suffix)


def record(env: BrowserEnv, task: Task) -> tuple[bool, Turns]:
    """Run the task's scripted expert in `env`: (success, the turns kept; none when it failed)."""
    observation, _ = env.reset(options={"task": task})
    instance = env.task
    assert instance is not None
    solver = instance.task.solve(instance.params, ui_spec(instance.app, instance.ui_seed))
    turns: Turns = []
    try:
        info = drive(env, observation, solver, turns)
    except StopIteration:
        return False, []
    if not info.get("success"):
        return False, []
    if turns and turns[0][1] in BLIND_LOOKS:
        turns = turns[1:]
    return True, turns


def drive(env: BrowserEnv, observation: dict[str, Any], solver: Solver, turns: Turns) -> dict[str, Any]:
    """Step `env` from `observation` with a solver's actions (it is sent each full observation text) until the
    episode ends; each turn goes into `turns` as (compact observation, action) as it is taken. Returns the last
    step's info; a solver that gives up first raises `StopIteration` (the turns so far are kept)."""
    info: dict[str, Any] = {}
    action = next(solver)
    while True:
        turns.append((compact(str(observation["text"])), action))
        observation, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info
        action = solver.send(str(observation["text"]))


def load_body(path: Path) -> dict[str, Any] | None:
    """A cache file's body (None when it is missing)."""
    return json.loads(path.read_text()) if path.is_file() else None


def _load(path: Path) -> Turns | None:
    body = load_body(path)
    return None if body is None else [(str(observation), str(action)) for observation, action in body["turns"]]


def _store(path: Path, task: Task, body: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    body = {"task_id": task.id, "instruction": task.instruction, **body}
    partial.write_text(json.dumps(body, ensure_ascii=False))
    partial.replace(path)  # atomic: a reader sees the whole file or none


Take = Callable[[BrowserEnv, Task], dict[str, Any]]
"""What a recording does with one task in a fresh episode: the body of its cache file."""


def _expert(env: BrowserEnv, task: Task) -> dict[str, Any]:
    success, turns = record(env, task)
    return {"success": success, "turns": turns}


def _first_screen(env: BrowserEnv, task: Task) -> dict[str, Any]:
    """The task's first screen (compact), as a turn without an action."""
    observation, _ = env.reset(options={"task": task})
    return {"success": True, "turns": [(compact(str(observation["text"])), "")]}


TAKES: dict[str, Take] = {"demo": _expert, "screen": _first_screen}


def _record_share(tasks: Sequence[Task], root: Path, kind: str, take: Take, done: Callable[[], None]) -> None:
    """One thread's share: its own Chromium, one environment, every task in turn."""
    host = thread_browser()
    env = BrowserEnv(browser=host)
    try:
        for task in tasks:
            for attempt in range(RECORD_ATTEMPTS):
                try:
                    body = take(env, task)
                except (RuntimeError, LookupError, PlaywrightError) as error:  # a browser failure, or a broken page
                    failure = f"{type(error).__name__}: {str(error)[:200]}"
                    if attempt + 1 == RECORD_ATTEMPTS:
                        warnings.warn(f"could not record {task.id}: {failure}", stacklevel=1)
                    continue
                _store(cache_path(task, root, kind), task, body)
                break
            done()
    finally:
        env.close()
        release_thread_browser(host)


def ensure_recorded(
    tasks: Sequence[Task],
    workers: int = DEFAULT_WORKERS,
    root: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    kind: str = "demo",
    take: Take | None = None,
) -> int:
    """Record (`kind` "demo": the expert's turns; "screen": the first screen; another kind: what `take` returns)
    every task not in the cache yet, on `workers` threads; returns how many were recorded. `progress(done, total)`
    follows each recording."""
    if take is None and kind not in TAKES:
        raise ValueError(f"recording kind {kind!r} needs a `take` (built-in kinds: {sorted(TAKES)})")
    take = take or TAKES[kind]
    root = root or cache_root()
    unique = {task.id: task for task in tasks}
    missing = [task for task in unique.values() if not cache_path(task, root, kind).is_file()]
    if not missing:
        return 0
    on_threads(missing, workers, lambda share, done: _record_share(share, root, kind, take, done), progress)
    return len(missing)


def on_threads(
    tasks: Sequence[Task],
    workers: int,
    record_share: Callable[[Sequence[Task], Callable[[], None]], None],
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """`record_share(share, done)` on `workers` threads, each with every `workers`-th task (each thread makes its
    own Chromium: the browser's waits overlap); `done()` after each task calls `progress(done, total)`."""
    lock, count = threading.Lock(), [0]

    def done() -> None:
        with lock:
            count[0] += 1
            if progress is not None:
                progress(count[0], len(tasks))

    shares = [tasks[index :: max(workers, 1)] for index in range(max(workers, 1))]
    with cf.ThreadPoolExecutor(max_workers=len(shares)) as pool:
        for future in [pool.submit(record_share, share, done) for share in shares if share]:
            future.result()


def demonstrations(tasks: Sequence[Task], workers: int = DEFAULT_WORKERS, root: Path | None = None) -> list[Turns]:
    """The expert's turns for each task (recorded first when missing; none for a task its expert fails)."""
    for task in tasks:
        from_platform(task)  # a clear error for a task that is not the suite's, before any browser starts
    ensure_recorded(tasks, workers, root)
    return [_load(cache_path(task, root)) or [] for task in tasks]


def first_screens(tasks: Sequence[Task], workers: int = DEFAULT_WORKERS, root: Path | None = None) -> list[str]:
    """The compact first screen of each task (recorded first when missing)."""
    ensure_recorded(tasks, workers, root, kind="screen")
    return [turns[0][0] for task in tasks if (turns := _load(cache_path(task, root, "screen")))]


def record_pool(tasks: Sequence[Task], workers: int, console: Console) -> None:
    """Record the missing demonstrations of `tasks` up front (`ensure_recorded`), with a progress bar on `console`."""
    with Progress(
        TextColumn("[bold]demonstrations"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as progress:
        bar = progress.add_task("demonstrations", total=None)
        recorded = ensure_recorded(
            tasks, workers, progress=lambda done, total: progress.update(bar, completed=done, total=total)
        )
    console.print(f"demonstrations: {len(tasks)} tasks ({recorded} recorded now, the rest from the cache)")
