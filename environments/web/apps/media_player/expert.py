"""Building blocks of the media player's scripted solvers (sub-generators for `yield from`).

Each block takes the latest observation text, yields actions, and returns the observation after its last
action. Menu commands go through the menus the seed's `UISpec` names (the expert is privileged).
"""

from __future__ import annotations

from collections.abc import Generator

from raygent.environments.web.observe import find, parse
from raygent.environments.web.ui import UISpec

Steps = Generator[str, str, str]


def look() -> Steps:
    """The first action of a solver, which has no observation yet: look without acting."""
    return (yield "wait()")


def command(ui: UISpec, command_id: str, obs: str) -> Steps:
    """Open the command's menu and choose it."""
    obs = yield f"click({find(obs, ui.menu_of(command_id), role='button')})"
    return (yield f"click({menu_item(obs, ui.label(command_id))})")


def menu_item(obs: str, label: str) -> int:
    """The id of the (possibly checkable) menu item with this label."""
    for element in parse(obs):
        if element.id is not None and element.role.startswith("menuitem") and element.name == label:
            return element.id
    raise LookupError(f"no menu item {label!r} in the observation:\n{obs[:2000]}")


def track_row(obs: str, title: str) -> int:
    """The id of the playlist row of the track with this title."""
    for element in parse(obs):
        if element.id is not None and element.role == "option" and f"{title} — " in element.name:
            return element.id
    raise LookupError(f"no playlist row for {title!r} in the observation:\n{obs[:2000]}")


def context_command(ui: UISpec, command_id: str, title: str, obs: str) -> Steps:
    """Right-click the track's row and choose the command from the context menu."""
    obs = yield f"right_single({track_row(obs, title)})"
    return (yield f"click({menu_item(obs, ui.label(command_id))})")


def play(title: str, obs: str) -> Steps:
    """Double-click the track's row: it becomes current and plays from the start."""
    return (yield f"left_double({track_row(obs, title)})")


def play_pause(ui: UISpec, obs: str) -> Steps:
    """Pause a playing track, or play a paused one (the play/pause command)."""
    return (yield from command(ui, "play_pause", obs))


def fill(obs: str, label: str, text: str, role: str | None = None) -> Steps:
    """Type into the field with this label (its value is replaced)."""
    return (yield f"type({find(obs, label, role=role)}, {_quote(text)})")


def press(obs: str, label: str, role: str | None = "button") -> Steps:
    return (yield f"click({find(obs, label, role=role)})")


def go_to_time(ui: UISpec, seconds: float, obs: str) -> Steps:
    obs = yield from command(ui, "go_to_time", obs)
    obs = yield from fill(obs, "Time (m:ss)", f"{int(seconds) // 60}:{int(seconds) % 60:02d}")
    return (yield from press(obs, "Go"))


def choose_subtitles(ui: UISpec, language: str, obs: str) -> Steps:
    obs = yield from command(ui, "subtitle_track", obs)
    obs = yield f"click({find(obs, language, role='radio')})"
    return (yield from press(obs, "Apply"))


def _quote(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)
