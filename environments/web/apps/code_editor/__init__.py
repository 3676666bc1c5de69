"""Codex Studio, the suite's code editor: a file explorer, tabs, a textarea editor with line numbers, a
find/replace widget, a console that runs the editor's own small language (Mini, `interpreter.js`), settings,
and a command palette. The page is `index.html` + ES modules (`app.js` wires the `Shell` front of the menu kit
`../common/menus.js`, `workspace.js`, `findwidget.js`, `editing.js`, `interpreter.js`, `palette.js`); `commands.py`
lists its menu commands, `tasks/` its task templates (imported here so they register), `expert.py` the blocks of
their scripted solvers.
"""

from raygent.environments.web.apps.code_editor import tasks
from raygent.environments.web.registry import builtin_app

APP = builtin_app("code_editor")
"""The app's registration: the `raygent.apps` entry point `code_editor` (pyproject.toml) names it."""

__all__ = ["APP", "tasks"]
