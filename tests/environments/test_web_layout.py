"""The web suite's apps: the app list is the `raygent.apps` entry points, and every app lays out the same way.

A new app that breaks the layout, or has no entry point, or an entry point without an app, fails here. Fast: no
browser (the page files are read as text).
"""

from __future__ import annotations

import importlib
import re
import tomllib
from fnmatch import fnmatch
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from raygent.environments.web.registry import (
    APPS_DIR,
    APPS_PACKAGE,
    BUILTIN_APPS,
    ENTRY_POINT_GROUP,
    WebApp,
    app_guides,
    app_names,
    available_apps,
    builtin_apps,
    get_app,
    load_app,
)
from raygent.environments.web.task import ATOMIC, COMPOSED, LONG

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
DECLARED = PYPROJECT["project"]["entry-points"][ENTRY_POINT_GROUP]
"""name -> target of this tree's `[project.entry-points."raygent.apps"]`."""
SHARED = "common"
"""The folder of what the apps share (the menu kit, the solvers' generic blocks); not an app."""
ON_DISK = sorted(p.name for p in APPS_DIR.iterdir() if (p / "__init__.py").is_file() and p.name != SHARED)
LEVELS = {"atomic": ATOMIC, "composed": COMPOSED, "long": LONG}
LAYOUT = ("__init__.py", "tasks/__init__.py", *(f"tasks/{level}.py" for level in LEVELS), "expert.py", "commands.py")
PAGE = ("index.html", "style.css", "app.js")
LEGACY = ("tasks.py", "atomic_tasks.py", "composed_tasks.py", "long_tasks.py", "tasks_composed.py", "tasks_long.py")
LEGACY += ("solving.py", "menus.js", "shell.js")


def test_the_app_list_is_the_entry_points() -> None:
    assert sorted(DECLARED) == ON_DISK, "an app folder without an entry point, or an entry point without a folder"
    assert all(target == f"{APPS_PACKAGE}.{name}:APP" for name, target in DECLARED.items())
    assert BUILTIN_APPS == builtin_apps() == tuple(sorted(DECLARED)) == available_apps()
    assert app_names()[: len(BUILTIN_APPS)] == BUILTIN_APPS
    installed = {e.name: e.value for e in entry_points(group=ENTRY_POINT_GROUP) if e.value.startswith(APPS_PACKAGE)}
    if installed:  # raygent is installed: its dist-info is this tree's pyproject (else `pip install -e .`)
        assert installed == DECLARED


@pytest.mark.parametrize("app", ON_DISK)
def test_every_app_has_the_layout(app: str) -> None:
    folder = APPS_DIR / app
    missing = [path for path in (*LAYOUT, *PAGE) if not (folder / path).is_file()]
    assert not missing, f"{app} lacks {missing}"
    stale = [path for path in LEGACY if (folder / path).exists()]
    assert not stale, f"{app} still has {stale}"
    registered = importlib.import_module(f"{APPS_PACKAGE}.{app}").APP
    assert isinstance(registered, WebApp) and registered.name == app and get_app(app) == registered
    templates = load_app(app)
    for level, difficulty in LEVELS.items():
        module = f"{APPS_PACKAGE}.{app}.tasks.{level}"
        here = [cls for cls in templates.values() if cls.__module__ == module]
        assert here, f"{module} registers no template"
        assert {cls.difficulty for cls in here} == {difficulty}, f"{module} holds templates of another level"
    assert all(cls.__module__.startswith(f"{APPS_PACKAGE}.{app}.tasks.") for cls in templates.values())
    guide = app_guides()[app]
    assert guide.app == app


@pytest.mark.parametrize("app", ON_DISK)
def test_every_app_uses_the_one_menu_kit_and_ships_its_page(app: str) -> None:
    folder = APPS_DIR / app
    scripts = "\n".join(path.read_text() for path in folder.glob("*.js"))
    kits = set(re.findall(r"""from\s+['"]\.\./common/(\w+\.js)['"]""", scripts))
    assert kits == {"menus.js"}, f"{app} imports {sorted(kits)} of common/, not the one menu kit"
    globs = PYPROJECT["tool"]["setuptools"]["package-data"]["raygent.environments"]
    shipped = [p for p in folder.iterdir() if p.suffix in {".js", ".html", ".css", ".json"}]
    relative = [str(p.relative_to(APPS_DIR.parents[1])) for p in shipped]
    assert all(any(fnmatch(path, glob) for glob in globs) for path in relative), "page files not in package-data"
