"""Task ids, task instances and the platform view of the web suite's tasks.

A task is `<app>/<template>/<seed>`: the template's parameters are drawn by `WebTask.sample` from
`random.Random("<app>/<template>/<seed>")`, so the id alone reproduces them. The UI seed (which labels and
menus the app shows, DocOS's randomization) is separate: `<app>/<template>/<seed>@<ui_seed>` names both, and
without `@` the UI seed is the caller's choice (0, the default layout, unless the environment draws one).

- `list_tasks(app=None, difficulties=None)`: the template ids `<app>/<template>` (importing the apps' task
  modules, which fill the `TASKS` registry).
- `make_task(task_id, ui_seed=None)`: a `TaskInstance` with the template, parameters, goal and limits.
- `TaskInstance.to_platform()`: the `raygent.platform.contracts.Task` the RL core schedules; its `env` is the
  gymnasium id `raygent/web-<app>-v0` and `BrowserEnv.reset(options={"task": task})` accepts it back.
  `platform_tasks(...)` builds such a list (templates × seeds) for a curriculum.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from raygent.environments.web.task import TASKS, WebTask
from raygent.platform.contracts import Task

APPS = ("code_editor", "image_editor", "word_processor", "slide_editor", "media_player")
APPS_DIR = Path(__file__).resolve().parent / "apps"


def env_id(app: str) -> str:
    """The gymnasium id of an app's environment."""
    return f"raygent/web-{app}-v0"


def available_apps() -> tuple[str, ...]:
    """The apps whose package exists on disk, in `APPS` order (others' apps may still be in progress)."""
    return tuple(app for app in APPS if (APPS_DIR / app / "__init__.py").is_file())


def load_app(app: str) -> dict[str, type[WebTask]]:
    """Import an app's package (so its `@register` decorators run) and return its templates."""
    if app not in APPS:
        raise KeyError(f"unknown app {app!r}; apps: {', '.join(APPS)}")
    importlib.import_module(f"raygent.environments.web.apps.{app}")
    return TASKS.get(app, {})


def list_tasks(app: str | None = None, difficulties: Iterable[int] | None = None) -> list[str]:
    """Template ids `<app>/<template>` of one app (or every available app), optionally of some difficulties."""
    wanted = set(difficulties) if difficulties is not None else None
    ids = []
    for name in (app,) if app else available_apps():
        for template, cls in load_app(name).items():
            if wanted is None or cls.difficulty in wanted:
                ids.append(f"{name}/{template}")
    return ids


@dataclass(frozen=True)
class TaskInstance:
    """One task: a template with parameters drawn from its seed, shown under one UI seed."""

    app: str
    template: str
    seed: int
    ui_seed: int
    task: WebTask = field(repr=False, compare=False)
    params: dict[str, Any] = field(compare=False)

    @property
    def id(self) -> str:
        """`<app>/<template>/<seed>`."""
        return f"{self.app}/{self.template}/{self.seed}"

    @property
    def full_id(self) -> str:
        """`<app>/<template>/<seed>@<ui_seed>`."""
        return f"{self.id}@{self.ui_seed}"

    @property
    def goal(self) -> str:
        return self.task.goal(self.params)

    @property
    def difficulty(self) -> int:
        return self.task.difficulty

    @property
    def max_steps(self) -> int:
        return self.task.max_steps

    def to_platform(self) -> Task:
        """The platform's `Task` for this instance (id `<app>/<template>/<seed>@<ui_seed>`)."""
        return Task(
            id=self.full_id,
            env=env_id(self.app),
            instruction=self.goal,
            difficulty=self.difficulty,
            params={
                "app": self.app,
                "template": self.template,
                "seed": self.seed,
                "ui_seed": self.ui_seed,
                "params": self.params,
            },
        )


def make_task(task_id: str, ui_seed: int | None = None) -> TaskInstance:
    """The task `<app>/<template>/<seed>[@<ui_seed>]`; an explicit `ui_seed` wins over the id's, 0 if neither."""
    base, _, ui_part = task_id.partition("@")
    parts = base.split("/")
    if len(parts) != 3 or not parts[2].lstrip("-").isdigit() or (ui_part and not ui_part.isdigit()):
        raise ValueError(f"a task id is '<app>/<template>/<seed>[@<ui_seed>]', got {task_id!r}")
    app, template, seed = parts[0], parts[1], int(parts[2])
    templates = load_app(app)
    if template not in templates:
        raise KeyError(f"no template {template!r} in {app}; templates: {', '.join(templates)}")
    chosen_ui = ui_seed if ui_seed is not None else int(ui_part) if ui_part else 0
    task = templates[template]()
    params = task.sample(random.Random(f"{app}/{template}/{seed}"))
    return TaskInstance(app=app, template=template, seed=seed, ui_seed=chosen_ui, task=task, params=params)


def from_platform(task: Task | dict[str, Any]) -> TaskInstance:
    """The instance a platform `Task` (or its dict) describes; its stored `params`, when given, are used as
    they are (a curriculum may have written them), else they are drawn from the seed."""
    task = task if isinstance(task, Task) else Task.model_validate(task)
    p = task.params
    if not {"app", "template", "seed"} <= set(p):
        raise ValueError(f"task {task.id!r} is not a web-suite task (params {sorted(p)})")
    instance = make_task(f"{p['app']}/{p['template']}/{p['seed']}", ui_seed=int(p.get("ui_seed", 0)))
    if "params" in p and p["params"] != instance.params:
        return TaskInstance(
            app=instance.app,
            template=instance.template,
            seed=instance.seed,
            ui_seed=instance.ui_seed,
            task=instance.task,
            params=dict(p["params"]),
        )
    return instance


def platform_tasks(
    app: str | None = None,
    difficulties: Iterable[int] | None = None,
    seeds: Iterable[int] = range(10),
    ui_seed: int = 0,
) -> list[Task]:
    """The platform `Task`s of every template of `app` (or every available app) at each seed, easiest first."""
    seeds = list(seeds)
    instances = [make_task(f"{tid}/{seed}", ui_seed=ui_seed) for tid in list_tasks(app, difficulties) for seed in seeds]
    return [instance.to_platform() for instance in sorted(instances, key=lambda i: i.difficulty)]
