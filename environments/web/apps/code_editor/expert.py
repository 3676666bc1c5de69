"""Building blocks of the code editor's scripted solvers: the generic ones of `apps/common/expert.py` and the
editor's own (`obs = yield from replace_all(obs, ui, "rate", "result")`)."""

from __future__ import annotations

from raygent.environments.web.apps.common.expert import (
    LOOK,
    Steps,
    choose,
    click,
    command,
    fill,
    set_checkbox,
)
from raygent.environments.web.ui import UISpec

__all__ = [
    "LOOK",
    "Steps",
    "choose",
    "click",
    "command",
    "fill",
    "goto_line",
    "open_file",
    "replace_all",
    "set_checkbox",
]


def open_file(obs: str, path: str) -> Steps:
    """Open a file from the explorer."""
    return (yield from click(obs, path, "button"))


def replace_all(obs: str, ui: UISpec, old: str, new: str) -> Steps:
    """Open the replace widget on the active file and replace every match of `old` with `new`."""
    obs = yield from command(obs, ui, "replace")
    obs = yield from fill(obs, "Find", old, "textbox")
    obs = yield from fill(obs, "Replace with", new, "textbox")
    return (yield from click(obs, "Replace all", "button"))


def goto_line(obs: str, ui: UISpec, line: int) -> Steps:
    obs = yield from command(obs, ui, "goto_line")
    return (yield from fill(obs, "Line number", f"{line}\n"))
