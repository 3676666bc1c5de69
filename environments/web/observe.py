"""The observation text: the page's accessibility tree with element ids (set-of-marks), and how to read it.

The format, one element per line, indented two spaces per tree level:

    [12] button "Save"
    [13] textbox "Find" value="hello"
    [14] checkbox "Bold" checked
    [15] menuitem "Export…" disabled
    [16] canvas "Drawing" box=(120,80,880,900)
    [17] generic "" shape=circle fill=red size=40x40 box=(150,200,181,255)
    img "" shape=rect fill=#1e90ff size=20x20 box=(300,200,315,227)
    text "Untitled document — 3 words"

- `[N]` is the element id the agent's actions use (`click(12)`, `type(13, "x")`); only elements an agent can
  act on get one: links, buttons, inputs, selects, options, menu items, tabs, sliders, checkboxes, radios,
  canvases, and anything with a click handler role. Ids are stable within an observation and assigned in
  document order; the page carries them as `data-rg-id` so actions resolve them.
- The role is the ARIA role (explicit or implicit), the name the accessible name in double quotes (JSON
  escaped). Flags: `value="..."`, `checked`, `selected`, `expanded`, `disabled`, `focused`.
- A canvas line ends with its `box=(x1,y1,x2,y2)` on the 0–1000 grid of the coordinate actions, so a text-only
  agent can click or drag inside it; so does an SVG element's.
- An SVG shape (circle, ellipse, rect, polygon, polyline, path, line, text) says what it looks like, labelled or
  not: `shape=<tag> fill=<colour> size=<w>x<h>` (the colour keyword the page wrote, else a common colour's name,
  else `#rrggbb`; `none`, `transparent`, `gradient` or `pattern`; a line, or a shape without fill, adds its
  `stroke=`; the size in CSS pixels). A drawing's shapes without handlers (an `<svg>` of at least 48×48 px, so
  not an icon) get lines without ids, `img "<title>" ...` (`text "q" ...` for its text), at most `maxShapes`.
- Lines without an id are visible text or structural landmarks (dialogs, menus, lists, headings, ...) that give
  context; long text is cut, and the whole text has a size limit (`dom.DEFAULT_LIMITS`).

`parse` reads the text back into `Element`s; `find` is what scripted solvers use to locate an element;
`focus` narrows a screen to where a user's attention is (an open dialog, else an open menu with its menu bar);
`find_label` is how `click_label("Save")` finds its element: by the name the agent read, not its id.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_QUOTED = r'"(?:[^"\\]|\\.)*"'
_LINE = re.compile(rf"^(?P<indent> *)(?:\[(?P<id>\d+)\] )?(?P<role>[\w-]+)(?: (?P<name>{_QUOTED}))?(?P<rest>.*)$")
_VALUE = re.compile(rf"value=({_QUOTED})")
_BOX = re.compile(r"box=\((\d+),(\d+),(\d+),(\d+)\)")
_SHAPE = re.compile(r"(?:^| )shape=(\w+)")
_FILL = re.compile(r"(?:^| )fill=(\S+)")
_FLAGS = ("checked", "selected", "expanded", "disabled", "focused")
MODAL_ROLES = ("dialog", "alertdialog")
MENU_BARS = ("menubar", "navigation", "toolbar")
PRESSABLE_ROLES = frozenset(
    {"button", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "option", "checkbox", "radio", "switch"}
)
"""Controls a click acts on; a name shared with a field or a container (a "Playlist" button and its listbox)
means the control."""


@dataclass(frozen=True)
class Element:
    id: int | None
    role: str
    name: str
    depth: int
    value: str | None = None
    flags: frozenset[str] = field(default_factory=frozenset)
    box: tuple[int, int, int, int] | None = None
    """A canvas's or an SVG element's bounds on the 0–1000 grid."""
    shape: str | None = None
    """An SVG shape's tag (`circle`, `rect`, ...)."""
    fill: str | None = None
    """An SVG shape's fill colour as the observation names it (`red`, `#1e90ff`, `none`)."""


def parse(text: str) -> list[Element]:
    """The elements of an observation text, in order; lines that do not match the format are skipped."""
    elements = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        rest = match["rest"]
        value_match = _VALUE.search(rest)
        rest_without_value = _VALUE.sub("", rest)
        box = _BOX.search(rest_without_value)
        shape, fill = _SHAPE.search(rest_without_value), _FILL.search(rest_without_value)
        elements.append(
            Element(
                id=int(match["id"]) if match["id"] else None,
                role=match["role"],
                name=json.loads(match["name"]) if match["name"] else "",
                depth=len(match["indent"]) // 2,
                value=json.loads(value_match.group(1)) if value_match else None,
                flags=frozenset(f for f in _FLAGS if re.search(rf"\b{f}\b", rest_without_value)),
                box=(int(box[1]), int(box[2]), int(box[3]), int(box[4])) if box else None,
                shape=shape[1] if shape else None,
                fill=fill[1] if fill else None,
            )
        )
    return elements


def find(text: str, name: str, role: str | None = None, *, exact: bool = True) -> int:
    """The id of the first actionable element with this accessible name (and role, if given).

    Raises `LookupError` listing what is there, so a broken solver says what it saw.
    """
    for element in parse(text):
        if element.id is None or (role is not None and element.role != role):
            continue
        if element.name == name if exact else name.lower() in element.name.lower():
            return element.id
    raise LookupError(f"no {role or 'element'} named {name!r} in the observation:\n{text[:2000]}")


def _subtree(elements: list[Element], root: int) -> list[Element]:
    end = root + 1
    while end < len(elements) and elements[end].depth > elements[root].depth:
        end += 1
    return elements[root:end]


def focus(elements: list[Element]) -> list[Element]:
    """The elements a user's attention is on: the last open dialog's subtree, else the open menu's (with the
    menu bar it drops from), else all of them."""
    modal = [i for i, e in enumerate(elements) if e.role in MODAL_ROLES]
    if modal:
        return _subtree(elements, modal[-1])
    menus = [i for i, e in enumerate(elements) if e.role == "menu"]
    if not menus:
        return elements
    index = menus[-1]
    for ancestor in range(index - 1, -1, -1):
        if elements[ancestor].depth < elements[index].depth:
            if elements[ancestor].role in MENU_BARS:
                return _subtree(elements, ancestor)
            if elements[ancestor].depth == 0:
                break
    return _subtree(elements, index)


def find_label(screen: str | list[Element], label: str) -> int:
    """The id of the actionable element named `label` on the screen (its text, or its `parse`d elements), as a
    person finds a control by the words on it: among the elements in `focus` first (an open dialog or menu), then
    the whole screen; the exact name first, then ignoring case and surrounding quotes or spaces, then (a label
    ending in "…", as a compact screen cuts long names) by its beginning; of several elements with the name, the
    one control (`PRESSABLE_ROLES`).

    Raises `LookupError` naming what is there when no element, or more than one, has that name.
    """
    wanted = label.strip().strip("\"'“”‘’").strip()
    if not wanted:
        raise LookupError("an empty label names no element")
    everything = parse(screen) if isinstance(screen, str) else screen
    elements = [e for e in everything if e.id is not None]
    focused = [e for e in focus(everything) if e.id is not None]
    for scope in (focused, elements):
        for same in (
            lambda name: name == wanted,
            lambda name: name.casefold() == wanted.casefold(),
            lambda name: wanted.endswith("…") and name.casefold().startswith(wanted[:-1].casefold()),
        ):
            named = [e for e in scope if same(e.name)]
            pressable = [e for e in named if e.role in PRESSABLE_ROLES]
            ids = list(dict.fromkeys(e.id for e in (pressable if len(pressable) == 1 else named) if e.id is not None))
            if len(ids) == 1:
                return ids[0]
            if len(ids) > 1:
                raise LookupError(f"{len(ids)} elements are named {wanted!r}: {ids}; click one by its id")
    names = ", ".join(dict.fromkeys(repr(e.name) for e in focused if e.name))
    raise LookupError(f"no element named {wanted!r} on the screen; named here: {names[:400]}")
