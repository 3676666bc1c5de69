"""Captions of what changed between two screens (accessibility text), the World State Model's per-step captions.

A screen is the suite's observation text (`[id] role "name" value=... flags`, full or compact). `screen_lines`
normalizes it for comparison: element ids and boxes are dropped (ids name elements for actions; boxes move when
anything above them moves), whitespace is collapsed, lines without a role or name are skipped. `caption(before,
after)` is a short text: elements that appeared (`+`), disappeared (`-`) and changed value or state (`~`, paired
by role and name): changes first, then what appeared, then what disappeared (a menu or dialog that opens hides
much of the page; what it shows matters more), each in screen order, cut to `limit` characters; `NO_CHANGE`
when the screens read the same.
SEAgent's WSM writes such captions from screenshots with a VLM; here they are computed, so they are exact.
"""

from __future__ import annotations

import difflib
import re

NO_CHANGE = "no visible change"
_ID = re.compile(r"^\[\d+\]\s*")
_BOX = re.compile(r"\s*box=\(\d+,\d+,\d+,\d+\)")
_HEAD = re.compile(r'^(\S+)(?: "((?:[^"\\]|\\.)*)")?')


def screen_lines(text: str) -> list[str]:
    """The screen's lines as compared: no ids, no boxes, single spaces, no empty lines."""
    lines = []
    for raw in text.splitlines():
        line = _BOX.sub("", _ID.sub("", raw.strip()))
        line = " ".join(line.split())
        if line:
            lines.append(line)
    return lines


def _key(line: str) -> str:
    """Role and name of a line: what pairs an element's old and new state."""
    match = _HEAD.match(line)
    return match.group(0) if match else line


def changes(before: str, after: str) -> list[str]:
    """The change lines: `~ role "name": old -> new`, then `+ line`, then `- line` (see the module docstring)."""
    old, new = screen_lines(before), screen_lines(after)
    changed: list[str] = []
    appeared: list[str] = []
    gone: list[str] = []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        removed, added = old[a0:a1], new[b0:b1]
        added_by_key: dict[str, str] = {}
        for line in added:
            added_by_key.setdefault(_key(line), line)
        paired = set()
        for line in removed:
            key = _key(line)
            if key in added_by_key and key not in paired:
                paired.add(key)
                rest_old = line[len(key) :].strip() or "(plain)"
                rest_new = added_by_key[key][len(key) :].strip() or "(plain)"
                changed.append(f"~ {key}: {rest_old} -> {rest_new}")
            else:
                gone.append(f"- {line}")
        appeared.extend(f"+ {line}" for line in added if _key(line) not in paired)
    return changed + appeared + gone


def caption(before: str, after: str, limit: int = 400) -> str:
    """What changed from `before` to `after`, one change per line, at most `limit` characters."""
    lines = changes(before, after)
    if not lines:
        return NO_CHANGE
    text = ""
    for index, line in enumerate(lines):
        candidate = f"{text}\n{line}" if text else line
        if len(candidate) > limit:
            more = len(lines) - index
            return f"{text}\n(+{more} more)" if text else line[: limit - 1] + "…"
        text = candidate
    return text
