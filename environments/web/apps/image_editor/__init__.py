"""The image editor app (GIMP-like): a pixel canvas with tools, layers, filters and export, and its tasks.

Page (`index.html`, ES modules): `../common/menus.js` (menu bar from `ui.json`, shortcuts, context menu,
dialogs),
`document.js` (layers bottom to top, undo/redo, summaries), `paint.js` (tools and filters, integer and
deterministic), `canvas_view.js` (drawing and mouse input), `handlers.js` (commands), `app.js` (panels and
`window.raygent`). The canvas view always fills x 14–74 %, y 12–72 % of the viewport (the observation's canvas
line carries its `box=(l,t,r,b)` on the 0–1000 grid), so pixel (x, y) of a W×H image is at
`(l + (r - l) (x + 0.5) / W, t + (b - t) (y + 0.5) / H)`.

`getState()`: `width`, `height`, `cellSize` (4), `layers` (bottom to top: `name`, `visible`, `opacity` %,
`grid` of 4×4-cell average colors `#rrggbbaa`, `colors` (the 12 most frequent exact colors with counts),
`distinct`), `activeLayer`, `tool`, `fgColor`, `brushSize`, `filters` (applied, in order: `filter`, `layer`,
`params`; undo removes entries), `composite` (summary of the visible image), `exports` (`name`, `format`,
`width`, `height` and the composite's summary at export time), `dialog` (open dialog's title or null),
`undoDepth`, `redoDepth`. Checkers recompute expected grids with `raster.py`, the Python twin of `paint.js`.

Importing the package registers its task templates (`tasks/atomic.py`, `tasks/composed.py`, `tasks/long.py`) in
`raygent.environments.web.task.TASKS`.
"""

from raygent.environments.web.apps.image_editor import tasks
from raygent.environments.web.registry import builtin_app

APP = builtin_app("image_editor")
"""The app's registration: the `raygent.apps` entry point `image_editor` (pyproject.toml) names it."""

__all__ = ["APP", "tasks"]
