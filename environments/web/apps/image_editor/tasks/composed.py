"""Image editor task templates of the composed level: a color, a tool and a place; two filters; crop and export;
a brush or eraser stroke of a given thickness."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from raygent.environments.web.apps.image_editor import expert as x
from raygent.environments.web.apps.image_editor.raster import Raster, cell_distance, grid_mismatches, parse_hex
from raygent.environments.web.apps.image_editor.scenes import (
    FILE_STEMS,
    FORMATS,
    NEW_NAMES,
    PALETTE,
    ImageTask,
    center,
    check_drawn,
    check_grid,
    color_phrase,
    corners,
    find_export,
    layer_names,
    memoized,
    random_rects,
    rendered,
    scene,
    scene_composite,
    state_layer,
)
from raygent.environments.web.apps.image_editor.scenes import outcome as _outcome
from raygent.environments.web.observe import find
from raygent.environments.web.task import COMPOSED, Solver, register
from raygent.environments.web.ui import UISpec


@register
class DrawRectangle(ImageTask):
    template: ClassVar[str] = "draw_rectangle"
    difficulty: ClassVar[int] = COMPOSED
    max_steps: ClassVar[int] = 20

    def sample(self, rng: random.Random) -> dict[str, Any]:
        existing, target = random_rects(rng, 2)
        first, color = rng.sample(list(PALETTE), 2)
        sc = scene(rng, rects=0)
        sc["layers"][0]["rects"] = [{**existing, "color": PALETTE[first], "name": first}]
        return {"scene": sc, "rect": target, "color": color}

    def goal(self, params: dict[str, Any]) -> str:
        (x0, y0), (x1, y1) = corners(params["rect"])
        return (
            f"On the layer “Background”, paint a filled {color_phrase(params['color'])} rectangle covering "
            f"the pixels from ({x0}, {y0}) to ({x1}, {y1}), corners included."
        )

    @memoized
    def expected(self, params: dict[str, Any]) -> Raster:
        r = params["rect"]
        raster = rendered(params["scene"], "Background")
        raster.fill_rect(r["x"], r["y"], r["w"], r["h"], PALETTE[params["color"]])
        return raster

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        return _outcome(
            [check_drawn(state_layer(state, "Background"), self.expected(params), params["rect"], "Background")],
            "painted",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.set_color(obs, ui, PALETTE[params["color"]])
        obs = yield from x.choose_tool(obs, ui, "tool_rectangle")
        yield from x.drag_pixels(obs, *corners(params["rect"]), (80, 60))


@register
class BucketFill(ImageTask):
    template: ClassVar[str] = "bucket_fill"
    difficulty: ClassVar[int] = COMPOSED
    max_steps: ClassVar[int] = 20

    def sample(self, rng: random.Random) -> dict[str, Any]:
        sc = scene(rng, rects=3)
        used = tuple(r["name"] for r in sc["layers"][0]["rects"])
        target = rng.choice(sc["layers"][0]["rects"])
        return {"scene": sc, "target": target["name"], "color": rng.choice([n for n in PALETTE if n not in used])}

    def goal(self, params: dict[str, Any]) -> str:
        return f"Fill the {params['target']} rectangle with {color_phrase(params['color'])}."

    def target(self, params: dict[str, Any], name: str) -> dict[str, Any]:
        return next(r for r in params["scene"]["layers"][0]["rects"] if r["name"] == name)

    @memoized
    def expected(self, params: dict[str, Any]) -> Raster:
        raster = rendered(params["scene"], "Background")
        raster.flood_fill(*center(self.target(params, params["target"])), PALETTE[params["color"]])
        return raster

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        return _outcome([check_grid(state_layer(state, "Background"), self.expected(params), "Background")], "filled")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.set_color(obs, ui, PALETTE[params["color"]])
        obs = yield from x.choose_tool(obs, ui, "tool_fill")
        yield from x.click_pixel(obs, *center(self.target(params, params["target"])), (80, 60))


@register
class MatchColor(BucketFill):
    template: ClassVar[str] = "match_color"

    def sample(self, rng: random.Random) -> dict[str, Any]:
        sc = scene(rng, rects=3)
        source, target = rng.sample(sc["layers"][0]["rects"], 2)
        return {"scene": sc, "source": source["name"], "target": target["name"], "color": source["name"]}

    def goal(self, params: dict[str, Any]) -> str:
        return (
            f"Repaint the {params['target']} rectangle so it has exactly the same color as the "
            f"{params['source']} rectangle."
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.choose_tool(obs, ui, "tool_picker")
        obs = yield from x.click_pixel(obs, *center(self.target(params, params["source"])), (80, 60))
        obs = yield from x.choose_tool(obs, ui, "tool_fill")
        yield from x.click_pixel(obs, *center(self.target(params, params["target"])), (80, 60))


@register
class BlurThenBrighten(ImageTask):
    template: ClassVar[str] = "blur_then_brighten"
    difficulty: ClassVar[int] = COMPOSED
    max_steps: ClassVar[int] = 20

    def sample(self, rng: random.Random) -> dict[str, Any]:
        amount = rng.choice((-1, 1)) * rng.randrange(20, 70, 10)
        return {"scene": scene(rng, rects=2), "radius": rng.randint(1, 3), "amount": amount}

    def goal(self, params: dict[str, Any]) -> str:
        change = "lighter" if params["amount"] > 0 else "darker"
        return (
            f"Blur the layer “Background” with radius {params['radius']}, then make it {change} with a "
            f"brightness change of {params['amount']:+d}."
        )

    @memoized
    def expected(self, params: dict[str, Any]) -> Raster:
        raster = rendered(params["scene"], "Background")
        raster.blur(params["radius"])
        raster.brightness(params["amount"])
        return raster

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        return _outcome([check_grid(state_layer(state, "Background"), self.expected(params), "Background")], "filtered")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.run_command(obs, ui, "filter_blur")
        obs = yield from x.fill_dialog(obs, {"Radius": params["radius"]}, submit="Apply")
        obs = yield from x.run_command(obs, ui, "filter_brightness")
        yield from x.fill_dialog(obs, {"Amount": params["amount"]}, submit="Apply")


@register
class CropAndExport(ImageTask):
    template: ClassVar[str] = "crop_and_export"
    difficulty: ClassVar[int] = COMPOSED
    max_steps: ClassVar[int] = 20

    def sample(self, rng: random.Random) -> dict[str, Any]:
        w, h = rng.randrange(24, 61, 4), rng.randrange(24, 45, 4)
        crop = {"x": rng.randrange(0, 80 - w + 1, 4), "y": rng.randrange(0, 60 - h + 1, 4), "w": w, "h": h}
        return {
            "scene": scene(rng, rects=3),
            "crop": crop,
            "stem": rng.choice(FILE_STEMS),
            "format": rng.choice(list(FORMATS)),
        }

    def goal(self, params: dict[str, Any]) -> str:
        c, name = params["crop"], params["stem"] + FORMATS[params["format"]]
        return (
            f"Crop the image to the {c['w']}×{c['h']} pixel rectangle whose top-left corner is at "
            f"({c['x']}, {c['y']}), then export it as a {params['format']} file named “{name}”."
        )

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        name = params["stem"] + FORMATS[params["format"]]
        file = find_export(state, name, params["format"])
        return _outcome(
            [
                None if file else f"no {params['format']} export named {name!r}",
                check_grid(file, self.expected(params), name, 3) if file else None,
            ],
            "cropped and exported",
        )

    @memoized
    def expected(self, params: dict[str, Any]) -> Raster:
        c = params["crop"]
        return scene_composite(params["scene"]).crop(c["x"], c["y"], c["w"], c["h"])

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        c = params["crop"]
        obs = yield from x.look()
        obs = yield from x.run_command(obs, ui, "crop")
        obs = yield from x.fill_dialog(
            obs, {"Left": c["x"], "Top": c["y"], "Width": c["w"], "Height": c["h"]}, submit="Crop"
        )
        yield from x.export(obs, ui, params["stem"], params["format"])


@register
class AddColorLayer(ImageTask):
    template: ClassVar[str] = "add_color_layer"
    difficulty: ClassVar[int] = COMPOSED
    max_steps: ClassVar[int] = 20

    def sample(self, rng: random.Random) -> dict[str, Any]:
        return {
            "scene": scene(rng, rects=2),
            "name": rng.choice(NEW_NAMES),
            "color": rng.choice(list(PALETTE)),
            "opacity": rng.randrange(20, 95, 5),
        }

    def goal(self, params: dict[str, Any]) -> str:
        return (
            f"Add a new layer named “{params['name']}” above “Background”, filled entirely with "
            f"{color_phrase(params['color'])}, at {params['opacity']}% opacity."
        )

    @memoized
    def expected(self, params: dict[str, Any]) -> Raster:
        return Raster.blank(80, 60, PALETTE[params["color"]])

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        layer = state_layer(state, params["name"])
        return _outcome(
            [
                None if layer_names(state) == ["Background", params["name"]] else f"layers are {layer_names(state)}",
                check_grid(layer, self.expected(params), f"layer {params['name']!r}"),
                None
                if layer and layer.get("opacity") == params["opacity"]
                else f"opacity should be {params['opacity']}",
            ],
            "layer added",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.set_color(obs, ui, PALETTE[params["color"]])
        obs = yield from x.run_command(obs, ui, "new_layer")
        obs = yield from x.fill_dialog(obs, {"Layer name": params["name"], "Fill with": "Foreground"})
        obs = yield from x.run_command(obs, ui, "layer_opacity")
        yield from x.fill_dialog(obs, {"Opacity (%)": params["opacity"]})


@register
class BrushStroke(ImageTask):
    """A straight brush stroke of a given thickness along one pixel row (checked on the cell row it covers)."""

    template: ClassVar[str] = "brush_stroke"
    difficulty: ClassVar[int] = COMPOSED
    max_steps: ClassVar[int] = 20
    tool: ClassVar[str] = "tool_brush"

    def sample(self, rng: random.Random) -> dict[str, Any]:
        row = rng.randrange(3, 12)
        return {
            "scene": scene(rng, rects=2),
            "row": row,
            "y": 4 * row + 1,
            "x1": rng.randrange(8, 25, 4),
            "x2": rng.randrange(52, 73, 4),
            "size": rng.randint(4, 6),
            "color": rng.choice(list(PALETTE)),
        }

    def goal(self, params: dict[str, Any]) -> str:
        return (
            f"With a {params['size']}-pixel brush, paint a straight {color_phrase(params['color'])} stroke on "
            f"“Background” along pixel row y = {params['y']}, from x = {params['x1']} to x = {params['x2']}."
        )

    def wanted(self, cell: str, params: dict[str, Any]) -> bool:
        """Whether a cell on the stroke shows what the stroke should leave."""
        return cell_distance(cell, PALETTE[params["color"]] + "ff") <= 2

    @memoized
    def expected(self, params: dict[str, Any]) -> Raster:
        return rendered(params["scene"], "Background")

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        layer = state_layer(state, "Background")
        before = self.expected(params).grid()
        grid = layer.get("grid", []) if layer else []
        if len(grid) != len(before) or any(len(a) != len(b) for a, b in zip(grid, before, strict=True)):
            return 0.0, False, "the Background layer is missing or has another size"
        row = params["row"]
        band = range(params["x1"] // 4, params["x2"] // 4)
        missed = sum(not self.wanted(grid[row][col], params) for col in band)
        spoiled = grid_mismatches(grid, before, 2, lambda r, c: abs(r - row) < 2)
        return _outcome(
            [
                f"{missed} cells along the stroke are not covered" if missed else None,
                f"{spoiled} cells away from the stroke changed" if spoiled else None,
            ],
            "stroke painted",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield f'type({find(obs, "Brush size", "spinbutton")}, "{params["size"]}")'
        if self.tool == "tool_brush":
            obs = yield from x.set_color(obs, ui, PALETTE[params["color"]])
        obs = yield from x.choose_tool(obs, ui, self.tool)
        yield from x.drag_pixels(obs, (params["x1"], params["y"]), (params["x2"], params["y"]), (80, 60))


@register
class EraseBand(BrushStroke):
    template: ClassVar[str] = "erase_band"
    tool: ClassVar[str] = "tool_eraser"

    def goal(self, params: dict[str, Any]) -> str:
        return (
            f"Erase a {params['size']}-pixel-thick horizontal band of “Background” to transparency along pixel "
            f"row y = {params['y']}, from x = {params['x1']} to x = {params['x2']}."
        )

    def wanted(self, cell: str, params: dict[str, Any]) -> bool:
        return parse_hex(cell)[3] <= 2
