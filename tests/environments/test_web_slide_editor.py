"""Slide editor: checkers on hand-built states, every template solved in the browser, app behaviour, a random agent."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from raygent.environments.web.actions import ActionSettings
from raygent.environments.web.apps.slide_editor.decks import COLORS
from raygent.environments.web.env import BrowserEnv, run_solver
from raygent.environments.web.observe import find, parse
from raygent.environments.web.registry import list_tasks, make_task
from raygent.environments.web.server import ui_spec
from raygent.environments.web.task import TASKS

pytestmark = pytest.mark.browser

APP = "slide_editor"
PLACEHOLDERS = {
    "title": [("title", 10, 28, 80, 20, 40), ("subtitle", 10, 52, 80, 14, 24)],
    "title_content": [("title", 5, 5, 90, 15, 32), ("body", 5, 24, 90, 68, 20)],
    "two_content": [("title", 5, 5, 90, 15, 32), ("left", 5, 24, 43, 68, 20), ("right", 52, 24, 43, 68, 20)],
    "blank": [],
}
"""The app's layouts (`model.js`): role, x, y, w, h, font size."""


def box(role: str, text: str, x: int, y: int, w: int, h: int, size: int = 20) -> dict[str, Any]:
    return {
        "role": role,
        "text": text,
        "x": x,
        "y": y,
        "w": w,
        "h": h,
        "size": size,
        "bold": False,
        "italic": False,
        "color": None,
        "align": "left",
    }


def deck_state(params: dict[str, Any]) -> dict[str, Any]:
    """The state the app reports right after `setState(initial_state)`, built in Python."""
    slides = []
    for spec in params["deck"]["slides"]:
        boxes = [box(role, spec["texts"].get(role, ""), *geometry) for role, *geometry in PLACEHOLDERS[spec["layout"]]]
        slides.append(
            {"layout": spec["layout"], "title": spec["texts"].get("title", ""), "notes": spec["notes"], "boxes": boxes}
        )
    return {
        "slides": slides,
        "current": 0,
        "theme": params["deck"]["theme"],
        "presenting": False,
        "showIndex": None,
        "showStart": None,
        "files": [],
        "dialog": None,
    }


def titles(state: dict[str, Any]) -> list[str]:
    return [s["title"] for s in state["slides"]]


# ---------------------------------------------------------------- no browser


def test_templates_cover_three_levels() -> None:
    assert len(list_tasks(APP)) >= 15  # importing the app fills TASKS
    levels = Counter(cls.difficulty for cls in TASKS[APP].values())
    assert levels[1] >= 5 and levels[2] >= 4 and levels[3] >= 4


def test_no_task_is_done_before_acting() -> None:
    for template_id in list_tasks(APP):
        for seed in range(4):
            task = make_task(f"{template_id}/{seed}")
            reward, done, message = task.task.validate(deck_state(task.params), task.params)
            assert (reward, done) == (0.0, False), (task.id, message)


def test_delete_checker_wants_exactly_that_slide_gone() -> None:
    task = make_task("slide_editor/delete_slide/4")
    state = deck_state(task.params)
    target = task.params["title"]
    other = next(t for t in titles(state) if t != target)
    right = {**state, "slides": [s for s in state["slides"] if s["title"] != target]}
    wrong = {**state, "slides": [s for s in state["slides"] if s["title"] != other]}
    assert task.task.validate(right, task.params)[:2] == (1.0, True)
    assert not task.task.validate(wrong, task.params)[1]


def test_text_box_checker_reads_the_quarter() -> None:
    task = make_task("slide_editor/place_text_box/3")
    p = task.params
    centres = {"upper left": (25, 25), "upper right": (75, 25), "lower left": (25, 75), "lower right": (75, 75)}
    for (cx, cy), ok in (
        (centres[p["quadrant"]], True),
        ((50, 46), False),
        (next(c for q, c in centres.items() if q != p["quadrant"]), False),
    ):
        state = deck_state(p)
        slide = next(s for s in state["slides"] if s["title"] == p["title"])
        slide["boxes"].append(box("text", p["text"], cx - 20, cy - 6, 40, 12))
        assert task.task.validate(state, p)[1] is ok, (cx, cy)


def test_format_and_show_checkers_on_hand_built_states() -> None:
    fmt = make_task("slide_editor/format_title/2")
    state = deck_state(fmt.params)
    title = next(s for s in state["slides"] if s["title"] == fmt.params["title"])["boxes"][0]
    title.update(bold=True, size=fmt.params["size"], color=COLORS[fmt.params["color"]])
    assert fmt.task.validate(state, fmt.params)[1]
    title["bold"] = False
    assert not fmt.task.validate(state, fmt.params)[1]
    show = make_task("slide_editor/present_from/5")
    state = deck_state(show.params)
    names = titles(state)
    start, end = names.index(show.params["start"]), names.index(show.params["end"])
    state.update(presenting=True, showStart=start, showIndex=end)
    assert show.task.validate(state, show.params)[1]
    state["showStart"] = 0
    assert not show.task.validate(state, show.params)[1]


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


def test_context_menu_undo_show_and_delete_key(env: BrowserEnv) -> None:
    ui = ui_spec(APP, 23)
    obs, _ = env.reset(options={"task": "slide_editor/apply_theme/3", "ui_seed": 23})
    count = len(env._read_state()["slides"])
    obs, *_ = env.step(f"right_single({find(obs['text'], 'Slide 1', 'option', exact=False)})")
    obs, *_ = env.step(f"click({find(obs['text'], ui.label('duplicate_slide'), 'menuitem')})")
    assert len(env._read_state()["slides"]) == count + 1
    env.step('hotkey("Control+z")')
    assert len(env._read_state()["slides"]) == count
    obs, *_ = env.step('hotkey("F5")')
    assert env._read_state()["presenting"] and "Slide 1 of" in obs["text"]
    env.step('hotkey("ArrowRight")')
    assert env._read_state()["showIndex"] == 1
    obs, *_ = env.step('hotkey("Escape")')
    assert not env._read_state()["presenting"]
    obs, *_ = env.step(f"click({find(obs['text'], 'Subtitle', 'textbox')})")
    assert env._read_state()["selectedBox"] is not None
    env.step('hotkey("Delete")')
    roles = [b["role"] for b in env._read_state()["slides"][0]["boxes"]]
    assert roles == ["title"]


def random_action(text: str, rng: random.Random) -> str:
    """A random valid action: mostly on the observation's elements, sometimes anywhere on the screen."""
    elements = [e for e in parse(text) if e.id is not None]
    roll = rng.random()
    if elements and roll < 0.6:
        element = rng.choice(elements)
        if element.role in ("textbox", "spinbutton", "searchbox"):
            return f'type({element.id}, "{rng.choice(["Agenda", "Summary", "24", "Pause here", "x"])}")'
        return f"click({element.id})"
    if roll < 0.75:
        return f"click({rng.randrange(1000)}, {rng.randrange(1000)})"
    if roll < 0.85:
        return f"drag({rng.randrange(1000)}, {rng.randrange(1000)}, {rng.randrange(1000)}, {rng.randrange(1000)})"
    if roll < 0.92:
        return f"right_single({rng.randrange(1000)}, {rng.randrange(1000)})"
    return f'hotkey("{rng.choice(["Escape", "Enter", "Control+z", "Control+m", "F5", "Delete", "ArrowRight"])}")'


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
