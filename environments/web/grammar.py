"""The web action grammar: UI-TARS-style coordinate actions and element-id actions over one parser.

Coordinates are on a 0–1000 grid over the viewport (UI-TARS, SEAgent §1.3); element ids are the `[N]` marks of
the observation text (set-of-marks). A kind may have both forms, told apart by the number of arguments:

    click(12)            click(500, 300)          left_double(12)      left_double(500, 300)
    right_single(12)     right_single(500, 300)   drag(100, 200, 400, 200)
    type(12, "text")     type("text")             select(12, "Large")  hotkey("Control+s")
    scroll(12, down)     scroll(500, 500, down)   goto("http://127.0.0.1:8000/docs/")
    go_back()            wait()                   finished()           click_label("Save")

`type(12, "text")` replaces an input's value (and focuses other elements, then types); `type("text")` types
at the focused element; a trailing `\\n` presses Enter. UI-TARS's own spelling is accepted too:
`click(start_box='(235,512)')`, `drag(start_box='(1,2)', end_box='(3,4)')`, `hotkey(key='ctrl s')`,
`type(content='hi')`, `scroll(start_box='(5,5)', direction='down')`; a `<|box_start|>…<|box_end|>` wrapper or a
four-number box (its centre) are fine. `WEB_GRAMMAR.parse(text)` never raises (see `actions.py`).

`click_label("Save")` clicks the element named "Save" on the latest screen (`observe.find_label`: in the open
dialog or menu first, exact name, then ignoring case): grounding by the words a person reads, e.g. copied from
the documentation, instead of by the id the screen gave the element.
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import Field

from raygent.policies.actions import (
    Action,
    ActionGrammar,
    ClickAction,
    FinishedAction,
    InvalidAction,
    ParsedAction,
    TypeAction,
)

GRID = 1000
"""Coordinates run from 0 to `GRID` across the viewport's width and height."""

Coordinate = Field(ge=0, le=GRID)
Direction = Literal["up", "down", "left", "right"]


class ClickPoint(Action):
    kind: ClassVar[str] = "click"
    description: ClassVar[str] = "click at a point of the 0-1000 grid over the screen"
    x: int = Coordinate
    y: int = Coordinate


class ClickLabel(Action):
    kind: ClassVar[str] = "click_label"
    description: ClassVar[str] = "click the element with this name on the screen (in an open dialog or menu first)"
    label: str = Field(min_length=1)


class DoubleClickElement(Action):
    kind: ClassVar[str] = "left_double"
    description: ClassVar[str] = "double-click the element with this id"
    element: int = Field(ge=0)


class DoubleClickPoint(Action):
    kind: ClassVar[str] = "left_double"
    description: ClassVar[str] = "double-click at a point of the 0-1000 grid"
    x: int = Coordinate
    y: int = Coordinate


class RightClickElement(Action):
    kind: ClassVar[str] = "right_single"
    description: ClassVar[str] = "right-click the element with this id (opens context menus)"
    element: int = Field(ge=0)


class RightClickPoint(Action):
    kind: ClassVar[str] = "right_single"
    description: ClassVar[str] = "right-click at a point of the 0-1000 grid"
    x: int = Coordinate
    y: int = Coordinate


class DragAction(Action):
    kind: ClassVar[str] = "drag"
    description: ClassVar[str] = "press at (x1, y1), move to (x2, y2) and release, on the 0-1000 grid"
    x1: int = Coordinate
    y1: int = Coordinate
    x2: int = Coordinate
    y2: int = Coordinate


class TypeText(Action):
    kind: ClassVar[str] = "type"
    description: ClassVar[str] = "type text at the focused element; a final \\n presses Enter"
    content: str


class SelectAction(Action):
    kind: ClassVar[str] = "select"
    description: ClassVar[str] = "choose the option with this label (or value) in the list with this id"
    element: int = Field(ge=0)
    option: str


class HotkeyAction(Action):
    kind: ClassVar[str] = "hotkey"
    description: ClassVar[str] = 'press a key or key chord, e.g. "Control+s", "Escape", "ctrl shift z"'
    key: str = Field(min_length=1)


class ScrollElement(Action):
    kind: ClassVar[str] = "scroll"
    description: ClassVar[str] = "scroll inside the element with this id: up, down, left or right"
    bare_fields: ClassVar[tuple[str, ...]] = ("direction",)
    element: int = Field(ge=0)
    direction: Direction


class ScrollPoint(Action):
    kind: ClassVar[str] = "scroll"
    description: ClassVar[str] = "scroll at a point of the 0-1000 grid: up, down, left or right"
    bare_fields: ClassVar[tuple[str, ...]] = ("direction",)
    x: int = Coordinate
    y: int = Coordinate
    direction: Direction


class GotoAction(Action):
    kind: ClassVar[str] = "goto"
    description: ClassVar[str] = "open a URL in the current tab (only the local sites are reachable)"
    url: str = Field(min_length=1)


class GoBackAction(Action):
    kind: ClassVar[str] = "go_back"
    description: ClassVar[str] = "go back to the previous page"


class WaitAction(Action):
    kind: ClassVar[str] = "wait"
    description: ClassVar[str] = "wait a moment and look again"


WEB_ACTIONS: tuple[type[Action], ...] = (
    ClickAction,
    ClickPoint,
    ClickLabel,
    DoubleClickElement,
    DoubleClickPoint,
    RightClickElement,
    RightClickPoint,
    DragAction,
    TypeAction,
    TypeText,
    SelectAction,
    HotkeyAction,
    ScrollElement,
    ScrollPoint,
    GotoAction,
    GoBackAction,
    WaitAction,
    FinishedAction,
)

_NUMBER = r"\s*(-?\d+(?:\.\d+)?)\s*"
_BOX_ARGUMENT = re.compile(
    r"\b(?:start_box|end_box|point|start_point|end_point)\s*=\s*(?P<q>['\"]?)\s*(?:<\|box_start\|>)?\s*[(\[]"
    rf"{_NUMBER},{_NUMBER}(?:,{_NUMBER},{_NUMBER})?[)\]]\s*(?:<\|box_end\|>)?\s*(?P=q)"
)


def _box_to_point(match: re.Match[str]) -> str:
    numbers = [float(value) for value in match.groups()[1:] if value is not None]
    if len(numbers) == 4:
        numbers = [(numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2]
    return ", ".join(str(round(value)) for value in numbers)


class WebActionGrammar(ActionGrammar):
    """`ActionGrammar` over `WEB_ACTIONS` that also reads UI-TARS's `start_box='(x,y)'` arguments."""

    def __init__(self, actions: tuple[type[Action], ...] = WEB_ACTIONS) -> None:
        super().__init__(actions)

    def parse(self, text: str) -> ParsedAction:
        parsed = super().parse(_BOX_ARGUMENT.sub(_box_to_point, text))
        if isinstance(parsed, InvalidAction) and parsed.raw != text:
            return InvalidAction(raw=text, reason=parsed.reason)
        return parsed


WEB_GRAMMAR = WebActionGrammar()
