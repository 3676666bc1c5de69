"""The slide editor app (Impress-like): slides with layouts, text boxes, a sorter, themes, notes and a slide show.

Page (`index.html`, ES modules): `../common/menus.js` (menu bar from `ui.json`, shortcuts, context menu,
dialogs),
`model.js` (deck, layouts, themes, undo/redo), `stage.js` (select, drag-move and edit text boxes),
`sorter.js` (thumbnails; click selects, drag reorders), `show.js` (presentation mode), `handlers.js`
(commands), `app.js` (notes, status, `window.raygent`). Fixed layout: the stage spans x 20–80 %, y 8–68 % of
the viewport, so slide point (X %, Y %) is grid point `(200 + 6 X, 80 + 6 Y)`; sorter thumbnail i is centred
at grid `(80, 120 + 140 i)`.

`getState()`: `slides` in order (`id`, `layout` ∈ title / title_content / two_content / blank, `title`,
`notes`, `boxes`: `name`, `role` ∈ title / subtitle / body / left / right / text, `text`, `x`, `y`, `w`, `h` in
percent of the slide, `size` pt, `bold`, `italic`, `color` (hex or null for the theme's), `align`),
`current` (index), `theme`, `selectedBox`, `editing`, `presenting`, `showIndex`, `showStart`, `dialog`,
`files` (saved: `name`, `format`, `theme`, `slides`, `titles`), `undoDepth`, `redoDepth`.

Importing the package registers its task templates (`tasks/atomic.py`, `tasks/composed.py`, `tasks/long.py`) in
`raygent.environments.web.task.TASKS`.
"""

from raygent.environments.web.apps.slide_editor import tasks
from raygent.environments.web.registry import builtin_app

APP = builtin_app("slide_editor")
"""The app's registration: the `raygent.apps` entry point `slide_editor` (pyproject.toml) names it."""

__all__ = ["APP", "tasks"]
