"""What running MiniWoB++-style pages showed the web layer lacked (issue 47.3), on hand-written pages.

A click waits for an element that slides out from under the button that covered it (a CSS transition), and
refuses one whose cover keeps moving with "still covered ... after N ms"; `add_static` serves web fonts with
their types; SVG shapes say their tag, fill and size (with handlers or not, icons left out); and `describe_tasks`
(`raygent tasks`) never gives an empty instruction for a template whose page holds its goal: a placeholder, or
with `--read-pages` the goal the page shows.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from page_apps import page_app

from raygent.environments.web.actions import ActionSettings
from raygent.environments.web.env import BrowserEnv
from raygent.environments.web.observe import find, parse
from raygent.environments.web.registry import PAGE_GOAL, WebApp
from raygent.environments.web.server import AppServer
from raygent.environments.web.task import PageTask

APP = "detailbench"
TIMEOUT_MS = 2000
"""The action timeout: clearly longer than the pages' 300 ms delay plus 300 ms transition."""

PAGES = {
    # Items under a round menu button slide out when it is pressed: 300 ms delay, then a 300 ms transition.
    "slide.html": """<!doctype html><html><head><style>
#stage {position: relative; width: 300px; height: 300px; margin: 40px}
#menu {position: absolute; left: 110px; top: 110px; width: 80px; height: 80px; border-radius: 40px; z-index: 2}
.item {position: absolute; left: 120px; top: 120px; width: 60px; height: 60px;
  transition: transform 300ms ease-out 300ms}
#stage.open #alpha {transform: translate(-110px, 0)}
#stage.open #beta {transform: translate(110px, 0)}
</style></head><body>
<div id="stage">
  <button class="item" id="alpha" onclick="pick('Alpha')">Alpha</button>
  <button class="item" id="beta" onclick="pick('Beta')">Beta</button>
  <button id="menu" onclick="opened = performance.now(); stage.classList.add('open')">Menu</button>
</div>
<script>
let opened = 0;
window.raygentPage = {goal: "Open the menu and pick Beta.", reward: 0, done: false};
function pick(name) {
  const after = String(Math.round(performance.now() - opened));
  window.raygentPage = Object.assign(window.raygentPage, {reward: name === "Beta" ? 1 : 0, done: true, message: after});
}
</script>
</body></html>""",
    # A button under an overlay that never stops drifting.
    "drift.html": """<!doctype html><html><head><style>
#go {position: absolute; left: 100px; top: 100px; width: 100px; height: 40px}
#drift {position: absolute; left: 80px; top: 80px; width: 140px; height: 80px; background: rgba(0, 0, 0, 0.3);
  animation: drift 300ms linear infinite alternate}
@keyframes drift {from {transform: translateX(0)} to {transform: translateX(10px)}}
</style></head><body>
<button id="go" onclick="window.raygentPage.done = true">Go</button>
<div id="drift"></div>
<script>window.raygentPage = {goal: "Press Go.", reward: 0, done: false};</script>
</body></html>""",
    # Unlabelled shapes, three with handlers; a drawing's shapes without one; an icon that is not a drawing.
    "shapes.html": """<!doctype html><html><head></head><body>
<div id="query">Click the large red circle.</div>
<svg id="area" width="220" height="120">
  <circle id="big" cx="50" cy="60" r="40" fill="red"/>
  <rect id="small" x="120" y="50" width="20" height="20" style="fill: #1e90ff"/>
  <polygon id="tri" points="160,100 180,60 200,100" fill="magenta"/>
  <circle cx="190" cy="20" r="10" fill="green"/>
  <text x="100" y="110" fill="black" font-size="16">q</text>
</svg>
<p><span><svg width="16" height="16"><circle cx="8" cy="8" r="6" fill="orange"/></svg> Help</span></p>
<script>
window.raygentPage = {goal: "Click the large red circle.", reward: 0, done: false};
for (const id of ["big", "small", "tri"]) {
  document.getElementById(id).addEventListener("click", () => {
    window.raygentPage = Object.assign(window.raygentPage, {reward: id === "big" ? 1 : 0, done: true});
  });
}
</script>
</body></html>""",
}


class SlideOut(PageTask):
    """Pick an item that slides out of a menu button."""

    template = "slide_out"
    difficulty = 1
    max_steps = 4
    page = f"/{APP}/slide.html"


class DriftCover(PageTask):
    """Press a button that a drifting overlay covers."""

    template = "drift_cover"
    difficulty = 1
    max_steps = 4
    page = f"/{APP}/drift.html"


class ClickShapes(PageTask):  # no docstring: `describe_tasks` has nothing but the page to show
    template = "click_shapes"
    difficulty = 1
    max_steps = 4
    page = f"/{APP}/shapes.html"


def detail_app() -> WebApp:
    """The `detailbench` app of `PAGES` (registered once per process)."""
    return page_app(APP, PAGES, (SlideOut, DriftCover, ClickShapes))


# ---------------------------------------------------------------- without a browser


def test_add_static_serves_web_fonts_with_their_types(tmp_path: Path) -> None:
    fonts = {
        "a.woff": "font/woff",
        "a.woff2": "font/woff2",
        "a.ttf": "font/ttf",
        "a.otf": "font/otf",
        "a.eot": "application/vnd.ms-fontobject",
    }
    for name in fonts:
        (tmp_path / "fonts").mkdir(exist_ok=True)
        (tmp_path / "fonts" / name).write_bytes(b"wOF2" + name.encode())
    server = AppServer(docs=False).start()
    try:
        base = server.add_static("/ext/", tmp_path)
        for name, kind in fonts.items():
            with urllib.request.urlopen(f"{base}fonts/{name}") as reply:
                assert reply.headers["Content-Type"] == kind and reply.read() == b"wOF2" + name.encode(), name
    finally:
        server.stop()


def test_a_template_whose_page_holds_its_goal_is_described_by_a_placeholder() -> None:
    rows = {row["template"]: row for row in detail_app().describe_tasks()}
    assert rows["click_shapes"]["example"] == PAGE_GOAL and rows["click_shapes"]["goal_from_page"] is True
    assert rows["slide_out"]["example"] == f"Pick an item that slides out of a menu button. {PAGE_GOAL}"
    assert all(row["example"] for row in rows.values())


# ---------------------------------------------------------------- in Chromium


@pytest.fixture(scope="module")
def env() -> Iterator[BrowserEnv]:
    detail_app()
    environment = BrowserEnv(app=APP, action_settings=ActionSettings(action_timeout_ms=TIMEOUT_MS, wait_s=0.05))
    yield environment
    environment.close()


@pytest.mark.browser
def test_a_click_waits_for_an_item_sliding_out_from_under_a_button(env: BrowserEnv) -> None:
    observation, _ = env.reset(options={"task": f"{APP}/slide_out/0"})
    observation, *_ = env.step(f"click({find(observation['text'], 'Menu', 'button')})")
    assert observation["last_action_error"] == ""
    # Beta is still under the menu button (its transition starts 300 ms after the press): the click waits.
    observation, reward, terminated, _, info = env.step(f"click({find(observation['text'], 'Beta', 'button')})")
    assert observation["last_action_error"] == "", observation["last_action_error"]
    assert terminated and float(reward) == 1.0 and info["success"] is True
    assert int(info["message"]) >= 300  # it landed once Beta had started to come out, not through the button


@pytest.mark.browser
def test_a_cover_that_keeps_moving_is_refused_after_the_action_timeout(env: BrowserEnv) -> None:
    observation, _ = env.reset(options={"task": f"{APP}/drift_cover/0"})
    observation, _, terminated, _, _ = env.step(f"click({find(observation['text'], 'Go', 'button')})")
    error = observation["last_action_error"]
    waited = re.search(r"is still covered by <div#drift> after (\d+) ms", error)
    assert waited and int(waited[1]) >= TIMEOUT_MS and not terminated, error
    assert "close or move what covers it" not in error


@pytest.mark.browser
def test_svg_shapes_say_their_tag_fill_and_size(env: BrowserEnv) -> None:
    observation, _ = env.reset(options={"task": f"{APP}/click_shapes/0"})
    text = observation["text"]
    shapes = [e for e in parse(text) if e.shape]
    clickable = {(e.shape, e.fill): e for e in shapes if e.id is not None}
    assert set(clickable) == {("circle", "red"), ("rect", "#1e90ff"), ("polygon", "magenta")}, text
    assert all(e.role == "generic" and e.name == "" and e.box for e in clickable.values())
    assert re.search(r'\] generic "" shape=circle fill=red size=80x80 box=\(', text), text
    assert re.search(r'\] generic "" shape=rect fill=#1e90ff size=20x20 box=\(', text), text
    assert re.search(r'(?m)^ *img "" shape=circle fill=green size=20x20 box=\(', text), text  # no handler: no id
    assert re.search(r'(?m)^ *text "q" shape=text fill=black ', text), text
    assert "orange" not in text and 'text "Help"' in text  # an icon is not a drawing
    big = clickable["circle", "red"].id
    _, reward, terminated, _, info = env.step(f"click({big})")
    assert terminated and float(reward) == 1.0 and info["success"] is True


@pytest.mark.browser
def test_raygent_tasks_reads_the_goal_from_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from raygent.platform.cli import app

    class Entry:
        name = APP

        def load(self) -> Any:
            return detail_app

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group=None: [Entry()])
    listed = CliRunner().invoke(app, ["tasks", APP, "--json"])
    assert listed.exit_code == 0, listed.output
    assert {row["template"]: row["example"] for row in json.loads(listed.output)}["click_shapes"] == PAGE_GOAL
    read = CliRunner().invoke(app, ["tasks", APP, "--json", "--read-pages"])
    assert read.exit_code == 0, read.output
    examples = {row["template"]: row["example"] for row in json.loads(read.output)}
    assert examples == {
        "slide_out": "Open the menu and pick Beta.",
        "drift_cover": "Press Go.",
        "click_shapes": "Click the large red circle.",
    }
