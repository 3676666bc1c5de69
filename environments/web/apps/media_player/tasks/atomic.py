"""The media player's atomic task templates (one command each); composed and long ones are in `composed.py`
and `long.py`.

Every template draws a library seed (`media.py`) and its targets from `rng`, checks the player's state
(`window.raygent.getState()`), and solves through the menus the UI seed names. Times are checked within a
second (the clock is simulated but runs in wall time while playing).
"""

from __future__ import annotations

import itertools
import random
from typing import Any, ClassVar

from raygent.environments.web.apps.media_player import expert
from raygent.environments.web.apps.media_player.media import initial_state, library
from raygent.environments.web.task import ATOMIC, Solver, WebTask, register
from raygent.environments.web.ui import UISpec

Params = dict[str, Any]
Verdict = tuple[float, bool, str]


def verdict(checks: list[tuple[bool, str]]) -> Verdict:
    """1.0 and done when every check holds; else 0.0 and the first failing check's message."""
    for ok, message in checks:
        if not ok:
            return 0.0, False, message
    return 1.0, True, "done"


def track_of(params: Params, key: str = "track") -> dict[str, Any]:
    return next(t for t in library(params["library"]) if t["id"] == params[key])


def titles(state: dict[str, Any]) -> list[str]:
    """The playlist's titles in order, as the state shows them."""
    names = {t["id"]: t["title"] for t in state.get("library", [])}
    return [names.get(i, "?") for i in state.get("playlist", [])]


class MediaTask(WebTask):
    """Shared parts: the app, the library seed, the default initial state (everything queued, stopped)."""

    app: ClassVar[str] = "media_player"
    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 12

    def base(self, rng: random.Random) -> Params:
        return {"library": rng.randrange(10_000)}

    def initial_state(self, params: Params) -> dict[str, Any]:
        return initial_state(params["library"])


@register
class PlayTrack(MediaTask):
    template = "play_track"

    def sample(self, rng: random.Random) -> Params:
        return {**self.base(rng), "track": f"t{rng.randint(1, 8)}"}

    def goal(self, params: Params) -> str:
        t = track_of(params)
        return f"Play the track “{t['title']}” by {t['artist']}."

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        return verdict(
            [
                (state.get("current") == params["track"], "another track is current"),
                (bool(state.get("playing")), "the track is not playing"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        yield from expert.play(track_of(params)["title"], obs)


@register
class SetSpeed(MediaTask):
    template = "set_speed"

    def sample(self, rng: random.Random) -> Params:
        return {**self.base(rng), "speed": rng.choice([0.5, 0.75, 1.25, 1.5, 1.75, 2])}

    def goal(self, params: Params) -> str:
        return f"Set the playback speed to {params['speed']}×."

    def initial_state(self, params: Params) -> dict[str, Any]:
        return initial_state(params["library"], current="t1")

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        return verdict([(state.get("speed") == params["speed"], f"the speed is {state.get('speed')}×")])

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        obs = yield from expert.command(ui, "speed", obs)
        obs = yield f'select({expert.find(obs, "Speed", role="combobox")}, "{params["speed"]}×")'
        yield from expert.press(obs, "Apply")


@register
class SetVolume(MediaTask):
    template = "set_volume"

    def sample(self, rng: random.Random) -> Params:
        return {**self.base(rng), "volume": rng.choice([v for v in range(5, 100, 5) if v != 80])}

    def goal(self, params: Params) -> str:
        return f"Set the volume to {params['volume']}%."

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        return verdict([(state.get("volume") == params["volume"], f"the volume is {state.get('volume')}%")])

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        yield from expert.fill(obs, "Volume", str(params["volume"]), role="slider")


@register
class MuteAudio(MediaTask):
    template = "mute_audio"

    def sample(self, rng: random.Random) -> Params:
        return {**self.base(rng), "muted": rng.random() < 0.7}

    def goal(self, params: Params) -> str:
        return "Mute the sound." if params["muted"] else "The sound is muted: bring it back."

    def initial_state(self, params: Params) -> dict[str, Any]:
        return initial_state(params["library"], muted=not params["muted"])

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        return verdict([(state.get("muted") == params["muted"], "the sound is not as asked")])

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        yield from expert.command(ui, "mute", obs)


@register
class SubtitlesOn(MediaTask):
    template = "subtitles_on"

    def sample(self, rng: random.Random) -> Params:
        params = self.base(rng)
        with_subtitles = [t for t in library(params["library"]) if t["subtitles"]]
        chosen = rng.choice(with_subtitles)
        return {**params, "track": chosen["id"], "language": rng.choice(sorted(chosen["subtitles"]))}

    def goal(self, params: Params) -> str:
        return f"Show {params['language']} subtitles for “{track_of(params)['title']}”, which is loaded."

    def initial_state(self, params: Params) -> dict[str, Any]:
        return initial_state(params["library"], current=params["track"])

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        return verdict(
            [
                (state.get("current") == params["track"], "another track is current"),
                (state.get("subtitle") == params["language"], f"subtitles: {state.get('subtitle')}"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        yield from expert.choose_subtitles(ui, params["language"], obs)


@register
class SetRepeat(MediaTask):
    template = "set_repeat"
    CYCLE: ClassVar[list[str]] = ["off", "all", "one"]

    def sample(self, rng: random.Random) -> Params:
        start = rng.choice(self.CYCLE)
        return {**self.base(rng), "start": start, "mode": rng.choice([m for m in self.CYCLE if m != start])}

    def goal(self, params: Params) -> str:
        return {
            "off": "Turn repeating off.",
            "all": "Make the player repeat the whole playlist.",
            "one": "Make the player repeat the current track over and over.",
        }[params["mode"]]

    def initial_state(self, params: Params) -> dict[str, Any]:
        return initial_state(params["library"], repeat=params["start"])

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        return verdict([(state.get("repeat") == params["mode"], f"repeat is {state.get('repeat')}")])

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        presses = (self.CYCLE.index(params["mode"]) - self.CYCLE.index(params["start"])) % 3
        for _ in range(presses):
            obs = yield from expert.command(ui, "cycle_repeat", obs)


@register
class ToggleShuffle(MediaTask):
    template = "toggle_shuffle"

    def sample(self, rng: random.Random) -> Params:
        return {**self.base(rng), "shuffle": rng.random() < 0.7}

    def goal(self, params: Params) -> str:
        return "Play the playlist in random order." if params["shuffle"] else "Stop playing in random order."

    def initial_state(self, params: Params) -> dict[str, Any]:
        return initial_state(params["library"], shuffle=not params["shuffle"])

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        return verdict([(state.get("shuffle") == params["shuffle"], "shuffle is not as asked")])

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        yield from expert.command(ui, "shuffle", obs)


SORT_KEYS = {
    "title": lambda t: t["title"].casefold(),
    "artist": lambda t: (t["artist"].casefold(), t["title"].casefold()),
    "duration": lambda t: t["duration"],
}


def is_sorted(state: dict[str, Any], key: str) -> bool:
    tracks = {t["id"]: t for t in state.get("library", [])}
    keys = [SORT_KEYS[key](tracks[i]) for i in state.get("playlist", []) if i in tracks]
    return all(a <= b for a, b in itertools.pairwise(keys))


@register
class SortPlaylist(MediaTask):
    template = "sort_playlist"

    def sample(self, rng: random.Random) -> Params:
        params = self.base(rng)
        order = [f"t{i}" for i in range(1, 9)]
        rng.shuffle(order)
        return {**params, "order": order, "key": rng.choice(sorted(SORT_KEYS))}

    def goal(self, params: Params) -> str:
        what = {"title": "title (A to Z)", "artist": "artist (A to Z)", "duration": "length, shortest first"}
        return f"Order the playlist by {what[params['key']]}."

    def initial_state(self, params: Params) -> dict[str, Any]:
        return initial_state(params["library"], playlist=params["order"])

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        same = sorted(state.get("playlist", [])) == sorted(params["order"])
        return verdict(
            [
                (same, "the playlist lost or gained tracks"),
                (is_sorted(state, params["key"]), f"the playlist is not ordered by {params['key']}"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        yield from expert.command(ui, f"sort_{params['key']}", obs)


@register
class FullscreenVideo(MediaTask):
    template = "fullscreen_video"

    def sample(self, rng: random.Random) -> Params:
        return {**self.base(rng), "track": f"t{rng.randint(1, 8)}"}

    def goal(self, params: Params) -> str:
        return f"Show “{track_of(params)['title']}”, which is loaded, on the whole window (hide the playlist)."

    def initial_state(self, params: Params) -> dict[str, Any]:
        return initial_state(params["library"], current=params["track"])

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        return verdict(
            [
                (bool(state.get("fullscreen")), "the player is not full-window"),
                (state.get("current") == params["track"], "another track is current"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        yield f"left_double({expert.find(obs, 'Video', role='canvas')})"
