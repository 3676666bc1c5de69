"""Building blocks of the image editor's scripted solvers: sub-generators over the action grammar.

Each helper is a generator that yields action strings, receives the next observation text, and returns the
latest observation (`obs = yield from run_command(obs, ui, "export")`). The generic blocks (menus, dialogs)
come from `apps/common/expert.py`; the canvas ones are the editor's own: canvas points come from the canvas
line's `box=(l,t,r,b)` on the 0–1000 grid.
"""

from __future__ import annotations

import re

from raygent.environments.web.apps.common.expert import Steps, click, fill_dialog, look
from raygent.environments.web.apps.common.expert import command as run_command
from raygent.environments.web.ui import UISpec

__all__ = [
    "Steps",
    "canvas_box",
    "canvas_point",
    "choose_tool",
    "click",
    "click_pixel",
    "drag_pixels",
    "export",
    "fill_dialog",
    "look",
    "run_command",
    "select_layer",
    "set_color",
]

_CANVAS_BOX = re.compile(r'canvas "[^"]*".*box=\((\d+),(\d+),(\d+),(\d+)\)')


def canvas_box(obs: str) -> tuple[int, int, int, int]:
    match = _CANVAS_BOX.search(obs)
    if not match:
        raise LookupError(f"no canvas box in the observation:\n{obs[:2000]}")
    left, top, right, bottom = (int(v) for v in match.groups())
    return left, top, right, bottom


def canvas_point(obs: str, x: int, y: int, width: int, height: int) -> tuple[int, int]:
    """The grid point over the centre of image pixel (x, y) of a width×height image."""
    left, top, right, bottom = canvas_box(obs)
    return round(left + (right - left) * (x + 0.5) / width), round(top + (bottom - top) * (y + 0.5) / height)


def set_color(obs: str, ui: UISpec, hex_color: str) -> Steps:
    obs = yield from run_command(obs, ui, "fg_color")
    obs = yield from fill_dialog(obs, {"Hex color": hex_color})
    return obs


def choose_tool(obs: str, ui: UISpec, tool: str) -> Steps:
    """Press the toolbox button of `tool` (named by this seed's label)."""
    obs = yield from click(obs, ui.label(tool), "button")
    return obs


def select_layer(obs: str, name: str) -> Steps:
    """Make the named layer active (its name button in the layers panel)."""
    obs = yield from click(obs, name, "button")
    return obs


def drag_pixels(obs: str, start: tuple[int, int], end: tuple[int, int], size: tuple[int, int]) -> Steps:
    x1, y1 = canvas_point(obs, *start, *size)
    x2, y2 = canvas_point(obs, *end, *size)
    obs = yield f"drag({x1}, {y1}, {x2}, {y2})"
    return obs


def click_pixel(obs: str, x: int, y: int, size: tuple[int, int]) -> Steps:
    gx, gy = canvas_point(obs, x, y, *size)
    obs = yield f"click({gx}, {gy})"
    return obs


def export(obs: str, ui: UISpec, name: str, fmt: str) -> Steps:
    obs = yield from run_command(obs, ui, "export")
    obs = yield from fill_dialog(obs, {"File name": name, "Format": fmt}, submit="Export")
    return obs
