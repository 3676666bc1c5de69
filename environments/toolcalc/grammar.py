"""The strings that pass between a ToolCalc policy and the environment: the action grammar and observation texts.

Actions (one per turn, surrounding whitespace ignored):

- ``calc(EXPR)``: ask the calculator, e.g. ``calc(37*12)``; EXPR is integers with ``+ - *`` and parentheses.
- ``answer(N)``: the final answer, an integer literal, e.g. ``answer(449)``; it ends the episode.

Anything else is an invalid action: a string that is not ``NAME(ARG)`` is unparsable; a well-formed call whose
name is neither ``calc`` nor ``answer`` names an unknown tool; ``answer`` with a non-integer argument is malformed.

Observations: the first is the task's question (``What is 37*12+5?``); after a tool call it is
``result: 444``; after an invalid action or a calculator error it is ``error: ...`` (see the ``*_ERROR`` texts).
A policy-side parser needs only these strings.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

CALC = "calc"
"""The calculator tool's name."""

ANSWER = "answer"
"""The name of the final-answer action."""

CHARSET = string.ascii_letters + string.digits + " !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
"""Characters of the action and observation spaces (printable ASCII, no tabs or newlines)."""

RESULT_PREFIX = "result: "
PARSE_ERROR = "error: bad action, use calc(EXPR) or answer(N)"
UNKNOWN_TOOL_ERROR = "error: unknown tool {name}, use calc(EXPR) or answer(N)"
ANSWER_ERROR = "error: answer(N) needs an integer N"
CALC_ERROR = "error: calc: {reason}"

_CALL = re.compile(r"([A-Za-z_]\w{0,31})\s*\((.*)\)", re.DOTALL | re.ASCII)
_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")
_RESULT = re.compile(re.escape(RESULT_PREFIX) + r"(-?\d+)")


class ActionError(ValueError):
    """An invalid action; ``observation`` is the error text the environment shows for it."""

    def __init__(self, observation: str) -> None:
        super().__init__(observation)
        self.observation = observation


@dataclass(frozen=True)
class ToolCall:
    """A ``calc(EXPR)`` action: ``expression`` is EXPR, stripped."""

    tool: str
    expression: str


@dataclass(frozen=True)
class Answer:
    """An ``answer(N)`` action."""

    value: int


Action = ToolCall | Answer


def parse_action(text: str) -> Action:
    """Parse one action string; raises ``ActionError`` (with the observation to show) when it is invalid.

    >>> parse_action(" calc(37*12) ")
    ToolCall(tool='calc', expression='37*12')
    >>> parse_action("answer(449)")
    Answer(value=449)
    >>> try:
    ...     parse_action("lookup(x)")
    ... except ActionError as invalid:
    ...     print(invalid.observation)
    error: unknown tool lookup, use calc(EXPR) or answer(N)
    """
    match = _CALL.fullmatch(text.strip())
    if match is None:
        raise ActionError(PARSE_ERROR)
    name, argument = match.group(1), match.group(2).strip()
    if name == CALC:
        return ToolCall(tool=CALC, expression=argument)
    if name == ANSWER:
        if _INTEGER.fullmatch(argument) is None:
            raise ActionError(ANSWER_ERROR)
        return Answer(value=int(argument))
    raise ActionError(UNKNOWN_TOOL_ERROR.format(name=name))


def format_call(expression: str) -> str:
    """The action string of a calculator call: ``format_call("37*12") == "calc(37*12)"``."""
    return f"{CALC}({expression})"


def format_answer(value: int) -> str:
    """The action string of a final answer: ``format_answer(449) == "answer(449)"``."""
    return f"{ANSWER}({value})"


def render_result(value: int) -> str:
    """The observation text after a successful calculator call: ``render_result(444) == "result: 444"``."""
    return f"{RESULT_PREFIX}{value}"


def render_calc_error(reason: str) -> str:
    """The observation text after a calculator error."""
    return CALC_ERROR.format(reason=reason)


def parse_result(observation_text: str) -> int | None:
    """The calculator result shown in an observation text, or None when it shows none.

    >>> parse_result("result: 444")
    444
    >>> parse_result("What is 37*12+5?") is None
    True
    """
    match = _RESULT.fullmatch(observation_text.strip())
    return int(match.group(1)) if match else None
