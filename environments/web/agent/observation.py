"""The compact observation a tiny policy reads: the accessibility tree cut down to what an action can use.

`BrowserEnv`'s text (`environments/web/observe.py`) is an indented tree with landmark lines, long field values
and the page's visible text: 600–1,700 characters per screen in the suite's apps. A model of a few million
parameters with a 1k-token byte-level vocabulary reads that as 300–700 tokens, most of them structure. `compact`
first narrows the tree to where the user's attention is, as a screen reader's modal focus does (`focus`): an
open dialog's subtree when there is one, else an open menu with its menu bar, else the whole page. Then it
keeps, without indentation:

- every actionable line `[id] role "name"` (the ids are the ones the actions use), its flags, and its value cut
  to `max_value_chars`;
- context lines that carry a name (dialogs, menus, headings, short visible text, status lines), cut to
  `max_text_chars`;

and drops name-less structure (`banner`, `main`, `list`, `listitem`, ...). Element ids never change, so an
action chosen on the compact text acts on the same element of the page. SEAgent's actor reads screenshots (and
optionally the full a11y tree); this is the laptop-scale stand-in, chosen so prompts stay short. `by_label`
rewrites a click on an id as a click on the name the compact screen shows (`click_label`), for demonstrations
that ground by name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, get_args

from raygent.environments.web.grammar import ClickLabel
from raygent.environments.web.observe import find_label, focus, parse
from raygent.platform.contracts import Task

MAX_VALUE_CHARS = 16
MAX_TEXT_CHARS = 24
STRUCTURE = frozenset({"menubar", "toolbar", "navigation", "tablist", "heading", "group", "form", "generic"})
"""Named lines without an id that only label structure; dropped (their elements stay)."""


def _quoted(text: str, limit: int) -> str:
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return '"' + cut.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def compact(text: str, max_value_chars: int = MAX_VALUE_CHARS, max_text_chars: int = MAX_TEXT_CHARS) -> str:
    """The compact form of an observation text (see the module docstring).

    >>> compact('banner\\n  [1] button "File"\\n  text "Untitled"\\nmain\\n  [2] textbox "Name" value="a b" focused')
    '[1] button "File"\\ntext "Untitled"\\n[2] textbox "Name" value="a b" focused'
    """
    lines = []
    for element in focus(parse(text)):
        if element.id is None and (not element.name or element.role in STRUCTURE):
            continue
        head = f"[{element.id}] {element.role}" if element.id is not None else element.role
        parts = [head, _quoted(element.name, max_text_chars)] if element.name else [head]
        if element.value is not None:
            parts.append(f"value={_quoted(element.value, max_value_chars)}")
        if element.box is not None:
            parts.append("box=({},{},{},{})".format(*element.box))
        parts.extend(
            flag for flag in ("checked", "selected", "expanded", "disabled", "focused") if flag in element.flags
        )
        lines.append(" ".join(parts))
    return "\n".join(lines)


Grounding = Literal["id", "label"]
"""How a job's demonstrations name the elements they click: by the screen's id (`click(9)`) or by name (`by_label`)."""
GROUNDINGS: tuple[str, ...] = get_args(Grounding)


def by_label(screen: str, action: str) -> str:
    """`click(N)` as `click_label("name")` when element N's name on the compact `screen` is whole (not cut by
    `compact`) and `find_label` finds N by it; any other action as it is."""
    match = re.fullmatch(r"\s*click\((\d+)\)\s*", action)
    if match is None:
        return action
    elements = parse(screen)
    name = next((e.name for e in elements if e.id == int(match[1])), "")
    if not name or (len(name) >= MAX_TEXT_CHARS and name.endswith("…")):
        return action
    try:
        found = find_label(elements, name)
    except LookupError:
        return action
    return ClickLabel(label=name).render() if found == int(match[1]) else action


def with_grounding(tasks: list[Task], grounding: Grounding) -> list[Task]:
    """`tasks` whose demonstrations click by name (`params["grounding"] = "label"`), or as they are (`id`)."""
    if grounding not in GROUNDINGS:
        raise ValueError(f"grounding must be one of {GROUNDINGS}, got {grounding!r}")
    if grounding == "id":
        return tasks
    return [task.model_copy(update={"params": {**task.params, "grounding": grounding}}) for task in tasks]


def grounded(task: Task, turns: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """A demonstration's (compact screen, action) turns, its clicks by name (`by_label`) when `task` asks for it."""
    if task.params.get("grounding") != "label":
        return list(turns)
    return [(screen, by_label(screen, action)) for screen, action in turns]
