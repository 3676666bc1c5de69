"""Guide text to HTML and to plain text, for one UI seed.

The markup is small on purpose (guide authors write sentences, not HTML):

- `{do:ID}`: "open the “Menu” menu and choose “Label”", plus " (or press Ctrl+X)" when the command has a
  shortcut; capitalized at the start of a sentence.
- `{path:ID}`: "“Menu” ▸ “Label”"; `{label:ID}`: "“Label”"; `{menu:ID}`: "“Menu”"; `{key:ID}`: "Ctrl+X".
- `**Name**`: a fixed name on screen (a field, a button): "“Name”". `` `text` ``: literal text to type.

UI names are quoted in the plain text as well as the HTML, because an agent reads the page's accessibility
tree, where bold type does not show. Everything else is escaped.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from raygent.environments.web.ui import UISpec

_TOKEN = re.compile(r"\{(do|path|label|menu|key):(\w+)\}|\*\*(.+?)\*\*|`([^`]+)`")


@dataclass(frozen=True)
class Rendered:
    html: str
    plain: str


def shortcut_text(chord: str) -> str:
    """A Playwright chord as people write it: `Control+Shift+p` -> `Ctrl+Shift+P`.

    >>> shortcut_text("Control+Shift+p"), shortcut_text("Shift+F5"), shortcut_text("Alt+ArrowUp")
    ('Ctrl+Shift+P', 'Shift+F5', 'Alt+ArrowUp')
    """
    *mods, key = chord.split("+") if chord != "+" else ["+"]
    mods = ["Ctrl" if m == "Control" else m for m in mods]
    return "+".join([*mods, key.upper() if len(key) == 1 else key])


def _name(text: str) -> Rendered:
    return Rendered(f"“<b>{html.escape(text)}</b>”", f"“{text}”")


def _placeholder(kind: str, command_id: str, spec: UISpec) -> Rendered:
    placed = spec.commands[command_id]
    if kind == "label":
        return _name(placed.label)
    if kind == "menu":
        return _name(placed.menu)
    if kind == "key":
        if placed.shortcut is None:
            raise KeyError(f"{spec.app}/{command_id} has no shortcut")
        key = shortcut_text(placed.shortcut)
        return Rendered(f"<kbd>{html.escape(key)}</kbd>", key)
    menu, label = _name(placed.menu), _name(placed.label)
    if kind == "path":
        return Rendered(f"{menu.html} ▸ {label.html}", f"{menu.plain} ▸ {label.plain}")
    html_text = f"open the {menu.html} menu and choose {label.html}"
    plain_text = f"open the {menu.plain} menu and choose {label.plain}"
    if placed.shortcut is not None:
        key = shortcut_text(placed.shortcut)
        html_text += f" (or press <kbd>{html.escape(key)}</kbd>)"
        plain_text += f" (or press {key})"
    return Rendered(html_text, plain_text)


def expand(text: str, spec: UISpec) -> Rendered:
    """Render one piece of guide text for `spec`'s seed (raises `KeyError` for an unknown command id).

    >>> from raygent.environments.web.ui import Command, randomize
    >>> spec = randomize("demo", [Command("save", "Save", "File", "Save it.", "Control+s")], 0)
    >>> expand("{do:save}, then press **OK**.", spec).plain
    'Open the “File” menu and choose “Save” (or press Ctrl+S), then press “OK”.'
    """
    html_parts: list[str] = []
    plain_parts: list[str] = []
    position = 0
    for match in _TOKEN.finditer(text):
        html_parts.append(html.escape(text[position : match.start()]))
        plain_parts.append(text[position : match.start()])
        if match[1]:
            piece = _placeholder(match[1], match[2], spec)
        elif match[3]:
            piece = _name(match[3])
        else:
            piece = Rendered(f"<code>{html.escape(match[4])}</code>", match[4])
        if match.start() == 0 and match[1] == "do":
            piece = Rendered(piece.html[0].upper() + piece.html[1:], piece.plain[0].upper() + piece.plain[1:])
        html_parts.append(piece.html)
        plain_parts.append(piece.plain)
        position = match.end()
    html_parts.append(html.escape(text[position:]))
    plain_parts.append(text[position:])
    return Rendered("".join(html_parts), "".join(plain_parts))
