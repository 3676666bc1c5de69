"""Tempo Media Player: a playlist player over a simulated media clock (see `app.js`), and its task templates.

Importing the package registers the templates (`tasks/atomic.py`, `tasks/composed.py`, `tasks/long.py`).
"""

from raygent.environments.web.apps.media_player import tasks
from raygent.environments.web.registry import builtin_app

APP = builtin_app("media_player")
"""The app's registration: the `raygent.apps` entry point `media_player` (pyproject.toml) names it."""

__all__ = ["APP", "tasks"]
