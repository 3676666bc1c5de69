"""What a guide is made of: prose about one app, help for its commands, and multi-step procedures.

Guide text is written once, against command ids, and rendered per UI seed: a placeholder such as
`{do:replace}` becomes "open the “Edit” menu and choose “Replace” (or press Ctrl+H)" for seed 0 and whatever
menu and label another seed deals (see `markup.py`). The prose itself never names a menu or a label, so it
cannot go stale when the randomizer moves a command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PLACEHOLDER = re.compile(r"\{(do|path|label|menu|key):(\w+)\}")
"""`{kind:command_id}` in guide text; the kinds are documented in `markup.expand`."""


@dataclass(frozen=True)
class CommandHelp:
    """What the one-sentence `Command.doc` leaves out: steps before choosing the command (`before`, e.g. select
    the layer), steps after it (`after`, e.g. fill the dialog), and remarks (context menus, limits)."""

    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    remarks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Procedure:
    """A how-to page for a task that takes several commands, e.g. "Export an image as PNG"."""

    slug: str
    title: str
    summary: str
    steps: tuple[str, ...]
    remarks: tuple[str, ...] = ()

    def commands(self) -> list[str]:
        """The command ids the procedure's text refers to, in order of first mention."""
        text = " ".join((self.summary, *self.steps, *self.remarks))
        return list(dict.fromkeys(match[2] for match in PLACEHOLDER.finditer(text)))


@dataclass(frozen=True)
class Section:
    """A headed part of an app's overview page."""

    heading: str
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class Guide:
    """The documentation of one app: `app` is its folder name, `product` the name its window shows."""

    app: str
    product: str
    kind: str
    summary: str
    overview: tuple[Section, ...]
    procedures: tuple[Procedure, ...]
    commands: dict[str, CommandHelp] = field(default_factory=dict)

    def procedure(self, slug: str) -> Procedure | None:
        return next((p for p in self.procedures if p.slug == slug), None)

    def texts(self) -> list[str]:
        """Every piece of guide text (for checking its placeholders)."""
        out = [self.summary, *(p for s in self.overview for p in s.paragraphs)]
        for help_ in self.commands.values():
            out += [*help_.before, *help_.after, *help_.remarks]
        for procedure in self.procedures:
            out += [procedure.summary, *procedure.steps, *procedure.remarks]
        return out
