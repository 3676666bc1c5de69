"""Image editor task templates of the long level: several layers, tools, filters and an export in one episode."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from raygent.environments.web.apps.image_editor import expert as x
from raygent.environments.web.apps.image_editor.raster import Raster, composite, render_layer
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
    outcome,
    random_rects,
    rendered,
    scene,
    state_layer,
)
from raygent.environments.web.task import LONG, Solver, register
from raygent.environments.web.ui import UISpec


def _file(params: dict[str, Any]) -> str:
    return params["stem"] + FORMATS[params["format"]]


def _export_problem(
    state: dict[str, Any], params: dict[str, Any], expected: Raster, drawn: dict[str, int] | None = None
) -> str | None:
    """None if the export exists and shows `expected` (forgiving a drawn rectangle's edge), else a message."""
    name = _file(params)
    file = find_export(state, name, params["format"])
    if file is None:
        return f"no {params['format']} export named {name!r}"
    return check_drawn(file, expected, drawn, name) if drawn else check_grid(file, expected, name, 3)


def _sample_file(rng: random.Random) -> dict[str, str]:
    return {"stem": rng.choice(FILE_STEMS), "format": rng.choice(list(FORMATS))}


@register
class LayerWorkflow(ImageTask):
    template: ClassVar[str] = "layer_workflow"
    difficulty: ClassVar[int] = LONG
    max_steps: ClassVar[int] = 40

    def sample(self, rng: random.Random) -> dict[str, Any]:
        existing, target = random_rects(rng, 2)
        first, color = rng.sample(list(PALETTE), 2)
        sc = scene(rng, rects=0)
        sc["layers"][0]["rects"] = [{**existing, "color": PALETTE[first], "name": first}]
        layer, renamed = rng.sample(NEW_NAMES, 2)
        return {
            "scene": sc,
            "rect": target,
            "color": color,
            "layer": layer,
            "renamed": renamed,
            "opacity": rng.randrange(30, 95, 5),
            **_sample_file(rng),
        }

    def goal(self, params: dict[str, Any]) -> str:
        (x0, y0), (x1, y1) = corners(params["rect"])
        return (
            f"Add a new transparent layer named “{params['layer']}” above “Background”. On it, paint a filled "
            f"{color_phrase(params['color'])} rectangle covering the pixels ({x0}, {y0}) to ({x1}, {y1}), and "
            f"set that layer's opacity to {params['opacity']}%. Rename “Background” to “{params['renamed']}”. "
            f"Finally export the image as a {params['format']} file named “{_file(params)}”."
        )

    @memoized
    def expected(self, params: dict[str, Any]) -> tuple[Raster, Raster, Raster]:
        """The drawn layer, the background and the export."""
        r = params["rect"]
        drawn = Raster.blank(80, 60)
        drawn.fill_rect(r["x"], r["y"], r["w"], r["h"], PALETTE[params["color"]])
        background = rendered(params["scene"], "Background")
        return drawn, background, composite([(background, True, 100), (drawn, True, params["opacity"])])

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        r = params["rect"]
        drawn, background, exported = self.expected(params)
        layer = state_layer(state, params["layer"])
        want = [params["renamed"], params["layer"]]
        return outcome(
            [
                None if layer_names(state) == want else f"layers are {layer_names(state)}, expected {want}",
                check_drawn(layer, drawn, r, f"layer {params['layer']!r}"),
                None
                if layer and layer.get("opacity") == params["opacity"]
                else f"opacity should be {params['opacity']}",
                check_grid(state_layer(state, params["renamed"]), background, f"layer {params['renamed']!r}"),
                _export_problem(state, params, exported, drawn=r),
            ],
            "layer workflow done",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.run_command(obs, ui, "new_layer")
        obs = yield from x.fill_dialog(obs, {"Layer name": params["layer"], "Fill with": "Transparent"})
        obs = yield from x.set_color(obs, ui, PALETTE[params["color"]])
        obs = yield from x.choose_tool(obs, ui, "tool_rectangle")
        obs = yield from x.drag_pixels(obs, *corners(params["rect"]), (80, 60))
        obs = yield from x.run_command(obs, ui, "layer_opacity")
        obs = yield from x.fill_dialog(obs, {"Opacity (%)": params["opacity"]})
        obs = yield from x.select_layer(obs, "Background")
        obs = yield from x.run_command(obs, ui, "rename_layer")
        obs = yield from x.fill_dialog(obs, {"Layer name": params["renamed"]})
        yield from x.export(obs, ui, params["stem"], params["format"])


@register
class FilterPipeline(ImageTask):
    template: ClassVar[str] = "filter_pipeline"
    difficulty: ClassVar[int] = LONG
    max_steps: ClassVar[int] = 40

    def sample(self, rng: random.Random) -> dict[str, Any]:
        sc = scene(rng, rects=2, extra_layers=2)
        names = [layer["name"] for layer in sc["layers"]]
        target = rng.choice(names[:2])  # never the active (top) layer, so the solver must select it
        hidden = rng.choice([n for n in names if n != target])
        return {
            "scene": sc,
            "layer": target,
            "hide": hidden,
            "radius": rng.randint(1, 2),
            "amount": rng.randrange(10, 50, 10),
            **_sample_file(rng),
        }

    def goal(self, params: dict[str, Any]) -> str:
        return (
            f"On the layer “{params['layer']}”: desaturate it to gray, blur it with radius {params['radius']}, "
            f"then raise its brightness by {params['amount']}. Hide the layer “{params['hide']}”, and export "
            f"the image as a {params['format']} file named “{_file(params)}”."
        )

    def filtered(self, params: dict[str, Any]) -> Raster:
        raster = rendered(params["scene"], params["layer"])
        raster.grayscale()
        raster.blur(params["radius"])
        raster.brightness(params["amount"])
        return raster

    @memoized
    def expected(self, params: dict[str, Any]) -> tuple[Raster, Raster]:
        """The filtered layer and the export."""
        filtered = self.filtered(params)
        layers = [
            (
                filtered if spec["name"] == params["layer"] else render_layer(spec, 80, 60),
                spec["name"] != params["hide"],
                100,
            )
            for spec in params["scene"]["layers"]
        ]
        return filtered, composite(layers)

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        filtered, exported = self.expected(params)
        problems = [check_grid(state_layer(state, params["layer"]), filtered, f"layer {params['layer']!r}")]
        for spec in params["scene"]["layers"]:
            found, want = state_layer(state, spec["name"]), spec["name"] != params["hide"]
            if found is None or found.get("visible") != want:
                problems.append(f"layer {spec['name']!r} should be {'visible' if want else 'hidden'}")
        problems.append(_export_problem(state, params, exported))
        return outcome(problems, "pipeline done")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.select_layer(obs, params["layer"])
        obs = yield from x.run_command(obs, ui, "filter_grayscale")
        obs = yield from x.run_command(obs, ui, "filter_blur")
        obs = yield from x.fill_dialog(obs, {"Radius": params["radius"]}, submit="Apply")
        obs = yield from x.run_command(obs, ui, "filter_brightness")
        obs = yield from x.fill_dialog(obs, {"Amount": params["amount"]}, submit="Apply")
        obs = yield from x.click(obs, f"Show {params['hide']}", "checkbox")
        yield from x.export(obs, ui, params["stem"], params["format"])


@register
class ExtendCanvas(ImageTask):
    template: ClassVar[str] = "extend_canvas"
    difficulty: ClassVar[int] = LONG
    max_steps: ClassVar[int] = 40

    def sample(self, rng: random.Random) -> dict[str, Any]:
        return {
            "scene": scene(rng, rects=2),
            "width": rng.randrange(96, 132, 4),
            "height": rng.randrange(72, 100, 4),
            "layer": rng.choice(NEW_NAMES),
            "color": rng.choice(list(PALETTE)),
            **_sample_file(rng),
        }

    def goal(self, params: dict[str, Any]) -> str:
        return (
            f"Enlarge the canvas to {params['width']}×{params['height']} pixels (picture anchored top-left). "
            f"Add a layer named “{params['layer']}” filled completely with {color_phrase(params['color'])}, "
            f"move it below “Background” so it shows only in the new area, and export the image as a "
            f"{params['format']} file named “{_file(params)}”."
        )

    @memoized
    def expected(self, params: dict[str, Any]) -> tuple[Raster, Raster]:
        """The color layer and the export."""
        w, h = params["width"], params["height"]
        background = rendered(params["scene"], "Background").crop(0, 0, w, h)
        fill = Raster.blank(w, h, PALETTE[params["color"]])
        return fill, composite([(fill, True, 100), (background, True, 100)])

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        w, h = params["width"], params["height"]
        fill, exported = self.expected(params)
        want = [params["layer"], "Background"]
        return outcome(
            [
                None
                if (state.get("width"), state.get("height")) == (w, h)
                else f"canvas is {state.get('width')}×{state.get('height')}",
                None if layer_names(state) == want else f"layers are {layer_names(state)}, expected {want}",
                check_grid(state_layer(state, params["layer"]), fill, f"layer {params['layer']!r}"),
                _export_problem(state, params, exported),
            ],
            "canvas extended",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.run_command(obs, ui, "canvas_size")
        obs = yield from x.fill_dialog(obs, {"Width": params["width"], "Height": params["height"]}, submit="Resize")
        obs = yield from x.set_color(obs, ui, PALETTE[params["color"]])
        obs = yield from x.run_command(obs, ui, "new_layer")
        obs = yield from x.fill_dialog(obs, {"Layer name": params["layer"], "Fill with": "Transparent"})
        obs = yield from x.choose_tool(obs, ui, "tool_fill")
        obs = yield from x.click_pixel(obs, 1, 1, (params["width"], params["height"]))
        obs = yield from x.run_command(obs, ui, "lower_layer")
        yield from x.export(obs, ui, params["stem"], params["format"])


@register
class RecolorAndFlip(ImageTask):
    template: ClassVar[str] = "recolor_and_flip"
    difficulty: ClassVar[int] = LONG
    max_steps: ClassVar[int] = 40

    def sample(self, rng: random.Random) -> dict[str, Any]:
        sc = scene(rng, rects=3)
        rects = sc["layers"][0]["rects"]
        first, second = rng.sample(rects, 2)
        free = [n for n in PALETTE if n not in {r["name"] for r in rects}]
        c1, c2 = rng.sample(free, 2)
        return {
            "scene": sc,
            "first": first["name"],
            "first_color": c1,
            "second": second["name"],
            "second_color": c2,
            **_sample_file(rng),
        }

    def goal(self, params: dict[str, Any]) -> str:
        return (
            f"Fill the {params['first']} rectangle with {color_phrase(params['first_color'])} and the "
            f"{params['second']} rectangle with {color_phrase(params['second_color'])}, then mirror the "
            f"whole image left to right and export it as a {params['format']} file named “{_file(params)}”."
        )

    def rect(self, params: dict[str, Any], name: str) -> dict[str, Any]:
        return next(r for r in params["scene"]["layers"][0]["rects"] if r["name"] == name)

    @memoized
    def expected(self, params: dict[str, Any]) -> Raster:
        raster = rendered(params["scene"], "Background")
        raster.flood_fill(*center(self.rect(params, params["first"])), PALETTE[params["first_color"]])
        raster.flood_fill(*center(self.rect(params, params["second"])), PALETTE[params["second_color"]])
        raster.flip_horizontal()
        return raster

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        expected = self.expected(params)
        return outcome(
            [
                check_grid(state_layer(state, "Background"), expected, "Background"),
                _export_problem(state, params, expected),
            ],
            "recolored, flipped and exported",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.set_color(obs, ui, PALETTE[params["first_color"]])
        obs = yield from x.choose_tool(obs, ui, "tool_fill")
        obs = yield from x.click_pixel(obs, *center(self.rect(params, params["first"])), (80, 60))
        obs = yield from x.set_color(obs, ui, PALETTE[params["second_color"]])
        obs = yield from x.click_pixel(obs, *center(self.rect(params, params["second"])), (80, 60))
        obs = yield from x.run_command(obs, ui, "flip_horizontal")
        yield from x.export(obs, ui, params["stem"], params["format"])
