"""The ToolCalc calculator: a safe integer evaluator written as a small recursive-descent parser (no ``eval``).

Grammar (whitespace between tokens ignored)::

    expr   := term (("+" | "-") term)*
    term   := unary ("*" unary)*
    unary  := "-" unary | atom
    atom   := INTEGER | "(" expr ")"

Only non-negative integer literals, ``+ - *``, unary minus and parentheses are accepted: names, attribute access,
``**``, ``/``, floats and anything else are rejected with ``CalcError``. Limits keep every call cheap: the
expression length, the literal length, the nesting depth, the magnitude of every intermediate value, and
``max_ops``, the number of binary operations allowed in one call. ToolCalc sets ``max_ops=1`` so that a two-step
question (``37*12+5``) needs two calls.
"""

from __future__ import annotations

import re

MAX_EXPRESSION_CHARS = 64
MAX_LITERAL_DIGITS = 12
MAX_DEPTH = 8
MAX_MAGNITUDE = 10**15

_TOKEN = re.compile(r"\s*(?:([0-9]+)|(\S))")


class CalcError(ValueError):
    """The calculator refused an expression; the message is short enough to show the agent."""


def _tokenize(expression: str) -> list[str]:
    tokens: list[str] = []
    position = 0
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        if match is None:  # only trailing whitespace is left
            break
        number, symbol = match.groups()
        position = match.end()
        if number is not None:
            if len(number) > MAX_LITERAL_DIGITS:
                raise CalcError("number too long")
            tokens.append(number)
        elif symbol not in "+-*()":
            raise CalcError(f"unexpected {symbol!r}")
        else:
            tokens.append(symbol)
    return tokens


class _Parser:
    """Evaluates while parsing; counts binary operations and checks magnitudes as it goes."""

    def __init__(self, tokens: list[str], max_ops: int | None) -> None:
        self.tokens = tokens
        self.position = 0
        self.max_ops = max_ops
        self.ops = 0

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise CalcError("incomplete expression")
        self.position += 1
        return token

    def apply(self, operator: str, left: int, right: int) -> int:
        self.ops += 1
        if self.max_ops is not None and self.ops > self.max_ops:
            raise CalcError(f"too many operations (max {self.max_ops})")
        value = left + right if operator == "+" else left - right if operator == "-" else left * right
        if abs(value) > MAX_MAGNITUDE:
            raise CalcError("number too large")
        return value

    def expr(self, depth: int) -> int:
        value = self.term(depth)
        while self.peek() in ("+", "-"):
            operator = self.take()
            value = self.apply(operator, value, self.term(depth))
        return value

    def term(self, depth: int) -> int:
        value = self.unary(depth)
        while self.peek() == "*":
            self.take()
            if self.peek() == "*":
                raise CalcError("unexpected '*'")
            value = self.apply("*", value, self.unary(depth))
        return value

    def unary(self, depth: int) -> int:
        if self.peek() == "-":
            self.take()
            if depth >= MAX_DEPTH:
                raise CalcError("too deeply nested")
            return -self.unary(depth + 1)
        return self.atom(depth)

    def atom(self, depth: int) -> int:
        token = self.take()
        if token.isdigit():
            return int(token)
        if token == "(":
            if depth >= MAX_DEPTH:
                raise CalcError("too deeply nested")
            value = self.expr(depth + 1)
            if self.take() != ")":
                raise CalcError("missing ')'")
            return value
        raise CalcError(f"unexpected {token!r}")


def evaluate(expression: str, max_ops: int | None = None) -> int:
    """Evaluate an integer expression safely; raises ``CalcError`` on anything outside the grammar or limits.

    >>> evaluate("37*12+5")
    449
    >>> evaluate("(3+4)*-5")
    -35
    >>> for unsafe in ("37*12+5", "__import__('os')", "2**64"):
    ...     try:
    ...         evaluate(unsafe, max_ops=1)
    ...     except CalcError as refused:
    ...         print(refused)
    too many operations (max 1)
    unexpected '_'
    unexpected '*'
    """
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalcError("expression too long")
    tokens = _tokenize(expression)
    if not tokens:
        raise CalcError("empty expression")
    parser = _Parser(tokens, max_ops)
    value = parser.expr(depth=0)
    if parser.peek() is not None:
        raise CalcError(f"unexpected {parser.peek()!r}")
    return value
