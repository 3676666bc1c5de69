"""Tempo Media Player: a playlist player over a simulated media clock (see `app.js`), and its task templates.

Importing the package registers the templates (`tasks.py`, `composed_tasks.py`, `long_tasks.py`).
"""

from raygent.environments.web.apps.media_player import (  # noqa: F401 (registers the templates)
    composed_tasks,
    long_tasks,
    tasks,
)
from raygent.environments.web.registry import builtin_app

APP = builtin_app("media_player")
"""The app's registration: the `raygent.apps` entry point `media_player` (pyproject.toml) names it."""
