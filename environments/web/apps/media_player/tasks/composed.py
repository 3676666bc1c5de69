"""The media player's composed task templates: a few commands, dialogs or context menus in a row."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from raygent.environments.web.apps.media_player import expert
from raygent.environments.web.apps.media_player.media import format_time, initial_state, library
from raygent.environments.web.apps.media_player.tasks.atomic import MediaTask, Params, Verdict, track_of, verdict
from raygent.environments.web.task import COMPOSED, Solver, register
from raygent.environments.web.ui import UISpec

PLAYLIST_NAMES = ("Road Trip", "Morning Run", "Late Shift", "Sunday Chores", "Deep Focus", "Rainy Day", "Night Bus")
NEW_TITLES = ("Blue Hour", "Open Window", "Tin Roof", "Lost Signal", "Low Tide", "Fox Lantern", "Grey Orchard")
NEW_ARTISTS = ("Ada Finch", "The Night Porters", "Milo Serrat", "Vera Stone", "Quiet Harbour")


class ComposedTask(MediaTask):
    difficulty: ClassVar[int] = COMPOSED
    max_steps: ClassVar[int] = 20


@register
class SeekAndPause(ComposedTask):
    template = "seek_pause"

    def sample(self, rng: random.Random) -> Params:
        params = {**self.base(rng), "track": f"t{rng.randint(1, 8)}"}
        return {**params, "time": rng.randint(10, track_of(params)["duration"] - 10)}

    def goal(self, params: Params) -> str:
        return f"Open “{track_of(params)['title']}” and leave it paused at {format_time(params['time'])}."

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        return verdict(
            [
                (state.get("current") == params["track"], "another track is current"),
                (not state.get("playing"), "the track is still playing"),
                (abs(state.get("position", -9) - params["time"]) <= 1, "the position is not the asked time"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        obs = yield from expert.play(track_of(params)["title"], obs)
        obs = yield from expert.play_pause(ui, obs)
        yield from expert.go_to_time(ui, params["time"], obs)


@register
class MoveTrack(ComposedTask):
    template = "move_track"

    def sample(self, rng: random.Random) -> Params:
        source, target = rng.sample(range(1, 9), 2)
        return {**self.base(rng), "track": f"t{source}", "position": target}

    def goal(self, params: Params) -> str:
        return f"Move “{track_of(params)['title']}” to place {params['position']} of the playlist."

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        playlist = state.get("playlist", [])
        others = [i for i in playlist if i != params["track"]]
        expected_others = [f"t{i}" for i in range(1, 9) if f"t{i}" != params["track"]]
        at = playlist.index(params["track"]) + 1 if params["track"] in playlist else None
        return verdict(
            [
                (others == expected_others, "the other tracks changed order or were removed"),
                (at == params["position"], f"the track is at place {at}"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        title = track_of(params)["title"]
        place = int(params["track"][1:])
        command = "move_up" if params["position"] < place else "move_down"
        for _ in range(abs(params["position"] - place)):
            obs = yield from expert.context_command(ui, command, title, obs)


@register
class RemoveTracks(ComposedTask):
    template = "remove_tracks"

    def sample(self, rng: random.Random) -> Params:
        return {**self.base(rng), "tracks": [f"t{i}" for i in sorted(rng.sample(range(1, 9), 2))]}

    def goal(self, params: Params) -> str:
        names = [t["title"] for t in library(params["library"]) if t["id"] in params["tracks"]]
        return f"Take “{names[0]}” and “{names[1]}” out of the playlist; keep the others."

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        expected = [f"t{i}" for i in range(1, 9) if f"t{i}" not in params["tracks"]]
        return verdict([(state.get("playlist") == expected, "the playlist is not the old one without the two")])

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        for track in params["tracks"]:
            title = track_of({**params, "track": track})["title"]
            obs = yield from expert.context_command(ui, "remove_track", title, obs)


@register
class SavePlaylist(ComposedTask):
    template = "save_playlist"

    def sample(self, rng: random.Random) -> Params:
        order = [f"t{i}" for i in range(1, 9)]
        rng.shuffle(order)
        return {**self.base(rng), "order": order[: rng.randint(3, 8)], "name": rng.choice(PLAYLIST_NAMES)}

    def goal(self, params: Params) -> str:
        return f"Save the playlist as it is under the name “{params['name']}”."

    def initial_state(self, params: Params) -> dict[str, Any]:
        return initial_state(params["library"], playlist=params["order"])

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        saved = state.get("files", {}).get(f"{params['name']}.m3u")
        return verdict(
            [
                (saved is not None, "no playlist is saved under that name"),
                (saved == params["order"], "the saved playlist differs from the playlist"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        obs = yield from expert.command(ui, "save_playlist", obs)
        obs = yield from expert.fill(obs, "Playlist name", params["name"])
        yield from expert.press(obs, "Save")


@register
class BookmarkAt(ComposedTask):
    template = "bookmark_at"

    def sample(self, rng: random.Random) -> Params:
        params = {**self.base(rng), "track": f"t{rng.randint(1, 8)}", "name": rng.choice(("Chorus", "Intro", "Solo"))}
        return {**params, "time": rng.randint(5, track_of(params)["duration"] - 5)}

    def goal(self, params: Params) -> str:
        when = format_time(params["time"])
        return f"Add a bookmark named “{params['name']}” at {when} of “{track_of(params)['title']}”."

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        found = [
            mark
            for mark in state.get("bookmarks", [])
            if mark.get("name") == params["name"] and mark.get("track") == params["track"]
        ]
        close = any(abs(mark.get("time", -9) - params["time"]) <= 1 for mark in found)
        return verdict(
            [
                (bool(found), "no bookmark with that name on that track"),
                (close, "the bookmark is not at the asked time"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        obs = yield from expert.play(track_of(params)["title"], obs)
        obs = yield from expert.play_pause(ui, obs)
        obs = yield from expert.go_to_time(ui, params["time"], obs)
        obs = yield from expert.command(ui, "add_bookmark", obs)
        obs = yield from expert.fill(obs, "Bookmark name", params["name"])
        yield from expert.press(obs, "Save")


@register
class EditTags(ComposedTask):
    template = "edit_tags"

    def sample(self, rng: random.Random) -> Params:
        return {
            **self.base(rng),
            "track": f"t{rng.randint(1, 8)}",
            "title": rng.choice(NEW_TITLES),
            "artist": rng.choice(NEW_ARTISTS),
        }

    def goal(self, params: Params) -> str:
        old = track_of(params)["title"]
        return f"Rename the track “{old}” to “{params['title']}” and set its artist to {params['artist']}."

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        track: dict[str, Any] = next((t for t in state.get("library", []) if t.get("id") == params["track"]), {})
        return verdict(
            [
                (track.get("title") == params["title"], f"its title is {track.get('title')!r}"),
                (track.get("artist") == params["artist"], f"its artist is {track.get('artist')!r}"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        obs = yield from expert.context_command(ui, "track_info", track_of(params)["title"], obs)
        obs = yield from expert.fill(obs, "Title", params["title"])
        obs = yield from expert.fill(obs, "Artist", params["artist"])
        yield from expert.press(obs, "Save")


@register
class SubtitleDelay(ComposedTask):
    template = "subtitle_delay"

    def sample(self, rng: random.Random) -> Params:
        params = self.base(rng)
        chosen = rng.choice([t for t in library(params["library"]) if t["subtitles"]])
        delay = rng.choice([-3, -2, -1.5, -1, -0.5, 0.5, 1, 1.5, 2, 3])
        return {**params, "track": chosen["id"], "language": rng.choice(sorted(chosen["subtitles"])), "delay": delay}

    def goal(self, params: Params) -> str:
        when = "later" if params["delay"] > 0 else "earlier"
        return (
            f"Play “{track_of(params)['title']}” with {params['language']} subtitles shown "
            f"{abs(params['delay'])} s {when} than the sound."
        )

    def validate(self, state: dict[str, Any], params: Params) -> Verdict:
        return verdict(
            [
                (state.get("current") == params["track"], "another track is current"),
                (bool(state.get("playing")), "it is not playing"),
                (state.get("subtitle") == params["language"], f"subtitles: {state.get('subtitle')}"),
                (state.get("subtitle_delay") == params["delay"], "the subtitle delay is not as asked"),
            ]
        )

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield from expert.look()
        obs = yield from expert.play(track_of(params)["title"], obs)
        obs = yield from expert.choose_subtitles(ui, params["language"], obs)
        obs = yield from expert.command(ui, "subtitle_delay", obs)
        obs = yield from expert.fill(obs, "Delay in seconds", str(params["delay"]))
        yield from expert.press(obs, "Apply")
