"""Generated workspaces for the code editor's tasks: small Mini programs, text files, and what they print.

Mini is the editor's own language (`interpreter.js`): `let x = 3`, `print "a: " + x`, `if/while/repeat … end`.
`evaluate` mirrors the few expressions these generators write, so a task knows its expected output without
running the page. Every draw comes from the task's `random.Random`, so unseen parameters exist for held-out
evaluation.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

NAMES = (
    "price", "count", "total", "speed", "width", "height", "score", "bonus", "rate", "limit", "weight", "budget",
    "level", "points", "items", "steps", "margin", "offset", "factor", "amount", "volume", "length", "depth", "quota",
)  # fmt: skip
NEW_NAMES = ("value", "result", "answer", "sum_of", "product", "tally", "figure", "metric", "size", "extent")
LABELS = ("Result", "Answer", "Output", "Sum", "Balance", "Outcome", "Reading", "Estimate", "Forecast", "Net")
PROGRAM_FILES = ("main.mini", "calc.mini", "report.mini", "stats.mini", "inventory.mini", "budget.mini")
TEXT_FILES = ("notes.txt", "todo.txt", "README.md", "changelog.txt", "ideas.txt")
NEW_FILES = ("utils.mini", "helpers.mini", "draft.txt", "plan.md", "scratch.mini", "lib/tools.mini", "docs/intro.md")
WORDS = (
    "Apricot", "Banana", "Cherry", "Damson", "Elderberry", "Fig", "Grape", "Huckleberry", "Kiwi", "Lemon", "Mango",
    "Nectarine", "Olive", "Papaya", "Quince", "Raspberry", "Satsuma", "Tangerine", "Ugli", "Vanilla", "Walnut",
)  # fmt: skip
NOTES = (
    "Remember to update the tests.", "Ship the release on Friday.", "Ask about the new API keys.",
    "Refactor the parser module.", "Write the migration guide.", "Check the nightly build logs.",
)
OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


@dataclass(frozen=True)
class Program:
    """A three-variable Mini program `c = a op b` that prints `label: c`."""

    a: str
    b: str
    c: str
    va: int
    vb: int
    op: str
    label: str

    @property
    def value(self) -> int:
        return OPS[self.op](self.va, self.vb)

    @property
    def output(self) -> str:
        return f"{self.label}: {self.value}"

    def lines(self) -> list[str]:
        return [
            f"# {self.label.lower()} calculation",
            f"let {self.a} = {self.va}",
            f"let {self.b} = {self.vb}",
            f"let {self.c} = {self.a} {self.op} {self.b}",
            f'print "{self.label}: " + {self.c}',
        ]

    def source(self) -> str:
        return "\n".join(self.lines()) + "\n"


def draw_program(rng: random.Random, exclude: tuple[str, ...] = ()) -> Program:
    a, b, c = rng.sample([n for n in NAMES if n not in exclude], 3)
    return Program(a, b, c, rng.randint(2, 19), rng.randint(2, 9), rng.choice(sorted(OPS)), rng.choice(LABELS))


def text_file(rng: random.Random) -> str:
    return "\n".join(rng.sample(NOTES, 2)) + "\n"


def word_list(rng: random.Random, size: int = 6) -> str:
    """Unsorted capitalized words, one per line."""
    words = rng.sample(WORDS, size)
    while words == sorted(words):
        rng.shuffle(words)
    return "\n".join(words) + "\n"


def workspace(rng: random.Random, programs: int = 2, texts: int = 1) -> dict[str, str]:
    """A few Mini programs and text files: `{path: content}`."""
    files = {path: draw_program(rng).source() for path in rng.sample(PROGRAM_FILES, programs)}
    files.update({path: text_file(rng) for path in rng.sample(TEXT_FILES, texts)})
    return files


def new_name(rng: random.Random, files: dict[str, str]) -> str:
    return rng.choice([n for n in NEW_FILES if n not in files])


def replace_word(text: str, old: str, new: str) -> str:
    """Replace `old` where it stands as a whole word (the generators' names never occur inside other words)."""
    return re.sub(rf"(?<!\w){re.escape(old)}(?!\w)", new, text)


def is_commented(line: str, original: str) -> bool:
    """Whether `line` is `original` behind a `#` comment marker (any indentation and spacing)."""
    stripped = line.strip()
    return stripped.startswith("#") and stripped.lstrip("#").strip() == original.strip()


def successful_runs(state: dict, path: str) -> list[dict]:
    """The runs of `path` in the state that ended without an error."""
    return [r for r in state.get("runs", []) if r.get("file") == path and r.get("error") is None]
