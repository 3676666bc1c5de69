"""The media player's synthetic library: tracks with durations and subtitle cues, drawn from a seed.

Nothing is decoded (see `app.js`): a track is its title, artist, duration, kind (audio or video) and, for some,
subtitle cues per language. `library(seed)` is deterministic, so task parameters only carry the seed and the
checkers and solvers rebuild the same library.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

TITLES = (
    "Amber Tide", "Northern Lanterns", "Glass Harbor", "Copper Sky", "Velvet Engine", "Paper Moons",
    "Salt and Cedar", "Quiet Voltage", "Orchard Lights", "Marble Rain", "Harbor of Echoes", "Slow Comet",
    "Indigo Ferry", "Brass Meadow", "Winter Antenna", "Lighthouse Keeper", "Saffron Road", "Neon Orchard",
    "Granite Waltz", "Cobalt Letters", "The Long Thaw", "Pocket Galaxy", "Rust and Honey", "Silver Compass",
)  # fmt: skip
ARTISTS = (
    "Mara Quill", "The Fennel Brothers", "Oskar Brightwater", "Lumen Choir", "Delia Marsh", "Static Orchard",
    "Juno Vale", "Kestrel Park", "Ines Holloway", "The Paper Kites Club", "Theo Ashgrove", "Nadia Crane",
)  # fmt: skip
LANGUAGES = ("English", "Spanish", "French", "German")
SUBJECTS = ("the harbor", "my brother", "the old radio", "this city", "the last train", "our garden", "the map")
VERBS = ("remembers", "hides", "waits for", "follows", "repairs", "paints", "forgets")
OBJECTS = ("a silver key", "the morning tide", "seven lanterns", "a paper boat", "the northern road", "an empty room")
FOREIGN = {
    "Spanish": ("la casa", "el puerto", "mañana", "la luz", "el tren", "siempre", "nunca", "el mapa"),
    "French": ("la maison", "le port", "demain", "la lumière", "le train", "toujours", "jamais", "la carte"),
    "German": ("das Haus", "der Hafen", "morgen", "das Licht", "der Zug", "immer", "niemals", "die Karte"),
}


def _english_line(rng: random.Random) -> str:
    return f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)}."


def _foreign_line(rng: random.Random, language: str) -> str:
    words = rng.sample(FOREIGN[language], 3)
    return f"{' '.join(words).capitalize()}."


def _cues(rng: random.Random, duration: int, language: str) -> list[list[Any]]:
    cues, start = [], float(rng.randint(2, 6))
    while start < duration - 4:
        length = float(rng.randint(3, 6))
        line = _english_line(rng) if language == "English" else _foreign_line(rng, language)
        cues.append([start, min(start + length, float(duration)), line])
        start += length + rng.randint(2, 8)
    return cues


@lru_cache(maxsize=256)
def _library(seed: int) -> tuple[dict[str, Any], ...]:
    rng = random.Random(f"media_player/library/{seed}")
    titles = rng.sample(TITLES, 8)
    tracks = []
    for index, title in enumerate(titles):
        duration = rng.randint(95, 420)
        languages = sorted(rng.sample(LANGUAGES, rng.randint(1, 3)), key=LANGUAGES.index) if index % 4 else []
        if languages and "English" not in languages and rng.random() < 0.7:
            languages = ["English", *languages[:2]]
        tracks.append(
            {
                "id": f"t{index + 1}",
                "title": title,
                "artist": rng.choice(ARTISTS),
                "duration": duration,
                "kind": "video" if rng.random() < 0.4 else "audio",
                "subtitles": {language: _cues(rng, duration, language) for language in languages},
            }
        )
    return tuple(tracks)


def library(seed: int) -> list[dict[str, Any]]:
    """Eight tracks (ids `t1`..`t8`, unique titles) with cues; a fresh copy each call."""
    import copy

    return copy.deepcopy(list(_library(seed)))


def by_title(seed: int) -> dict[str, dict[str, Any]]:
    return {track["title"]: track for track in library(seed)}


def format_time(seconds: float) -> str:
    """`m:ss`, as the player shows times."""
    whole = int(seconds + 1e-6)
    return f"{whole // 60}:{whole % 60:02d}"


def initial_state(seed: int, playlist: list[str] | None = None, **overrides: Any) -> dict[str, Any]:
    """The player's `setState` document: the library, a playlist of track ids (default: all), and overrides."""
    tracks = library(seed)
    return {"library": tracks, "playlist": playlist or [t["id"] for t in tracks], **overrides}
