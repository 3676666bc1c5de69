"""The media player: its checkers on hand-built states, its UI, every template's scripted solve, a random agent."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

import pytest

from raygent.environments.web.actions import ActionSettings
from raygent.environments.web.apps.media_player.commands import COMMANDS
from raygent.environments.web.apps.media_player.media import initial_state, library
from raygent.environments.web.env import BrowserEnv, run_solver
from raygent.environments.web.observe import find, parse
from raygent.environments.web.registry import list_tasks, make_task
from raygent.environments.web.task import ATOMIC, COMPOSED, LONG, TASKS
from raygent.environments.web.ui import randomize

pytestmark = pytest.mark.browser

TEMPLATES = list_tasks("media_player")


def _state(seed: int, **fields: object) -> dict:
    """A `getState()`-like document (no cues: the page keeps those to itself)."""
    state = initial_state(seed, **fields)
    for track in state["library"]:
        track["languages"] = sorted(track.pop("subtitles"))
    return {"current": None, "playing": False, "position": 0, "speed": 1, "volume": 80, "muted": False,
            "repeat": "off", "shuffle": False, "subtitle": None, "subtitle_delay": 0, "bookmarks": [], "files": {},
            **state}  # fmt: skip


# ---------------------------------------------------------------- templates and checkers (no browser)


def test_templates_cover_three_levels() -> None:
    levels = [cls.difficulty for cls in TASKS["media_player"].values()]
    assert len(levels) >= 15 and {ATOMIC, COMPOSED, LONG} <= set(levels)
    assert all(levels.count(level) >= 4 for level in (ATOMIC, COMPOSED, LONG))


def test_library_is_deterministic_and_goals_name_no_menus() -> None:
    assert library(5) == library(5) and library(5) != library(6)
    assert len({t["title"] for t in library(5)}) == 8
    labels = {c.label for c in COMMANDS} | {a for c in COMMANDS for a in c.alternatives}
    for template in TEMPLATES:
        for seed in range(5):
            goal = make_task(f"{template}/{seed}").goal
            assert not any(f"“{label}”" in goal or f"'{label}'" in goal for label in labels), goal


def test_checkers_on_hand_built_states() -> None:
    seek = make_task("media_player/seek_pause/3")
    p = seek.params
    check = seek.task.validate
    assert check(_state(p["library"], current=p["track"], position=p["time"] + 0.6), p)[0] == 1.0
    assert check(_state(p["library"], current=p["track"], position=p["time"] + 3), p)[:2] == (0.0, False)
    playing = _state(p["library"], current=p["track"], position=p["time"], playing=True)
    assert check(playing, p)[2] == "the track is still playing"

    move = make_task("media_player/move_track/2")
    p = move.params
    order = [f"t{i}" for i in range(1, 9) if f"t{i}" != p["track"]]
    order.insert(p["position"] - 1, p["track"])
    assert move.task.validate(_state(p["library"], playlist=order), p)[0] == 1.0
    assert move.task.validate(_state(p["library"]), p)[0] == 0.0

    curate = make_task("media_player/curate_playlist/4")
    p = curate.params
    kept = [t for t in library(p["library"]) if t["duration"] >= p["threshold"]]
    by_artist = [t["id"] for t in sorted(kept, key=lambda t: (t["artist"].casefold(), t["title"].casefold()))]
    assert curate.task.validate(_state(p["library"], playlist=by_artist, repeat="all"), p)[0] == 1.0
    assert curate.task.validate(_state(p["library"], playlist=by_artist, repeat="one"), p)[2] == "repeat is one"
    assert curate.task.validate(_state(p["library"], playlist=by_artist[::-1], repeat="all"), p)[0] == 0.0

    build = make_task("media_player/build_playlist/1")
    p = build.params
    done = _state(p["library"], playlist=p["tracks"], files={f"{p['name']}.m3u": p["tracks"]})
    assert build.task.validate(done, p)[0] == 1.0
    assert build.task.validate({**done, "files": {}}, p)[0] == 0.0
    assert build.task.validate({}, p)[0] == 0.0  # an unreadable page


# ---------------------------------------------------------------- the app in the browser


@pytest.fixture(scope="module")
def env() -> Iterator[BrowserEnv]:
    environment = BrowserEnv(app="media_player", action_settings=ActionSettings(action_timeout_ms=1000, wait_s=0.05))
    yield environment
    environment.close()


def test_menus_follow_the_ui_seed_and_context_menu_and_dialogs_work(env: BrowserEnv) -> None:
    spec = randomize("media_player", COMMANDS, 9)
    obs, _ = env.reset(options={"task": "media_player/edit_tags/1", "ui_seed": 9})
    obs, *_ = env.step(f"click({find(obs['text'], spec.menu_of('track_info'), role='button')})")
    assert any(e.role == "menu" for e in parse(obs["text"]))
    assert find(obs["text"], spec.label("track_info"), role="menuitem")
    obs, *_ = env.step("hotkey(Escape)")
    row = next(e for e in parse(obs["text"]) if e.role == "option")
    obs, *_ = env.step(f"right_single({row.id})")
    assert find(obs["text"], "Play", role="menuitem") and find(obs["text"], spec.label("remove_track"))
    obs, *_ = env.step(f"click({find(obs['text'], spec.label('track_info'))})")
    assert any(e.role == "dialog" for e in parse(obs["text"])) and find(obs["text"], "Title", role="textbox")
    obs, *_ = env.step(f"type({find(obs['text'], 'Title', role='textbox')}, 'X')")
    obs, *_ = env.step(f"click({find(obs['text'], 'Cancel', role='button')})")
    assert not any(e.role == "dialog" for e in parse(obs["text"]))


def test_clock_advances_at_the_chosen_speed(env: BrowserEnv) -> None:
    obs, _ = env.reset(options={"task": "media_player/set_speed/1"})
    obs, *_ = env.step(f"click({find(obs['text'], 'Play/Pause', role='button')})")
    started = time.monotonic()
    time.sleep(1.0)
    obs, *_ = env.step("wait()")
    state = env._read_state()
    elapsed = time.monotonic() - started
    assert state["playing"] and state["speed"] == 1 and 0.9 <= state["position"] <= elapsed + 2.0
    assert "0:01 /" in obs["text"] or "0:02 /" in obs["text"]


# Every template under a moved UI layout, and every other one also under the default layout with another seed.
COMBOS = [(t, 101 + i, 3 + i) for i, t in enumerate(TEMPLATES)] + [(t, 1 + i, 0) for i, t in enumerate(TEMPLATES)][::2]


@pytest.mark.parametrize(
    ("template", "seed", "ui_seed"), COMBOS, ids=[f"{t.split('/')[1]}-{s}-ui{u}" for t, s, u in COMBOS]
)
def test_every_template_is_solved_by_its_solver(env: BrowserEnv, template: str, seed: int, ui_seed: int) -> None:
    success, steps = run_solver(env, f"{template}/{seed}", ui_seed=ui_seed)
    assert success, (template, seed, ui_seed, steps, env.render() if env.render_mode else "")
    assert steps <= make_task(f"{template}/{seed}").max_steps


HOTKEYS = ("Escape", "Enter", "Control+m", "Control+l", "Space", "Delete", "Alt+ArrowUp", "Control+f", "Tab")
WORDS = ("1:30", "hello", "42", "Road Trip", "0.5")


def random_action(rng: random.Random, text: str) -> str:
    """A random valid action over the observation's elements (or the screen)."""
    elements = [e for e in parse(text) if e.id is not None]
    roll = rng.random()
    if roll < 0.1 or not elements:
        return f"click({rng.randint(0, 1000)}, {rng.randint(0, 1000)})"
    if roll < 0.2:
        return f'hotkey("{rng.choice(HOTKEYS)}")'
    target = rng.choice(elements)
    if target.role in ("textbox", "searchbox", "slider", "spinbutton") and rng.random() < 0.6:
        return f'type({target.id}, "{rng.choice(WORDS)}")'
    return f"{rng.choice(['click'] * 6 + ['left_double', 'right_single'])}({target.id})"


def test_random_agent_rarely_succeeds() -> None:
    rng = random.Random(0)
    environment = BrowserEnv(
        app="media_player", max_steps=8, action_settings=ActionSettings(action_timeout_ms=300, wait_s=0.05)
    )
    successes, episodes = 0, 4
    try:
        for episode in range(episodes):
            obs, _ = environment.reset(seed=episode)
            done = False
            while not done:
                obs, _, terminated, truncated, info = environment.step(random_action(rng, obs["text"]))
                done = terminated or truncated
            successes += bool(info["success"])
    finally:
        environment.close()
    print(f"random agent: {successes}/{episodes} media-player episodes solved")
    assert successes / episodes <= 1 / 3
