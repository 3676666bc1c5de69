"""Quill Writer, the suite's word processor: a contenteditable page with character formatting, paragraph
styles, alignment, lists, tables, find & replace, word count, page setup and Save As with file formats. The page
is `index.html` + ES modules (`app.js` wires the `Shell` front of the menu kit `../common/menus.js`, `docmodel.js`,
`selection.js`, `formatting.js`, `findreplace.js`); `commands.py` lists its menu commands, `tasks/` its task
templates (imported here so they register), `expert.py` the blocks of their scripted solvers.
"""

from raygent.environments.web.apps.word_processor import tasks
from raygent.environments.web.registry import builtin_app

APP = builtin_app("word_processor")
"""The app's registration: the `raygent.apps` entry point `word_processor` (pyproject.toml) names it."""

__all__ = ["APP", "tasks"]
