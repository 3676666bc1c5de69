"""Apps, task ids, task instances and the platform view of the web suite's tasks.

Apps are registered (issue 17.7): `WebApp` says what an app is (its templates or the package that registers
them, its static directory or page URL, its page contract, and optionally its commands and its docs guide);
`register_app(app)` adds one in this process, and a package adds its apps for every process through the entry
point group `raygent.apps` (each entry a `WebApp`, or a function returning one or a list of them). The suite's
own apps (`builtin_apps()`, `BUILTIN_APPS`) are the entries of raygent's own `pyproject.toml` that name a package
under `apps/`, in name order; where no distribution is installed, the app packages on disk (`apps/<app>/` with a
`tasks/` package). Each app package lays out the same way: `__init__.py` (its `APP`), `tasks/{atomic,composed,long}.py`,
`expert.py` (its scripted solvers' blocks), `commands.py`, its page (`index.html`, `*.js`, `style.css`); its guide is
the `guide` its `APP` names.
`BrowserEnv(app=...)`, `raygent tasks`, the RLlib wrapper and the agent jobs take an app by name from here.

A task is `<app>/<template>/<seed>`: the template's parameters are drawn by `WebTask.sample` from
`random.Random("<app>/<template>/<seed>")`, so the id alone reproduces them. The UI seed (which labels and
menus the app shows, DocOS's randomization) is separate: `<app>/<template>/<seed>@<ui_seed>` names both, and
without `@` the UI seed is the caller's choice (0, the default layout, unless the environment draws one).

- `app_names()`, `get_app(name)`, `load_app(name)` (its templates, importing what registers them).
- `list_tasks(app=None, difficulties=None)`: the template ids `<app>/<template>` of one app (default: the
  built-in ones, `available_apps()`).
- `make_task(task_id, ui_seed=None)`: a `TaskInstance` with the template, parameters, goal and limits.
- `TaskInstance.to_platform()`: the `raygent.platform.contracts.Task` the RL core schedules; its `env` is the
  gymnasium id `raygent/web-<app>-v0` and `BrowserEnv.reset(options={"task": task})` accepts it back.
  `platform_tasks(...)` builds such a list (templates × seeds) for a curriculum.
"""

from __future__ import annotations

import importlib
import random
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from raygent.environments.web.task import SUITE_CONTRACT, TASKS, PageContract, WebTask
from raygent.platform.contracts import Task

ENTRY_POINT_GROUP = "raygent.apps"
"""The package entry point group of web apps (`[project.entry-points."raygent.apps"]` in a `pyproject.toml`)."""
APPS_DIR = Path(__file__).resolve().parent / "apps"
APPS_PACKAGE = f"{__package__}.apps"
"""The package of the suite's own apps: `APPS_PACKAGE.<app>` is one (its `APP` the entry point's target)."""


def _entry_points() -> dict[str, Any]:
    return {entry.name: entry for entry in entry_points(group=ENTRY_POINT_GROUP)}


def _on_disk(name: str) -> bool:
    """Whether `apps/<name>/` is an app package (an `__init__.py` and a `tasks/` package; `common/` is not one)."""
    return (APPS_DIR / name / "__init__.py").is_file() and (APPS_DIR / name / "tasks" / "__init__.py").is_file()


def builtin_apps() -> tuple[str, ...]:
    """The suite's own apps, in name order: the `raygent.apps` entry points whose target is a package under
    `APPS_PACKAGE` and is on disk; where no such entry point is installed (raygent used from a source tree), every
    app package on disk."""
    own = [
        name
        for name, entry in _entry_points().items()
        if entry.value.partition(":")[0] == f"{APPS_PACKAGE}.{name}" and _on_disk(name)
    ]
    if not own:
        own = [path.name for path in APPS_DIR.iterdir() if path.is_dir() and _on_disk(path.name)]
    return tuple(sorted(own))


BUILTIN_APPS = builtin_apps()
"""`builtin_apps()` when this module was imported."""
APPS = BUILTIN_APPS
"""The suite's own apps (kept under its old name)."""


class WebApp(BaseModel):
    """One app of the web suite, as registered (see the module docstring).

    Its templates come from `templates` (classes; their `app` is set to `name` when they have none) and/or
    from importing `package` (whose `@register` decorators fill `TASKS`). Its page is `url` (a path on the
    suite's server or a loopback URL; `{app}` and `{ui_seed}` are filled in) unless a task gives its own;
    `static_dir` is served at `/<name>/`. `commands` and `guide` are `"module:attr"` of the app's `Command`
    list (its `ui.json` and the expert's `UISpec`) and of its docs `Guide`; `contract` is the page contract of
    its templates that have none.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    templates: tuple[type[WebTask], ...] = ()
    package: str | None = None
    static_dir: Path | None = None
    url: str = "/{app}/index.html?seed={ui_seed}"
    contract: PageContract = SUITE_CONTRACT
    commands: str | None = Field(None, pattern=r"^[\w.]+:\w+$")
    guide: str | None = Field(None, pattern=r"^[\w.]+:\w+$")
    description: str = ""

    def page_url(self, ui_seed: int) -> str:
        """This app's page for `ui_seed` (relative to the suite's server unless absolute)."""
        return self.url.format(app=self.name, ui_seed=ui_seed)

    def describe_tasks(self, read_pages: bool = False) -> list[dict[str, Any]]:
        """One row per template: `app`, `template`, `difficulty`, an example instruction (seed 0) and
        `goal_from_page`; what `raygent tasks` prints. A template whose page holds its goal (its contract has a
        `goal` and its `goal(params)` is empty) shows its class docstring's first line and `PAGE_GOAL`, or, with
        `read_pages`, the goal its page shows at reset (task `<app>/<template>/0`, one Chromium for the app).
        The example is never empty."""
        rows = []
        env: Any = None
        try:
            for template, cls in load_app(self.name).items():
                task = cls()
                example = task.goal(task.sample(random.Random(0)))
                from_page = not example and (cls.contract or self.contract).goal is not None
                if from_page and read_pages:
                    if env is None:
                        from raygent.environments.web.env import BrowserEnv

                        env = BrowserEnv(app=self.name, reset_retries=0)
                    example = _goal_at_reset(env, f"{self.name}/{template}/0")
                if not example:
                    doc = (cls.__doc__ or "").strip().split("\n")[0].strip()
                    example = f"{doc} {PAGE_GOAL}".strip() if from_page else doc or "(no instruction)"
                rows.append(
                    {
                        "app": self.name,
                        "template": template,
                        "difficulty": cls.difficulty,
                        "example": example,
                        "goal_from_page": from_page,
                    }
                )
        finally:
            if env is not None:
                env.close()
        return rows


PAGE_GOAL = "(goal read from the page at reset)"
"""What `describe_tasks` says of a template whose page holds its goal, when it does not open the page."""


def _goal_at_reset(env: Any, task_id: str) -> str:
    """The goal `env` reads from the page of `task_id` at reset, or why it could not (never empty)."""
    try:
        observation, _ = env.reset(options={"task": task_id})
    except Exception as error:  # a listing reports a page that does not open; it does not stop
        reason = str(error).strip().splitlines()[0][:160] if str(error).strip() else type(error).__name__
        return f"{PAGE_GOAL[:-1]}; the page did not open: {reason})"
    return str(observation["goal"]).strip() or "(the page shows no goal at reset)"


def builtin_app(name: str, guide: str | None = None) -> WebApp:
    """The `WebApp` of one of the suite's own apps (served from `apps/`, so no `static_dir`): its package
    `APPS_PACKAGE.<name>`, its `commands.py`'s `COMMANDS` and its guide (default: the docs' `guides/<name>.py`)."""
    package = f"{APPS_PACKAGE}.{name}"
    return WebApp(
        name=name,
        package=package,
        commands=f"{package}.commands:COMMANDS",
        guide=guide or f"{__package__}.docs.guides.{name}:GUIDE",
    )


_REGISTERED: dict[str, WebApp] = {}
_LOCK = threading.Lock()


def register_app(app: WebApp, replace: bool = False) -> WebApp:
    """Register `app` in this process (and its `templates` in `TASKS`); a second app of the same name is an error
    unless `replace` (or unless it is equal)."""
    with _LOCK:
        known = _REGISTERED.get(app.name)
        if known is not None and known != app and not replace:
            raise ValueError(f"an app named {app.name!r} is already registered")
        if app.static_dir is not None and not app.static_dir.is_dir():
            raise ValueError(f"app {app.name!r}: static_dir {app.static_dir} is not a directory")
        templates = TASKS.setdefault(app.name, {})
        for cls in app.templates:
            if getattr(cls, "app", app.name) != app.name:
                raise ValueError(f"template {cls.__name__} belongs to app {cls.app!r}, not {app.name!r}")
            cls.app = app.name
            if templates.get(cls.template, cls) is not cls and not replace:
                raise ValueError(f"duplicate task template {app.name}/{cls.template}")
            templates[cls.template] = cls
        _REGISTERED[app.name] = app
    _forget_docs()
    return app


def _load_entry(entry: Any) -> list[WebApp]:
    value = entry.load()
    value = value() if callable(value) and not isinstance(value, WebApp) else value
    found = [value] if isinstance(value, WebApp) else list(value) if isinstance(value, list | tuple) else []
    if not found or not all(isinstance(app, WebApp) for app in found):
        raise TypeError(f"entry point {entry.name} = {entry.value} ({ENTRY_POINT_GROUP}) gives no WebApp")
    return found


def app_names() -> tuple[str, ...]:
    """The apps known now: the suite's own, then the other entry points', then those registered here."""
    names = list(available_apps())
    names += [name for name in _entry_points() if name not in names]
    names += [name for name in _REGISTERED if name not in names]
    return tuple(names)


def available_apps() -> tuple[str, ...]:
    """The suite's own apps (`BUILTIN_APPS`, those still on disk): the default pool of `BrowserEnv(app=None)`,
    `list_tasks()` and the agent jobs (others are taken by name)."""
    return tuple(app for app in BUILTIN_APPS if _on_disk(app))


def env_id(app: str) -> str:
    """The gymnasium id of an app's environment."""
    return f"raygent/web-{app}-v0"


def get_app(name: str) -> WebApp:
    """The app called `name`: registered here, else an entry point's, else a built-in one (`KeyError` if none)."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    entry = _entry_points().get(name)
    if entry is not None:
        for app in _load_entry(entry):
            register_app(app)
        if name in _REGISTERED:
            return _REGISTERED[name]
    if name in available_apps():
        return register_app(importlib.import_module(f"{APPS_PACKAGE}.{name}").APP)
    raise KeyError(f"unknown app {name!r}; apps: {', '.join(app_names())}")


def load_app(app: str) -> dict[str, type[WebTask]]:
    """An app's templates, importing its `package` first (so its `@register` decorators run)."""
    registered = get_app(app)
    if registered.package:
        importlib.import_module(registered.package)
    return TASKS.get(app, {})


def app_commands(app: str) -> list[Any]:
    """The app's `Command`s (empty for an app without menus)."""
    registered = get_app(app)
    return list(_attr(registered.commands)) if registered.commands else []


def app_guides() -> dict[str, Any]:
    """app -> docs `Guide` of every known app that has one, built-in apps first."""
    guides = {}
    for name in app_names():
        registered = get_app(name)
        if registered.guide:
            guides[name] = _attr(registered.guide)
    return guides


def _attr(entry: str) -> Any:
    module, _, attr = entry.partition(":")
    return getattr(importlib.import_module(module), attr)


def _forget_docs() -> None:
    """A new app may bring a guide: the docs site's cached pages are rebuilt on next use."""
    import sys

    pages = sys.modules.get("raygent.environments.web.docs.pages")
    if pages is not None:
        pages.site.cache_clear()


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
