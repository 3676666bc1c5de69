"""Seeded initial images for the image editor's tasks, the template base class, and the checkers' helpers.

A scene is the `setState` document: `{"width", "height", "layers": [{"name", "fill", "rects", "visible",
"opacity"}] (bottom to top), "active": name}`. Rectangles are aligned to the 4-pixel cells of the state's grid
summary and kept apart by at least one cell, so every rectangle is its own flood-fill region and a checker can
compare whole cells.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from raygent.environments.web.apps.image_editor.raster import CELL, Raster, composite, grid_mismatches, render_layer
from raygent.environments.web.task import WebTask

PALETTE: dict[str, str] = {
    "red": "#e02020",
    "green": "#20a040",
    "blue": "#2050e0",
    "yellow": "#f0d020",
    "orange": "#f08020",
    "purple": "#8030c0",
    "teal": "#20a0a0",
    "pink": "#f070b0",
    "brown": "#806040",
    "black": "#101010",
}
BACKGROUNDS: dict[str, str] = {"white": "#ffffff", "cream": "#f4f0e0", "light gray": "#e0e0e0", "sky": "#d0e8ff"}
LAYER_NAMES = ("Sketch", "Shapes", "Paint", "Logo", "Details", "Ink", "Highlights", "Overlay", "Stamp", "Accents")
FILE_STEMS = ("poster", "banner", "thumb", "sketch", "cover", "badge", "icon", "preview", "draft", "card")
FORMATS: dict[str, str] = {"PNG": ".png", "JPEG": ".jpg", "WebP": ".webp"}


def color_phrase(name: str) -> str:
    """`red (#e02020)`: how goals name a color."""
    return f"{name} ({PALETTE.get(name) or BACKGROUNDS[name]})"


def random_rects(rng: random.Random, count: int, width: int = 80, height: int = 60) -> list[dict[str, int]]:
    """`count` cell-aligned rectangles, at least 12 px a side, one cell apart from each other and the edges."""
    rects: list[dict[str, int]] = []
    while len(rects) < count:
        w, h = rng.choice((12, 16, 20)), rng.choice((12, 16))
        x = rng.randrange(CELL, width - w - CELL + 1, CELL)
        y = rng.randrange(CELL, height - h - CELL + 1, CELL)
        if all(
            x + w + CELL <= r["x"]
            or r["x"] + r["w"] + CELL <= x
            or y + h + CELL <= r["y"]
            or r["y"] + r["h"] + CELL <= y
            for r in rects
        ):
            rects.append({"x": x, "y": y, "w": w, "h": h})
    return rects


def colored_rects(rng: random.Random, count: int, exclude: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Rectangles with distinct palette colors (`name` kept for goals)."""
    names = rng.sample([n for n in PALETTE if n not in exclude], count)
    return [{**rect, "color": PALETTE[n], "name": n} for rect, n in zip(random_rects(rng, count), names, strict=True)]


def scene(rng: random.Random, rects: int = 3, extra_layers: int = 0) -> dict[str, Any]:
    """A background with `rects` colored rectangles, plus `extra_layers` named layers of one rectangle each."""
    background = rng.choice(list(BACKGROUNDS))
    layers: list[dict[str, Any]] = [{"name": "Background", "fill": BACKGROUNDS[background], "rects": []}]
    shapes = colored_rects(rng, rects + extra_layers)
    layers[0]["rects"] = shapes[:rects]
    for name, rect in zip(rng.sample(LAYER_NAMES, extra_layers), shapes[rects:], strict=True):
        layers.append({"name": name, "fill": None, "rects": [rect]})
    return {"width": 80, "height": 60, "layers": layers, "active": layers[-1]["name"], "background": background}


def initial(scene_params: dict[str, Any]) -> dict[str, Any]:
    """The `setState` document of a scene (drops goal-only keys)."""
    return {k: v for k, v in scene_params.items() if k != "background"}


def layer_spec(scene_params: dict[str, Any], name: str) -> dict[str, Any]:
    return next(layer for layer in scene_params["layers"] if layer["name"] == name)


def rendered(scene_params: dict[str, Any], name: str) -> Raster:
    return render_layer(layer_spec(scene_params, name), scene_params["width"], scene_params["height"])


def scene_composite(scene_params: dict[str, Any]) -> Raster:
    w, h = scene_params["width"], scene_params["height"]
    return composite(
        [
            (render_layer(layer, w, h), layer.get("visible", True), layer.get("opacity", 100))
            for layer in scene_params["layers"]
        ]
    )


def state_layer(state: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The state's layer of that name, or None."""
    return next((layer for layer in state.get("layers", []) if layer.get("name") == name), None)


def layer_names(state: dict[str, Any]) -> list[str]:
    return [layer.get("name", "") for layer in state.get("layers", [])]


def check_grid(actual: dict[str, Any] | None, expected: Raster, what: str, tolerance: int = 2) -> str | None:
    """None if the summary's grid matches `expected`, else a message saying how many cells differ."""
    if actual is None:
        return f"{what} is missing"
    bad = grid_mismatches(actual.get("grid", []), expected.grid(), tolerance)
    return f"{what}: {bad} cells differ from the expected image" if bad else None


def find_export(state: dict[str, Any], name: str, fmt: str) -> dict[str, Any] | None:
    return next((f for f in state.get("exports", []) if f.get("name") == name and f.get("format") == fmt), None)


def outcome(problems: list[str | None], success: str) -> tuple[float, bool, str]:
    """`(1.0, True, success)` when there are no problems, else `(0.0, False, first problem)`."""
    found = [p for p in problems if p]
    return (0.0, False, found[0]) if found else (1.0, True, success)


T = TypeVar("T")


def memoized(method: Callable[[Any, dict[str, Any]], T]) -> Callable[[Any, dict[str, Any]], T]:
    """Cache a template's `expected(params)` by the parameters' JSON: `validate` runs after every step and the
    pure-Python image operations take a noticeable fraction of a second. Callers must not mutate the result."""
    cache: dict[str, T] = {}

    @functools.wraps(method)
    def wrapper(self: Any, params: dict[str, Any]) -> T:
        key = json.dumps(params, sort_keys=True)
        if key not in cache:
            if len(cache) >= 64:
                cache.clear()
            cache[key] = method(self, params)
        return cache[key]

    return wrapper


NEW_NAMES = ("Title", "Glow", "Frame", "Caption", "Shadow", "Badge", "Stripe", "Mask", "Border", "Spot")


class ImageTask(WebTask):
    """Shared plumbing: the app name and a scene-based initial state."""

    app: ClassVar[str] = "image_editor"

    def initial_state(self, params: dict[str, Any]) -> dict[str, Any]:
        return initial(params["scene"])


def boundary_skip(rect: dict[str, int]) -> Callable[[int, int], bool]:
    """Cells a hand-drawn rectangle may get wrong: those within 2 px of its edge, inside or outside."""

    def skip(row: int, col: int) -> bool:
        x0, y0, x1, y1 = col * CELL, row * CELL, col * CELL + CELL - 1, row * CELL + CELL - 1
        inside = (
            x0 >= rect["x"] + 2
            and x1 <= rect["x"] + rect["w"] - 3
            and y0 >= rect["y"] + 2
            and y1 <= rect["y"] + rect["h"] - 3
        )
        outside = (
            x1 < rect["x"] - 2 or x0 > rect["x"] + rect["w"] + 1 or y1 < rect["y"] - 2 or y0 > rect["y"] + rect["h"] + 1
        )
        return not (inside or outside)

    return skip


def check_drawn(actual: dict[str, Any] | None, expected: Raster, rect: dict[str, int], what: str) -> str | None:
    """Like `check_grid`, but forgiving the cells along a drawn rectangle's edge."""
    if actual is None:
        return f"{what} is missing"
    bad = grid_mismatches(actual.get("grid", []), expected.grid(), 3, boundary_skip(rect))
    return f"{what}: {bad} cells differ from the expected image" if bad else None


def center(rect: dict[str, int]) -> tuple[int, int]:
    return rect["x"] + rect["w"] // 2, rect["y"] + rect["h"] // 2


def corners(rect: dict[str, int]) -> tuple[tuple[int, int], tuple[int, int]]:
    return (rect["x"], rect["y"]), (rect["x"] + rect["w"] - 1, rect["y"] + rect["h"] - 1)
