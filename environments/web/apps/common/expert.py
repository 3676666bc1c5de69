"""Generic building blocks of the apps' scripted solvers, over the agent's action grammar.

Each block is a generator that yields action strings, receives the next observation text, and returns the
latest observation, so solvers compose them with `obs = yield from command(obs, ui, "save")`. Elements are
found by accessible name in the observation (`observe.find`); menu commands go through the menu and label the
seed's `UISpec` gives them (the scripted expert is privileged; an agent reads the docs). Each app's own solver
module (`apps/<app>/expert.py`) re-exports these next to its app-specific blocks.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping

from raygent.environments.web.observe import Element, find, parse
from raygent.environments.web.ui import UISpec

Steps = Generator[str, str, str]
"""Yields actions, receives observations, returns the last observation."""

LOOK = 'hotkey("Escape")'
"""The first action of a solver, which has no observation before it acts: Escape with nothing open changes
nothing in these apps (`wait()` would sleep a second)."""


def look() -> Steps:
    """Take the blind first step (`LOOK`) and return the first observation."""
    return (yield LOOK)


def click(obs: str, name: str, role: str | None = None) -> Steps:
    return (yield f"click({find(obs, name, role)})")


def fill(obs: str, name: str, text: str, role: str | None = None) -> Steps:
    """Replace a field's value (`type(id, text)` fills inputs and textareas; a trailing newline presses Enter)."""
    return (yield f"type({find(obs, name, role)}, {json.dumps(text)})")


def choose(obs: str, name: str, option: str) -> Steps:
    """Pick an option of the select box with this name."""
    return (yield f"select({find(obs, name, 'combobox')}, {json.dumps(option)})")


def command(obs: str, ui: UISpec, command_id: str) -> Steps:
    """Run a command from the menu bar: open its (seeded) menu, click its (seeded) label."""
    obs = yield from click(obs, ui.menu_of(command_id), "button")
    return (yield from click(obs, ui.label(command_id), "menuitem"))


def has(obs: str, name: str, role: str) -> bool:
    """Whether an actionable element with this name and role is on the page."""
    return any(e.id is not None and e.name == name and e.role == role for e in parse(obs))


def is_checked(obs: str, name: str) -> bool:
    for element in parse(obs):
        if element.id is not None and element.name == name:
            return "checked" in element.flags
    raise LookupError(f"no element named {name!r}")


def set_checkbox(obs: str, name: str, on: bool) -> Steps:
    if is_checked(obs, name) != on:
        obs = yield from click(obs, name, "checkbox")
    return obs


def dialog_elements(obs: str) -> list[Element]:
    """The elements inside the open dialog (everything after its `dialog` line), so that a field named like a
    menu (`Format`) is not mistaken for it."""
    elements = parse(obs)
    start = next((i for i, e in enumerate(elements) if e.role == "dialog"), None)
    if start is None:
        raise LookupError(f"no dialog is open:\n{obs[:2000]}")
    return [e for e in elements[start + 1 :] if e.depth > elements[start].depth]


def fill_dialog(obs: str, values: Mapping[str, str | int | bool], submit: str = "OK") -> Steps:
    """Set the open dialog's fields by label (text, number, select or checkbox) and press `submit`."""
    for label, value in values.items():
        element = next((e for e in dialog_elements(obs) if e.id is not None and e.name == label), None)
        if element is None:
            raise LookupError(f"no field {label!r} in the dialog:\n{obs[:2000]}")
        if element.role == "checkbox":
            if bool(value) != ("checked" in element.flags):
                obs = yield f"click({element.id})"
        elif element.role in ("combobox", "listbox"):
            obs = yield f"select({element.id}, {json.dumps(str(value))})"
        else:
            obs = yield f"type({element.id}, {json.dumps(str(value))})"
    return (yield from click(obs, submit, "button"))
