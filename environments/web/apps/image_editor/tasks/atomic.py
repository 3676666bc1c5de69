"""Image editor task templates of the atomic level (one command each); composed and long ones are in
`composed.py` and `long.py`.

Goals name what the image should become (colors by name and hex, pixels by coordinates, layers by name), never
a menu path: labels and menus are randomized per UI seed and the procedure is in the docs. Checkers compare
the state's cell grids with the image computed from the parameters (`raster.py`).
"""

from __future__ import annotations

import random
from abc import abstractmethod
from typing import Any, ClassVar

from raygent.environments.web.apps.image_editor import expert as x
from raygent.environments.web.apps.image_editor.raster import Raster
from raygent.environments.web.apps.image_editor.scenes import (
    FILE_STEMS,
    FORMATS,
    NEW_NAMES,
    ImageTask,
    check_grid,
    find_export,
    layer_names,
    memoized,
    rendered,
    scene,
    scene_composite,
    state_layer,
)
from raygent.environments.web.apps.image_editor.scenes import outcome as _outcome
from raygent.environments.web.task import ATOMIC, Solver, register
from raygent.environments.web.ui import UISpec

# ---- atomic ---------------------------------------------------------------------------------------------------


class _FilterActive(ImageTask):
    """Apply one parameterless filter to the active layer."""

    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 10
    command: ClassVar[str]
    phrase: ClassVar[str]
    """The goal, with `{layer}` for the layer's name."""

    def sample(self, rng: random.Random) -> dict[str, Any]:
        sc = scene(rng, rects=rng.randint(2, 3), extra_layers=rng.randint(0, 1))
        return {"scene": sc, "layer": sc["active"]}

    def goal(self, params: dict[str, Any]) -> str:
        return self.phrase.format(layer=params["layer"])

    @abstractmethod
    def filtered(self, params: dict[str, Any]) -> Raster:
        """The layer as it should end up."""

    @memoized
    def expected(self, params: dict[str, Any]) -> Raster:
        return self.filtered(params)

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        name = params["layer"]
        return _outcome(
            [check_grid(state_layer(state, name), self.expected(params), f"layer {name!r}")], f"layer {name!r} is done"
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        yield from x.run_command(obs, ui, self.command)


@register
class InvertLayer(_FilterActive):
    template: ClassVar[str] = "invert_layer"
    command: ClassVar[str] = "filter_invert"
    phrase: ClassVar[str] = "Invert the colors of the layer “{layer}”."

    def filtered(self, params: dict[str, Any]) -> Raster:
        raster = rendered(params["scene"], params["layer"])
        raster.invert()
        return raster


@register
class DesaturateLayer(_FilterActive):
    template: ClassVar[str] = "desaturate_layer"
    command: ClassVar[str] = "filter_grayscale"
    phrase: ClassVar[str] = "Desaturate the layer “{layer}” so that it shows only shades of gray."

    def filtered(self, params: dict[str, Any]) -> Raster:
        raster = rendered(params["scene"], params["layer"])
        raster.grayscale()
        return raster


@register
class RenameLayer(ImageTask):
    template: ClassVar[str] = "rename_layer"
    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 10

    def sample(self, rng: random.Random) -> dict[str, Any]:
        sc = scene(rng, rects=2, extra_layers=rng.randint(1, 2))
        return {"scene": sc, "layer": sc["active"], "new_name": rng.choice(NEW_NAMES)}

    def goal(self, params: dict[str, Any]) -> str:
        return f"Rename the layer “{params['layer']}” to “{params['new_name']}”."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        want = [
            params["new_name"] if layer["name"] == params["layer"] else layer["name"]
            for layer in params["scene"]["layers"]
        ]
        names = layer_names(state)
        return _outcome([None if names == want else f"layers are {names}, expected {want}"], "layer renamed")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.run_command(obs, ui, "rename_layer")
        yield from x.fill_dialog(obs, {"Layer name": params["new_name"]})


@register
class HideLayer(ImageTask):
    template: ClassVar[str] = "hide_layer"
    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 10

    def sample(self, rng: random.Random) -> dict[str, Any]:
        sc = scene(rng, rects=2, extra_layers=2)
        return {"scene": sc, "layer": rng.choice([layer["name"] for layer in sc["layers"]])}

    def goal(self, params: dict[str, Any]) -> str:
        return f"Hide the layer “{params['layer']}” and keep the other layers visible."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        problems = []
        for layer in params["scene"]["layers"]:
            found = state_layer(state, layer["name"])
            want = layer["name"] != params["layer"]
            if found is None or found.get("visible") != want:
                problems.append(f"layer {layer['name']!r} should be {'visible' if want else 'hidden'}")
        return _outcome(problems, "layer hidden")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        yield from x.click(obs, f"Show {params['layer']}", "checkbox")


@register
class SetLayerOpacity(ImageTask):
    template: ClassVar[str] = "set_layer_opacity"
    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 10

    def sample(self, rng: random.Random) -> dict[str, Any]:
        sc = scene(rng, rects=2, extra_layers=rng.randint(1, 2))
        return {"scene": sc, "layer": sc["active"], "opacity": rng.randrange(10, 95, 5)}

    def goal(self, params: dict[str, Any]) -> str:
        return f"Set the opacity of the layer “{params['layer']}” to {params['opacity']}%."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        layer = state_layer(state, params["layer"])
        got = layer.get("opacity") if layer else None
        return _outcome([None if got == params["opacity"] else f"opacity is {got}"], "opacity set")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.run_command(obs, ui, "layer_opacity")
        yield from x.fill_dialog(obs, {"Opacity (%)": params["opacity"]})


@register
class ResizeCanvas(ImageTask):
    template: ClassVar[str] = "resize_canvas"
    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 10

    def sample(self, rng: random.Random) -> dict[str, Any]:
        return {"scene": scene(rng, rects=3), "width": rng.randrange(40, 164, 4), "height": rng.randrange(32, 124, 8)}

    def goal(self, params: dict[str, Any]) -> str:
        return (
            f"Change the canvas size to {params['width']}×{params['height']} pixels, keeping the picture "
            "anchored at the top-left corner."
        )

    @memoized
    def expected(self, params: dict[str, Any]) -> Raster:
        return rendered(params["scene"], "Background").crop(0, 0, params["width"], params["height"])

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        w, h = params["width"], params["height"]
        return _outcome(
            [
                None
                if (state.get("width"), state.get("height")) == (w, h)
                else f"canvas is {state.get('width')}×{state.get('height')}",
                check_grid(state_layer(state, "Background"), self.expected(params), "Background"),
            ],
            "canvas resized",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.run_command(obs, ui, "canvas_size")
        yield from x.fill_dialog(obs, {"Width": params["width"], "Height": params["height"]}, submit="Resize")


@register
class ExportImage(ImageTask):
    template: ClassVar[str] = "export_image"
    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 10

    def sample(self, rng: random.Random) -> dict[str, Any]:
        return {
            "scene": scene(rng, rects=2, extra_layers=rng.randint(0, 1)),
            "stem": rng.choice(FILE_STEMS),
            "format": rng.choice(list(FORMATS)),
        }

    def goal(self, params: dict[str, Any]) -> str:
        name = params["stem"] + FORMATS[params["format"]]
        return f"Export the image as a {params['format']} file named “{name}”."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        name = params["stem"] + FORMATS[params["format"]]
        file = find_export(state, name, params["format"])
        if file is None:
            return 0.0, False, f"no {params['format']} export named {name!r}"
        return _outcome([check_grid(file, self.expected(params), name, 3)], "exported")

    @memoized
    def expected(self, params: dict[str, Any]) -> Raster:
        return scene_composite(params["scene"])

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        yield from x.export(obs, ui, params["stem"], params["format"])
