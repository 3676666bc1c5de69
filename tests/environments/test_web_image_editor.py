"""Image editor: pixel twins and checkers on hand-built states, every template solved in the browser, a random agent."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from raygent.environments.web.actions import ActionSettings
from raygent.environments.web.apps.image_editor.expert import canvas_point
from raygent.environments.web.apps.image_editor.raster import Raster, composite, grid_mismatches, render_layer
from raygent.environments.web.apps.image_editor.scenes import PALETTE
from raygent.environments.web.env import BrowserEnv, run_solver
from raygent.environments.web.observe import find, parse
from raygent.environments.web.registry import list_tasks, make_task
from raygent.environments.web.server import ui_spec
from raygent.environments.web.task import TASKS

pytestmark = pytest.mark.browser

APP = "image_editor"


def layer_state(name: str, raster: Raster, visible: bool = True, opacity: int = 100) -> dict[str, Any]:
    return {"name": name, "visible": visible, "opacity": opacity, "grid": raster.grid()}


def scene_state(params: dict[str, Any]) -> dict[str, Any]:
    """The state the app reports right after `setState(initial_state)`, built in Python."""
    scene = params["scene"]
    layers = [
        layer_state(
            spec["name"],
            render_layer(spec, scene["width"], scene["height"]),
            spec.get("visible", True),
            spec.get("opacity", 100),
        )
        for spec in scene["layers"]
    ]
    return {"width": scene["width"], "height": scene["height"], "layers": layers, "exports": [], "filters": []}


# ---------------------------------------------------------------- no browser


def test_templates_cover_three_levels() -> None:
    assert len(list_tasks(APP)) >= 15  # importing the app fills TASKS
    levels = Counter(cls.difficulty for cls in TASKS[APP].values())
    assert levels[1] >= 5 and levels[2] >= 4 and levels[3] >= 4


def test_raster_twins_follow_the_apps_integer_rules() -> None:
    image = Raster.blank(8, 4, "#204060")
    image.fill_rect(0, 0, 4, 4, "#ffffff")
    assert image.grid() == [["#ffffffff", "#204060ff"]]
    image.brightness(10)  # round(25.5) = 26, clamped at 255
    assert image.pixel(0, 0) == (255, 255, 255, 255) and image.pixel(5, 1) == (58, 90, 122, 255)
    image.grayscale()
    assert image.pixel(5, 1)[:3] == ((299 * 58 + 587 * 90 + 114 * 122 + 500) // 1000,) * 3
    flat = Raster.blank(6, 6, "#808080")
    flat.blur(2)
    assert flat.grid() == Raster.blank(6, 6, "#808080").grid()
    half = composite([(Raster.blank(4, 4, "#000000"), True, 100), (Raster.blank(4, 4, "#ffffff"), True, 50)])
    assert half.pixel(0, 0) == (128, 128, 128, 255)


def test_no_task_is_done_before_acting() -> None:
    for template_id in list_tasks(APP):
        for seed in range(2):
            task = make_task(f"{template_id}/{seed}")
            reward, done, message = task.task.validate(scene_state(task.params), task.params)
            assert (reward, done) == (0.0, False), (task.id, message)


def test_invert_checker_wants_the_inverted_layer() -> None:
    task = make_task("image_editor/invert_layer/3")
    state = scene_state(task.params)
    name = task.params["layer"]
    inverted = render_layer(next(s for s in task.params["scene"]["layers"] if s["name"] == name), 80, 60)
    inverted.invert()
    state["layers"] = [layer_state(name, inverted) if layer["name"] == name else layer for layer in state["layers"]]
    assert task.task.validate(state, task.params)[:2] == (1.0, True)


def test_rectangle_checker_forgives_the_edge_but_not_the_inside() -> None:
    task = make_task("image_editor/draw_rectangle/5")
    rect, color = task.params["rect"], PALETTE[task.params["color"]]
    base = render_layer(task.params["scene"]["layers"][0], 80, 60)
    for dx, dy, paint, ok in (
        (1, -1, color, True),
        (0, 0, color, True),
        (8, 0, color, False),
        (0, 0, "#123456", False),
    ):
        drawn = Raster(base.width, base.height, bytearray(base.data))
        drawn.fill_rect(rect["x"] + dx, rect["y"] + dy, rect["w"], rect["h"], paint)
        state = {"layers": [layer_state("Background", drawn)]}
        assert task.task.validate(state, task.params)[1] is ok, (dx, dy)


def test_export_checker_reads_name_format_and_pixels() -> None:
    task = make_task("image_editor/export_image/2")
    p = task.params
    picture = composite([(render_layer(s, 80, 60), True, 100) for s in p["scene"]["layers"]])
    name = p["stem"] + {"PNG": ".png", "JPEG": ".jpg", "WebP": ".webp"}[p["format"]]
    other = "JPEG" if p["format"] != "JPEG" else "PNG"
    good = {"name": name, "format": p["format"], "grid": picture.grid()}
    assert task.task.validate({"exports": [good]}, p)[1]
    assert not task.task.validate({"exports": [{**good, "format": other}]}, p)[1]
    blank = Raster.blank(80, 60, "#ffffff").grid()
    assert grid_mismatches(blank, picture.grid()) > 0
    assert not task.task.validate({"exports": [{**good, "grid": blank}]}, p)[1]


def test_layer_checkers_on_hand_built_states() -> None:
    hide = make_task("image_editor/hide_layer/1")
    state = scene_state(hide.params)
    for layer in state["layers"]:
        layer["visible"] = layer["name"] != hide.params["layer"]
    assert hide.task.validate(state, hide.params)[1]
    state["layers"][0]["visible"] = state["layers"][1]["visible"] = False
    assert not hide.task.validate(state, hide.params)[1]
    rename = make_task("image_editor/rename_layer/1")
    state = scene_state(rename.params)
    for layer in state["layers"]:
        if layer["name"] == rename.params["layer"]:
            layer["name"] = rename.params["new_name"]
    assert rename.task.validate(state, rename.params)[1]


# ---------------------------------------------------------------- in the browser


@pytest.fixture(scope="module")
def env() -> Iterator[BrowserEnv]:
    environment = BrowserEnv(app=APP)
    yield environment
    environment.close()


def solve_once(env: BrowserEnv, task_id: str, ui_seed: int) -> tuple[bool, int]:
    """`run_solver`, retried once when the browser itself failed (an infrastructure failure, not the solver)."""
    success, steps = run_solver(env, task_id, ui_seed=ui_seed)
    error = env._last_obs["last_action_error"] if env._last_obs else ""
    if not success and error.startswith("infrastructure failure"):
        success, steps = run_solver(env, task_id, ui_seed=ui_seed)
    return success, steps


def test_every_template_is_solved_by_its_solver(env: BrowserEnv) -> None:
    failures = []
    for template_id in list_tasks(APP):
        rng = random.Random(template_id)
        task_id, ui_seed = f"{template_id}/{rng.randrange(10_000)}", rng.randrange(1, 1000)
        success, steps = solve_once(env, task_id, ui_seed)
        if not success:
            failures.append(f"{task_id}@{ui_seed} after {steps} steps: {env._last_obs['last_action_error']}")
    assert not failures, failures


def test_context_menu_shortcuts_undo_and_redo(env: BrowserEnv) -> None:
    ui = ui_spec(APP, 11)
    obs, _ = env.reset(options={"task": "image_editor/export_image/7", "ui_seed": 11})
    x, y = canvas_point(obs["text"], 40, 30, 80, 60)
    obs, *_ = env.step(f"right_single({x}, {y})")
    items = [e.name for e in parse(obs["text"]) if e.role == "menuitem"]
    assert ui.label("filter_invert") in items and ui.label("undo") in items
    obs, *_ = env.step(f"click({find(obs['text'], ui.label('filter_invert'), 'menuitem')})")
    assert [f["filter"] for f in env._read_state()["filters"]] == ["invert"]
    env.step('hotkey("Control+z")')
    state = env._read_state()
    assert state["filters"] == [] and state["redoDepth"] == 1
    env.step('hotkey("Control+y")')
    assert [f["filter"] for f in env._read_state()["filters"]] == ["invert"]
    env.step('hotkey("Control+Shift+E")')
    assert env._read_state()["dialog"] == ui.label("export")
    _, _, done, _, _ = env.step('hotkey("Escape")')
    assert env._read_state()["dialog"] is None and not done


def random_action(text: str, rng: random.Random) -> str:
    """A random valid action: mostly on the observation's elements, sometimes anywhere on the screen."""
    elements = [e for e in parse(text) if e.id is not None]
    roll = rng.random()
    if elements and roll < 0.6:
        element = rng.choice(elements)
        if element.role in ("textbox", "spinbutton", "searchbox"):
            return f'type({element.id}, "{rng.choice(["12", "red", "#00ff00", "Layer", "50"])}")'
        return f"click({element.id})"
    if roll < 0.75:
        return f"click({rng.randrange(1000)}, {rng.randrange(1000)})"
    if roll < 0.85:
        return f"drag({rng.randrange(1000)}, {rng.randrange(1000)}, {rng.randrange(1000)}, {rng.randrange(1000)})"
    if roll < 0.92:
        return f"right_single({rng.randrange(1000)}, {rng.randrange(1000)})"
    return f'hotkey("{rng.choice(["Escape", "Enter", "Control+z", "Control+y", "b", "r", "g"])}")'


def test_random_agent_rarely_succeeds() -> None:
    # Short action timeouts: a random click on an element under a dialog would otherwise wait 3 s to fail.
    env = BrowserEnv(app=APP, max_steps=10, action_settings=ActionSettings(action_timeout_ms=300))
    rng = random.Random(0)
    templates = list_tasks(APP)
    episodes, successes = 10, 0
    for _ in range(episodes):
        task_id = f"{rng.choice(templates)}/{rng.randrange(10_000)}"
        obs, _ = env.reset(options={"task": task_id, "ui_seed": rng.randrange(1000)})
        terminated = truncated = False
        while not (terminated or truncated):
            obs, _, terminated, truncated, info = env.step(random_action(obs["text"], rng))
        successes += bool(info.get("success"))
    env.close()
    print(f"random agent: {successes}/{episodes} episodes solved (10 random actions each)")
    assert successes / episodes <= 0.2
