"""A test app of hand-written pages: its files written once per process to a temporary directory, then
registered (idempotent) — shared by the page tests (`test_web_pages.py`, `test_web_page_details.py`)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from raygent.environments.web.registry import WebApp, register_app
from raygent.environments.web.task import PageTask

_DIRS: dict[str, Path] = {}


def page_app(name: str, pages: Mapping[str, str], templates: Sequence[type[PageTask]]) -> WebApp:
    """The app `name` serving `pages` (file name → text) at `/{app}/` with `templates` as its task types."""
    if name not in _DIRS:
        directory = Path(tempfile.mkdtemp(prefix=f"raygent-{name}-"))
        atexit.register(shutil.rmtree, directory, True)
        for file, text in pages.items():
            (directory / file).write_text(text)
        _DIRS[name] = directory
    return register_app(WebApp(name=name, templates=tuple(templates), static_dir=_DIRS[name], url="/{app}/"))
