"""The apps' user-interface vocabulary and its seeded randomization (DocOS: the procedure lives in the docs).

Each app declares its commands once (`COMMANDS` in `apps/<app>/commands.py`): an id the app's JavaScript
binds to, a default label, a menu, an optional keyboard shortcut, and alternative labels. `randomize(commands,
seed)` deals every command a label from its alternatives and may move it to another menu, deterministically in
the seed; seed 0 is the default layout. The app server renders the result as `/<app>/ui.json?seed=N`, the
app builds its menus from that file, and the documentation site writes its how-to pages from the same
`UISpec`, so the docs always describe the layout the agent sees.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Command:
    """One thing the app can do from its menus.

    `id` is what the app's JavaScript binds to (`data-command` attribute); `menu` the default top-level menu;
    `alternatives` other labels the randomizer may pick; `movable_to` other menus it may be placed in;
    `shortcut` a fixed key chord in Playwright's notation (`Control+S`), or None; `doc` one sentence for the docs.
    """

    id: str
    label: str
    menu: str
    doc: str
    shortcut: str | None = None
    alternatives: tuple[str, ...] = ()
    movable_to: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlacedCommand:
    id: str
    label: str
    menu: str
    shortcut: str | None
    doc: str


@dataclass(frozen=True)
class UISpec:
    """The layout one seed gives an app: the menus in order and each command's label and menu."""

    app: str
    seed: int
    menus: tuple[str, ...]
    commands: dict[str, PlacedCommand] = field(default_factory=dict)

    def label(self, command_id: str) -> str:
        return self.commands[command_id].label

    def menu_of(self, command_id: str) -> str:
        return self.commands[command_id].menu

    def to_json(self) -> dict[str, object]:
        """The `ui.json` document the app reads: `{"app", "seed", "menus": [...], "commands": {id: {...}}}`."""
        return {
            "app": self.app,
            "seed": self.seed,
            "menus": list(self.menus),
            "commands": {cid: asdict(c) for cid, c in self.commands.items()},
        }


def randomize(app: str, commands: Sequence[Command], seed: int) -> UISpec:
    """Deal labels and menus for `seed` (0: the defaults). Labels stay unique within the app.

    >>> cmds = [Command("save", "Save", "File", "Save the file.", alternatives=("Store", "Keep"))]
    >>> randomize("demo", cmds, 0).label("save")
    'Save'
    >>> randomize("demo", cmds, 3).label("save") in {"Save", "Store", "Keep"}
    True
    """
    ids = [c.id for c in commands]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{app}: duplicate command ids")
    rng = random.Random(f"{app}:{seed}")
    used: set[str] = set()
    placed: dict[str, PlacedCommand] = {}
    for command in commands:
        if seed == 0:
            label, menu = command.label, command.menu
        else:
            options = [label for label in (command.label, *command.alternatives) if label not in used]
            label = rng.choice(options) if options else command.label
            menu = rng.choice((command.menu, *command.movable_to))
        if label in used:
            raise ValueError(f"{app}: label {label!r} of {command.id!r} is not unique")
        used.add(label)
        placed[command.id] = PlacedCommand(command.id, label, menu, command.shortcut, command.doc)
    menus = tuple(dict.fromkeys(c.menu for c in commands).keys())
    extra = tuple(dict.fromkeys(p.menu for p in placed.values() if p.menu not in menus).keys())
    return UISpec(app=app, seed=seed, menus=menus + extra, commands=placed)
