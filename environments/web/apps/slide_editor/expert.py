"""Building blocks of the slide editor's scripted solvers: sub-generators over the action grammar.

Each helper yields action strings, receives the next observation text, and returns the latest observation
(`obs = yield from run_command(obs, ui, "new_slide")`). The generic blocks (menus, dialogs) come from
`apps/common/expert.py`. Slide points and sorter slots come from the app's fixed viewport layout
(`style.css`): the stage spans x 20–80 % and y 8–68 % of the viewport, sorter thumbnail i is centred at
y 12 + 14 i %.
"""

from __future__ import annotations

import json

from raygent.environments.web.apps.common.expert import Steps, click, fill_dialog, look
from raygent.environments.web.apps.common.expert import command as run_command
from raygent.environments.web.observe import find, parse

__all__ = [
    "Steps",
    "click",
    "drag_slide",
    "fill_dialog",
    "look",
    "run_command",
    "select_slide",
    "slide_option",
    "slide_point",
    "sorter_point",
    "type_into",
]


def slide_option(obs: str, title: str) -> int:
    """The sorter thumbnail (`option "Slide N: <title>"`) of the slide with this title."""
    for element in parse(obs):
        if element.id is not None and element.role == "option" and element.name.split(": ", 1)[-1] == title:
            return element.id
    raise LookupError(f"no slide titled {title!r} in the sorter:\n{obs[:2000]}")


def select_slide(obs: str, title: str) -> Steps:
    obs = yield f"click({slide_option(obs, title)})"
    return obs


def type_into(obs: str, name: str, text: str) -> Steps:
    """Type into the text box (or notes field) with this accessible name; a box's old text is replaced."""
    obs = yield f"type({find(obs, name, 'textbox')}, {json.dumps(text)})"
    return obs


def slide_point(x: float, y: float) -> tuple[int, int]:
    """The grid point of (x %, y %) of the slide."""
    return round(200 + 6 * x), round(80 + 6 * y)


def sorter_point(index: int, *, before: bool) -> tuple[int, int]:
    """A grid point in the sorter just above (`before`) or just below thumbnail `index`."""
    return 80, (50 + 140 * index) if before else (190 + 140 * index)


def drag_slide(start: int, to: int) -> Steps:
    """Drag thumbnail `start` in the sorter so that the slide ends at position `to` (both from 0)."""
    x, y = sorter_point(start, before=False)
    y -= 70
    x2, y2 = sorter_point(to, before=to < start)
    obs = yield f"drag({x}, {y}, {x2}, {y2})"
    return obs
