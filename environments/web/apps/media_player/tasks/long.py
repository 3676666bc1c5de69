"""The media player's long task templates: several features in one episode."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from raygent.environments.web.apps.media_player import expert
from raygent.environments.web.apps.media_player.media import format_time, initial_state, library
from raygent.environments.web.apps.media_player.tasks.atomic import (
    MediaTask,
    Params,
    Verdict,
    is_sorted,
    track_of,
    verdict,
)
from raygent.environments.web.apps.media_player.tasks.composed import PLAYLIST_NAMES
from raygent.environments.web.task import LONG, Solver, register
from raygent.environments.web.ui import UISpec


class LongTask(MediaTask):
    difficulty: ClassVar[int] = LONG
    max_steps: ClassVar[int] = 40


def _title(params: Params, track: str) -> str:
    return track_of({**params, "track": track})["title"]


@register
class BuildPlaylist(LongTask):
    template = "build_playlist"

    def sample(self, rng: random.Random) -> Params:
        start = [f"t{i}" for i in sorted(rng.sample(range(1, 9), 4))]
        wanted = [f"t{i}" for i in rng.sample(range(1, 9), 3)]
        return {**self.base(rng), "start": start, "tracks": wanted, "name": rng.choice(PLAYLIST_NAMES)}

    def goal(self, params: Params) -> str:
        names = ", ".join(f"“{_title(params, t)}”" for t in params["tracks"])
        return f"Replace the playlist with {names}, in this order, and save it as “{params['name']}”."

    def initial_state(self, params: Params) -> dict[str, Any]:
        return initial_state(params["library"], playlist=params["start"])

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        saved = state.get("files", {}).get(f"{params['name']}.m3u")
        return verdict(
            [
                (state.get("playlist") == params["tracks"], "the playlist is not the asked one"),
                (saved == params["tracks"], "the asked playlist is not saved under that name"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        obs = yield from expert.command(ui, "clear_playlist", obs)
        obs = yield from expert.command(ui, "add_tracks", obs)
        for track in params["tracks"]:
            t = track_of({**params, "track": track})
            name = f"{t['title']} — {t['artist']} ({format_time(t['duration'])})"
            obs = yield f"click({expert.find(obs, name, role='checkbox')})"
        obs = yield from expert.press(obs, "Add")
        obs = yield from expert.command(ui, "save_playlist", obs)
        obs = yield from expert.fill(obs, "Playlist name", params["name"])
        yield from expert.press(obs, "Save")


@register
class StudySession(LongTask):
    template = "study_session"

    def sample(self, rng: random.Random) -> Params:
        params = self.base(rng)
        chosen = rng.choice([t for t in library(params["library"]) if t["subtitles"]])
        return {
            **params,
            "track": chosen["id"],
            "time": rng.randint(10, chosen["duration"] // 2),
            "speed": rng.choice([0.5, 0.75, 1.25, 1.5]),
            "language": rng.choice(sorted(chosen["subtitles"])),
            "volume": rng.choice([30, 40, 50, 60]),
        }

    def goal(self, params: Params) -> str:
        return (
            f"Get “{track_of(params)['title']}” ready for study and play it: start from "
            f"{format_time(params['time'])}, at {params['speed']}× speed, with {params['language']} subtitles "
            f"and the volume at {params['volume']}%."
        )

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        position = state.get("position", -9)
        in_window = params["time"] - 1 <= position <= params["time"] + 30 * params["speed"]
        return verdict(
            [
                (state.get("current") == params["track"], "another track is current"),
                (state.get("speed") == params["speed"], f"the speed is {state.get('speed')}×"),
                (state.get("subtitle") == params["language"], f"subtitles: {state.get('subtitle')}"),
                (state.get("volume") == params["volume"], f"the volume is {state.get('volume')}%"),
                (in_window, "it did not start from the asked time"),
                (bool(state.get("playing")), "it is not playing"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        obs = yield from expert.play(track_of(params)["title"], obs)
        obs = yield from expert.play_pause(ui, obs)
        obs = yield from expert.command(ui, "speed", obs)
        obs = yield f'select({expert.find(obs, "Speed", role="combobox")}, "{params["speed"]}×")'
        obs = yield from expert.press(obs, "Apply")
        obs = yield from expert.choose_subtitles(ui, params["language"], obs)
        obs = yield from expert.fill(obs, "Volume", str(params["volume"]), role="slider")
        obs = yield from expert.go_to_time(ui, params["time"], obs)
        yield from expert.play_pause(ui, obs)


@register
class FindLine(LongTask):
    template = "find_line"

    def sample(self, rng: random.Random) -> Params:
        params = self.base(rng)
        counts: dict[str, int] = {}
        lines = []
        for track in library(params["library"]):
            for language, cues in track["subtitles"].items():
                for start, end, text in cues:
                    counts[text.casefold()] = counts.get(text.casefold(), 0) + 1
                    lines.append((track["id"], language, start, end, text))
        unique = [line for line in lines if counts[line[4].casefold()] == 1 and line[1] == "English"]
        track, _, start, end, text = rng.choice(unique)
        return {**params, "track": track, "start": start, "end": end, "line": text}

    def goal(self, params: Params) -> str:
        return (
            f"Somewhere in the playlist someone says “{params['line']}” Leave the player paused on that line, "
            "in that track."
        )

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        position = state.get("position", -9)
        return verdict(
            [
                (state.get("current") == params["track"], "another track is current"),
                (not state.get("playing"), "it is still playing"),
                (params["start"] - 0.5 <= position <= params["end"], "the player is not on that line"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        obs = yield from expert.command(ui, "search_subtitles", obs)
        obs = yield from expert.fill(obs, "Find line", params["line"])
        obs = yield from expert.press(obs, "Search")
        result = f"{track_of(params)['title']} · {format_time(params['start'])} ·"
        yield f"click({expert.find(obs, result, role='button', exact=False)})"


@register
class CuratePlaylist(LongTask):
    template = "curate_playlist"

    def sample(self, rng: random.Random) -> Params:
        params = self.base(rng)
        durations = sorted(t["duration"] for t in library(params["library"]))
        threshold = (durations[rng.randint(2, 4)] // 30 + 1) * 30
        threshold = min(threshold, durations[-2] // 30 * 30)
        return {**params, "threshold": threshold}

    def short(self, params: Params) -> list[str]:
        return [t["id"] for t in library(params["library"]) if t["duration"] < params["threshold"]]

    def goal(self, params: Params) -> str:
        return (
            f"Take every track shorter than {format_time(params['threshold'])} out of the playlist, order the rest "
            "by artist, and make the whole playlist repeat."
        )

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        kept = sorted(f"t{i}" for i in range(1, 9) if f"t{i}" not in self.short(params))
        return verdict(
            [
                (sorted(state.get("playlist", [])) == kept, "the playlist does not hold just the long tracks"),
                (is_sorted(state, "artist"), "the playlist is not ordered by artist"),
                (state.get("repeat") == "all", f"repeat is {state.get('repeat')}"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        for track in self.short(params):
            obs = yield from expert.context_command(ui, "remove_track", _title(params, track), obs)
        obs = yield from expert.command(ui, "sort_artist", obs)
        yield from expert.command(ui, "cycle_repeat", obs)
