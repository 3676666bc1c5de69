"""Building blocks of the word processor's scripted solvers: the generic ones of `apps/common/expert.py` and the
word processor's own (`obs = yield from apply_to(obs, ui, "harbour", "bold")`).

Text is selected the way a keyboard-and-dialog user would: Find & Replace's Find Next selects the match in the
document, and the next formatting command applies to it.
"""

from __future__ import annotations

import json

from raygent.environments.web.apps.common import expert as common
from raygent.environments.web.apps.common.expert import LOOK, Steps, choose, click, command, has
from raygent.environments.web.apps.word_processor.content import FORMATS
from raygent.environments.web.ui import UISpec

__all__ = [
    "LOOK",
    "Steps",
    "apply_to",
    "choose",
    "click",
    "close_find",
    "command",
    "fill",
    "has",
    "insert_table",
    "page_setup",
    "replace_all",
    "save_as",
    "select_text",
    "to_end",
    "type_cells",
    "typed",
]


def fill(obs: str, name: str, text: str, role: str | None = "textbox") -> Steps:
    """Replace a field's value; the word processor's fields are text boxes unless `role` says otherwise."""
    return (yield from common.fill(obs, name, text, role))


def select_text(obs: str, ui: UISpec, text: str) -> Steps:
    """Select the first match of `text` after the current selection (opening Find & Replace if needed)."""
    if not has(obs, "Find", "textbox"):
        obs = yield from command(obs, ui, "find_replace")
    obs = yield from fill(obs, "Find", text)
    return (yield from click(obs, "Find Next", "button"))


def apply_to(obs: str, ui: UISpec, text: str, command_id: str) -> Steps:
    """Select `text`, then run a command on it."""
    obs = yield from select_text(obs, ui, text)
    return (yield from command(obs, ui, command_id))


def replace_all(obs: str, ui: UISpec, old: str, new: str) -> Steps:
    if not has(obs, "Find", "textbox"):
        obs = yield from command(obs, ui, "find_replace")
    obs = yield from fill(obs, "Find", old)
    obs = yield from fill(obs, "Replace with", new)
    return (yield from click(obs, "Replace All", "button"))


def close_find(obs: str) -> Steps:
    if has(obs, "Close search", "button"):
        obs = yield from click(obs, "Close search", "button")
    return obs


def to_end(obs: str) -> Steps:
    """Put the caret at the end of the document."""
    obs = yield from close_find(obs)
    obs = yield from click(obs, "Document", "textbox")
    return (yield 'hotkey("Control+End")')


def save_as(obs: str, ui: UISpec, name: str, fmt: str) -> Steps:
    obs = yield from command(obs, ui, "save_as")
    obs = yield from fill(obs, "File name", name)
    obs = yield from choose(obs, "File type", FORMATS[fmt])
    return (yield from click(obs, "Save", "button"))


def insert_table(obs: str, ui: UISpec, rows: int, cols: int) -> Steps:
    obs = yield from command(obs, ui, "insert_table")
    obs = yield from fill(obs, "Rows", str(rows), "spinbutton")
    obs = yield from fill(obs, "Columns", str(cols), "spinbutton")
    return (yield from click(obs, "Insert Table", "button"))


def typed(text: str) -> str:
    """The action that types `text` at the caret (a newline presses Enter)."""
    return f"type({json.dumps(text)})"


def type_cells(obs: str, texts: list[str]) -> Steps:
    """Type into consecutive table cells from the caret's cell, Tab between them."""
    for k, text in enumerate(texts):
        if k:
            obs = yield 'hotkey("Tab")'
        obs = yield typed(text)
    return obs


def page_setup(
    obs: str, ui: UISpec, paper: str | None = None, orientation: str | None = None, margins: float | None = None
) -> Steps:
    obs = yield from command(obs, ui, "page_setup")
    if paper is not None:
        obs = yield from choose(obs, "Paper size", paper)
    if orientation is not None:
        obs = yield from click(obs, orientation.capitalize(), "radio")
    if margins is not None:
        obs = yield from fill(obs, "Margins (cm)", f"{margins:g}", "spinbutton")
    return (yield from click(obs, "OK", "button"))
