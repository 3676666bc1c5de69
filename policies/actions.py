"""Typed actions and the parser that turns a model's text into one, or into an `InvalidAction`.

The grammar is one function-call expression, `name(arg, ...)`:

    call(calculator, "12*7")     answer(84)     click(12)     type(12, "hello world")     finished()

- Arguments are positional or `keyword=value`, in the schema's field order. A string argument may be quoted
  with `"` (JSON escapes) or `'`, or left bare; a bare last string argument takes everything up to the closing
  parenthesis, commas and balanced parentheses included (`answer(yes, I think so)`, `call(calc, (2+3)*4)`).
- Text before the action is allowed (a thought, or `Action:`) and text after it is ignored: the first
  expression whose name is a known action kind is the action. Whitespace anywhere between tokens is fine.
- Anything else — no action, an action kind this grammar does not accept, a wrong argument count, a value the
  schema rejects, an unclosed parenthesis or quote — gives an `InvalidAction` carrying the raw text and the
  reason. `parse` never raises: the trainer gives such a step zero reward and counts it.

Each environment declares the kinds it accepts with an `ActionGrammar` (e.g. `ActionGrammar.of("call",
"answer")`); new kinds are `Action` subclasses with a `kind` and typed fields. `Action.render()` writes the
canonical text that `parse` reads back to an equal action; environments receive that string.

One kind may have several *forms*: `Action` subclasses sharing the kind with different numbers of fields (the
web grammar's `click(12)` on an element id and `click(500, 300)` on a 0–1000 grid, `environments/web/grammar.py`).
`parse` tries the forms from the most fields to the fewest and returns the first that validates; when none
does, the reason lists every form's complaint.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

_IDENTIFIER = re.compile(r"[A-Za-z_][\w.\-]*\Z")
_CALL_START = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(")
_KEYWORD = re.compile(r"([A-Za-z_]\w*)\s*=(?!=)\s*")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}
_CLOSERS = {"(": ")", "[": "]", "{": "}"}


class Action(BaseModel):
    """A parsed, valid action. Subclasses set `kind` (the call name) and `description`, and declare the
    arguments as typed fields in call order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ClassVar[str] = ""
    description: ClassVar[str] = ""
    bare_fields: ClassVar[tuple[str, ...]] = ()
    """String fields rendered without quotes when they are identifiers (e.g. a tool name)."""
    valid: ClassVar[bool] = True

    def render(self) -> str:
        """The canonical text, e.g. `type(12, "hello")`: numbers bare, strings JSON-quoted (but `bare_fields`)."""
        args = []
        for name in type(self).model_fields:
            value = getattr(self, name)
            bare = isinstance(value, int | float) or (name in self.bare_fields and _IDENTIFIER.match(str(value)))
            args.append(str(value) if bare else json.dumps(str(value), ensure_ascii=False))
        return f"{self.kind}({', '.join(args)})"

    @classmethod
    def signature(cls) -> str:
        """`kind(field, ...)`, for prompts."""
        return f"{cls.kind}({', '.join(cls.model_fields)})"


class CallAction(Action):
    kind: ClassVar[str] = "call"
    description: ClassVar[str] = "call a tool with one argument and see its result"
    bare_fields: ClassVar[tuple[str, ...]] = ("tool",)
    tool: str = Field(pattern=r"^[A-Za-z_][\w.\-]*$")
    arg: str


class AnswerAction(Action):
    kind: ClassVar[str] = "answer"
    description: ClassVar[str] = "give the final answer and end the task"
    text: str


class ClickAction(Action):
    kind: ClassVar[str] = "click"
    description: ClassVar[str] = "click the element with this id"
    element: int = Field(ge=0)


class TypeAction(Action):
    kind: ClassVar[str] = "type"
    description: ClassVar[str] = "type text into the element with this id"
    element: int = Field(ge=0)
    text: str


class FinishedAction(Action):
    kind: ClassVar[str] = "finished"
    description: ClassVar[str] = "declare the task done"


BUILTIN_ACTIONS: dict[str, type[Action]] = {
    cls.kind: cls for cls in (CallAction, AnswerAction, ClickAction, TypeAction, FinishedAction)
}


class InvalidAction(BaseModel):
    """A response that does not parse: `raw` is the model's text, `reason` says why (for logs and metrics)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    valid: ClassVar[bool] = False
    raw: str
    reason: str

    def render(self) -> str:
        """The raw text, so a step records what the model wrote."""
        return self.raw


ParsedAction = Action | InvalidAction


class _ParseError(Exception):
    pass


class ActionGrammar:
    """The action kinds one environment accepts, and the parser for them."""

    def __init__(self, actions: Iterable[type[Action]]) -> None:
        self.actions: dict[str, type[Action]] = {}
        """The first form given for each kind."""
        self.forms: dict[str, tuple[type[Action], ...]] = {}
        """Every form of each kind, the most fields first (the order `parse` tries them)."""
        for action in actions:
            if not (isinstance(action, type) and issubclass(action, Action)) or not action.kind:
                raise TypeError(f"{action!r} is not an Action subclass with a kind")
            forms = self.forms.get(action.kind, ())
            if any(len(form.model_fields) == len(action.model_fields) for form in forms):
                raise ValueError(f"two action types share the kind {action.kind!r} and the number of fields")
            self.actions.setdefault(action.kind, action)
            self.forms[action.kind] = tuple(sorted((*forms, action), key=lambda form: -len(form.model_fields)))
        if not self.actions:
            raise ValueError("a grammar needs at least one action type")
        self._known = {**BUILTIN_ACTIONS, **self.actions}

    @classmethod
    def of(cls, *kinds: str | type[Action]) -> ActionGrammar:
        """A grammar from built-in kind names (`"call"`, `"answer"`, `"click"`, `"type"`, `"finished"`) and/or
        `Action` subclasses."""
        actions = []
        for kind in kinds:
            if isinstance(kind, str):
                if kind not in BUILTIN_ACTIONS:
                    raise KeyError(f"unknown action kind {kind!r}; built-in kinds: {', '.join(BUILTIN_ACTIONS)}")
                actions.append(BUILTIN_ACTIONS[kind])
            else:
                actions.append(kind)
        return cls(actions)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self.actions)

    def describe(self) -> str:
        """The accepted actions, one `signature: description` line each, for a system prompt."""
        return "\n".join(
            f"{action.signature()}: {action.description}" for forms in self.forms.values() for action in forms
        )

    def parse(self, text: str) -> ParsedAction:
        """The first action in `text`, validated against its schema; an `InvalidAction` instead of any error."""
        for match in _CALL_START.finditer(text):
            kind = match.group(1)
            if kind not in self._known:
                continue
            if kind not in self.actions:
                return InvalidAction(
                    raw=text, reason=f"action {kind!r} is not accepted here; expected one of {', '.join(self.kinds)}"
                )
            reasons = []
            for form in self.forms[kind]:
                try:
                    return self._build(form, text, match.end())
                except _ParseError as error:
                    reasons.append(str(error))
            return InvalidAction(raw=text, reason=f"{kind}: {'; or '.join(dict.fromkeys(reasons))}")
        return InvalidAction(raw=text, reason=f"no action found; expected one of {', '.join(self.kinds)}")

    def _build(self, action: type[Action], text: str, start: int) -> Action:
        fields = list(action.model_fields)
        values: dict[str, Any] = {}
        greedy_last = bool(fields) and action.model_fields[fields[-1]].annotation is str
        for position, (keyword, value) in enumerate(_scan_arguments(text, start, fields, greedy_last)):
            name = keyword or (fields[position] if position < len(fields) else None)
            if name is None:
                raise _ParseError(f"takes {len(fields)} argument(s): {action.signature()}")
            if name not in fields:
                raise _ParseError(f"unknown argument {name!r}: {action.signature()}")
            if name in values:
                raise _ParseError(f"argument {name!r} given twice")
            values[name] = value
        absent = [name for name in fields if name not in values]
        if absent:
            raise _ParseError(f"missing argument(s) {', '.join(absent)}: {action.signature()}")
        try:
            return action.model_validate(values)
        except ValidationError as error:
            details = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
            raise _ParseError(details) from None


def _scan_arguments(text: str, start: int, fields: list[str], greedy_last: bool) -> list[tuple[str | None, str]]:
    """(keyword or None, value) per argument of the call whose '(' ends at `start`.

    With `greedy_last`, a bare value in the last field's place runs to the closing parenthesis.
    """
    arguments: list[tuple[str | None, str]] = []
    i = _skip_space(text, start)
    if i < len(text) and text[i] == ")":
        return arguments
    while True:
        i = _skip_space(text, i)
        keyword = None
        match = _KEYWORD.match(text, i)
        if match and match.group(1) in fields:
            keyword, i = match.group(1), match.end()
        in_last_place = len(arguments) == len(fields) - 1 and keyword in (None, fields[-1])
        if i < len(text) and text[i] in "\"'":
            value, i = _read_quoted(text, i)
            i = _skip_space(text, i)
        else:
            value, i = _read_bare(text, i, to_close=greedy_last and in_last_place)
        arguments.append((keyword, value))
        if i >= len(text):
            raise _ParseError("missing ')'")
        if text[i] == ")":
            return arguments
        if text[i] != ",":
            raise _ParseError(f"unexpected {text[i]!r} after an argument")
        i += 1


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _read_quoted(text: str, i: int) -> tuple[str, int]:
    quote, j = text[i], i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == quote:
            return _unescape(text[i + 1 : j], quote), j + 1
        j += 1
    raise _ParseError(f"unclosed {quote} quote")


def _unescape(body: str, quote: str) -> str:
    if quote == '"':
        try:
            return str(json.loads(f'"{body}"'))
        except json.JSONDecodeError:
            pass
    return re.sub(r"\\(.)", lambda m: _SIMPLE_ESCAPES.get(m.group(1), m.group(0)), body, flags=re.DOTALL)


def _read_bare(text: str, i: int, to_close: bool) -> tuple[str, int]:
    """A bare value up to the next top-level ',' (or, when `to_close`, only the call's closing ')')."""
    stack: list[str] = []
    j = i
    while j < len(text):
        char = text[j]
        if char in "\"'" and stack:
            _, j = _read_quoted(text, j)
            continue
        if char in _CLOSERS:
            stack.append(_CLOSERS[char])
        elif stack and char == stack[-1]:
            stack.pop()
        elif not stack and (char == ")" or (char == "," and not to_close)):
            break
        j += 1
    if j >= len(text):
        raise _ParseError("missing ')'")
    value = text[i:j].strip()
    if not value:
        raise _ParseError("empty argument")
    return value, j
