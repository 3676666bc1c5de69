"""The web suite on pages it did not build (issue 24) and an app registered from outside (issue 17.7).

A directory of hand-written task pages (written below: each computes its own reward in JavaScript, discounted by
time) is registered as the app `pagebench` with `register_app`, served by `AppServer.add_static` and run through
`BrowserEnv` with a scripted policy, with no monkeypatch: the SVG target gets an id and is clicked, the covered
button's click is refused at once, the unlabelled text box is named by the text before it, and a discounted
win counts as a success. A task on another loopback server opens only with `allowed_origins`. The same pages
go through the RLlib wrapper with an environment factory from this file for one PPO iteration.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar

import pytest
from page_apps import page_app

from raygent.environments.web.actions import ActionSettings
from raygent.environments.web.docs.model import Guide, Procedure, Section
from raygent.environments.web.env import BrowserEnv
from raygent.environments.web.observe import find, parse
from raygent.environments.web.registry import (
    BUILTIN_APPS,
    ENTRY_POINT_GROUP,
    WebApp,
    app_names,
    get_app,
    list_tasks,
    load_app,
    make_task,
    register_app,
)
from raygent.environments.web.server import AppServer
from raygent.environments.web.task import PageContract, PageTask, verdict
from raygent.environments.web.ui import Command

APP = "pagebench"

# The pages' shared script: a reward discounted by the time since the page loaded (never 1.0 for a win).
REWARD_JS = """
const started = performance.now();
function finish(won) {
  const reward = won ? Math.max(0.05, 1 - (performance.now() - started) / 20000) * 0.95 : 0;
  window.raygentPage = Object.assign(window.raygentPage || {}, {reward: reward, done: true});
}
"""

PAGES = {
    # A MiniWoB-style page: its own globals (WOB_*) and its instruction in #query; the template's contract adapts.
    "svg.html": """<!doctype html><html><head><title>shapes</title><script src="reward.js"></script></head><body>
<div id="query">Click the red circle.</div>
<svg width="300" height="120" viewBox="0 0 300 120">
  <circle id="blue" cx="60" cy="60" r="40" fill="blue" onclick="window.WOB_DONE = true; window.WOB_REWARD = -1">
    <title>Blue circle</title></circle>
  <circle id="red" cx="200" cy="60" r="40" fill="red"><title>Red circle</title></circle>
  <text x="10" y="115">two shapes</text>
</svg>
<script>
document.getElementById("red").addEventListener("click", () => {
  window.WOB_DONE = true; window.WOB_REWARD = Math.max(0.05, 1 - (performance.now() - started) / 20000) * 0.95;
});
</script>
</body></html>""",
    "covered.html": """<!doctype html><html><head><script src="reward.js"></script><style>
#overlay {position: fixed; inset: 0; background: rgba(0, 0, 0, 0.4); display: flex; align-items: center}
</style></head><body>
<button id="submit" onclick="finish(true)">Submit</button>
<div id="overlay">
  <button id="close" style="margin: auto" onclick="document.getElementById('overlay').remove()">Close</button>
</div>
<script>window.raygentPage = {goal: "Press Submit.", reward: 0, done: false};</script>
</body></html>""",
    "form.html": """<!doctype html><html><head><script src="reward.js"></script></head><body>
<p><span>Your name</span> <input id="person" type="text"></p>
<p><input id="agree" type="checkbox"> I agree</p>
<button onclick="finish(person.value === 'Ada' && agree.checked)">Send</button>
<script>
window.raygentPage = {goal: 'Enter "Ada" as your name, agree, and press Send.', reward: 0, done: false};
</script>
</body></html>""",
    "reward.js": REWARD_JS,
    "secret.py": "print('never served')\n",
}


class ClickShape(PageTask):
    """Click the shape the page names (an SVG page with its own reward globals)."""

    template = "click_shape"
    difficulty = 1
    max_steps = 5
    page = f"/{APP}/svg.html"
    contract: ClassVar[PageContract | None] = PageContract(
        ready=None,
        set_state=None,
        get_state="() => ({reward: window.WOB_REWARD, done: window.WOB_DONE, success: window.WOB_REWARD > 0})",
        goal="() => document.getElementById('query').textContent",
        init_scripts=("window.WOB_DONE = false; window.WOB_REWARD = 0;",),
    )


class PressCovered(PageTask):
    """Press a button that an overlay covers until it is closed."""

    template = "press_covered"
    difficulty = 1
    max_steps = 6
    page = f"/{APP}/covered.html"


class FillForm(PageTask):
    """Fill an unlabelled text box and a checkbox, then send."""

    template = "fill_form"
    difficulty = 2
    max_steps = 6
    page = f"/{APP}/form.html"


def pages_app() -> WebApp:
    """The `pagebench` app of `PAGES` (registered once per process)."""
    return page_app(APP, PAGES, (ClickShape, PressCovered, FillForm))


def make_pages_env(config: Mapping[str, Any]) -> BrowserEnv:
    """The environment factory the RLlib wrapper loads by `"module:attr"` (the pages' app, short episodes)."""
    pages_app()
    return BrowserEnv(
        app=APP,
        max_steps=int(config.get("max_steps") or 4),
        action_settings=ActionSettings(action_timeout_ms=1000, wait_s=0.05),
    )


# ---------------------------------------------------------------- without a browser


def test_success_is_explicit_or_todays_rule() -> None:
    assert verdict((0.8, True, "late")).success is False  # today's rule: reward >= 1.0
    assert verdict((1.0, True, "")).success is True
    assert verdict((0.8, True, "late", True)) == (0.8, True, "late", True)
    assert PressCovered().validate({"reward": 0.7, "done": True}, {})[3] is True  # a discounted win
    assert PressCovered().validate({"reward": 0.0, "done": True}, {})[3] is False
    with pytest.raises(ValueError, match="validate must return"):
        verdict((1.0, True))


def test_an_app_registered_from_outside_is_taken_by_name() -> None:
    app = pages_app()
    assert APP in app_names() and get_app(APP) is app
    assert set(load_app(APP)) == {"click_shape", "press_covered", "fill_form"}
    assert list_tasks(APP, [2]) == [f"{APP}/fill_form"]
    assert APP not in {t.split("/")[0] for t in list_tasks()}  # the default pool stays the suite's own apps
    task = make_task(f"{APP}/press_covered/3")
    assert task.task.url(task.params) == f"/{APP}/covered.html" and task.to_platform().env == f"raygent/web-{APP}-v0"
    assert [row["template"] for row in app.describe_tasks()] == ["click_shape", "press_covered", "fill_form"]
    with pytest.raises(ValueError, match="already registered"):
        register_app(WebApp(name=APP))
    with pytest.raises(KeyError, match="unknown app"):
        get_app("no_such_app")
    with pytest.raises(ValueError, match="loopback"):
        BrowserEnv(app=APP, allowed_origins=["http://example.com:8000"])
    with pytest.raises(ValueError, match="app must be among"):
        BrowserEnv(app="no_such_app")


def test_the_suites_apps_are_entry_points() -> None:
    names = {entry.name for entry in entry_points(group=ENTRY_POINT_GROUP)}
    assert set(BUILTIN_APPS) <= names
    assert get_app("media_player").commands == "raygent.environments.web.apps.media_player.commands:COMMANDS"


def test_add_static_serves_web_files_of_one_directory(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<p>hi</p>")
    (tmp_path / "tool.py").write_text("x = 1")
    (tmp_path.parent / "outside.html").write_text("<p>outside</p>")
    server = AppServer(docs=False).start()
    try:
        base = server.add_static("/ext/", tmp_path)
        assert server.add_static("/ext/", tmp_path) == base  # idempotent
        with pytest.raises(ValueError, match="already serves"):
            server.add_static("/ext/", tmp_path.parent)
        with urllib.request.urlopen(base) as reply:
            assert reply.read() == b"<p>hi</p>" and reply.headers["Content-Type"].startswith("text/html")
        for path in ("tool.py", "..%2Foutside.html", "../outside.html", "missing.html"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(base + path)
            assert refused.value.code == 404
    finally:
        server.stop()


COMMANDS = [Command("stamp", "Stamp", "Tools", "Stamps the page.", alternatives=("Seal",), movable_to=("Edit",))]
GUIDE = Guide(
    app="stampbench",
    product="Stamp Desk",
    kind="stamping tool",
    summary="Stamps pages.",
    overview=(Section("Basics", ("Everything starts with {do:stamp}.",)),),
    procedures=(Procedure("stamp-twice", "Stamp twice", "Two stamps.", ("{do:stamp}", "{do:stamp} again")),),
)


def test_a_registered_apps_commands_and_guide_reach_ui_json_and_the_docs() -> None:
    from raygent.environments.web.docs.pages import site

    register_app(
        WebApp(
            name="stampbench",
            templates=(),
            commands="test_web_pages:COMMANDS",
            guide="test_web_pages:GUIDE",
            static_dir=pages_app().static_dir,
        ),
        replace=True,
    )
    server = AppServer().start()
    try:
        with urllib.request.urlopen(f"{server.origin}/stampbench/ui.json?seed=0") as reply:
            assert json.load(reply)["commands"]["stamp"]["label"] == "Stamp"
        pages = site(0).pages
        assert "/docs/stampbench/" in pages and "/docs/stampbench/howto/stamp-twice" in pages
        assert "Tools" in pages["/docs/stampbench/howto/stamp-twice"].text
        with urllib.request.urlopen(f"{server.origin}/docs/stampbench/?seed=0") as reply:
            assert b"Stamp Desk" in reply.read()
    finally:
        server.stop()


# ---------------------------------------------------------------- in Chromium


@pytest.fixture(scope="module")
def env() -> Iterator[BrowserEnv]:
    pages_app()
    environment = BrowserEnv(app=APP, action_settings=ActionSettings(action_timeout_ms=3000))
    yield environment
    environment.close()


@pytest.mark.browser
def test_svg_target_is_clicked_and_a_discounted_win_is_a_success(env: BrowserEnv) -> None:
    observation, info = env.reset(options={"task": f"{APP}/click_shape/0"})
    assert observation["goal"] == info["goal"] == "Click the red circle."  # read from the page
    shapes = {e.name: e for e in parse(observation["text"]) if e.id is not None}
    assert {"Red circle", "Blue circle"} <= set(shapes) and shapes["Red circle"].box is not None
    _, reward, terminated, _, info = env.step(f"click({find(observation['text'], 'Red circle')})")
    assert terminated and 0.0 < float(reward) < 1.0 and info["success"] is True, info


@pytest.mark.browser
def test_a_covered_click_fails_fast_with_a_clear_error(env: BrowserEnv) -> None:
    observation, _ = env.reset(options={"task": f"{APP}/press_covered/0"})
    submit = find(observation["text"], "Submit", "button")
    began = time.perf_counter()
    observation, reward, terminated, _, info = env.step(f"click({submit})")
    refused_s = time.perf_counter() - began
    assert refused_s < 0.5 and not terminated and reward == 0.0
    assert "is covered by <div#overlay>" in observation["last_action_error"], observation["last_action_error"]
    observation, *_ = env.step(f"click({find(observation['text'], 'Close', 'button')})")
    assert observation["last_action_error"] == ""
    _, reward, terminated, _, info = env.step(f"click({find(observation['text'], 'Submit', 'button')})")
    assert terminated and 0.0 < float(reward) < 1.0 and info["success"] is True


@pytest.mark.browser
def test_controls_are_named_by_the_text_beside_them(env: BrowserEnv) -> None:
    observation, _ = env.reset(options={"task": f"{APP}/fill_form/0"})
    assert observation["goal"].startswith('Enter "Ada"')
    text = observation["text"]
    observation, *_ = env.step(f'type({find(text, "Your name", "textbox")}, "Ada")')
    observation, *_ = env.step(f"click({find(observation['text'], 'I agree', 'checkbox')})")
    assert observation["last_action_error"] == ""
    _, reward, terminated, _, info = env.step(f"click({find(observation['text'], 'Send', 'button')})")
    assert terminated and info["success"] is True and 0.0 < float(reward) < 1.0


class OtherServerTask(PageTask):
    """The form page served by a second loopback server (an absolute URL)."""

    template = "elsewhere"
    difficulty = 1
    where: ClassVar[str] = ""

    def url(self, params: dict[str, Any]) -> str | None:
        return self.where


@pytest.mark.browser
def test_a_task_on_another_loopback_server_needs_allowed_origins() -> None:
    other = AppServer(docs=False).start()
    try:
        OtherServerTask.where = other.add_static("/pages/", pages_app().static_dir or Path()) + "covered.html"
        register_app(WebApp(name="elsewhere", templates=(OtherServerTask,)), replace=True)
        allowed = BrowserEnv(app="elsewhere", allowed_origins=[other.origin])
        try:
            observation, _ = allowed.reset(options={"task": "elsewhere/elsewhere/0"})
            assert observation["url"].startswith(other.origin) and observation["goal"] == "Press Submit."
        finally:
            allowed.close()
        closed = BrowserEnv(app="elsewhere", reset_retries=0)
        try:
            with pytest.raises(RuntimeError, match="could not start"):  # the sandbox refuses the page
                closed.reset(options={"task": "elsewhere/elsewhere/0"})
            assert closed._sandbox is not None
            assert any(other.origin in blocked.url for blocked in closed._sandbox.blocked)
        finally:
            closed.close()
    finally:
        other.stop()


# ---------------------------------------------------------------- RLlib


@pytest.mark.ray
@pytest.mark.browser
@pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-single-agent-env-v0")
def test_ppo_runs_on_external_pages_through_a_factory() -> None:
    import ray

    from raygent.jobs.web_agent.rllib import EPISODE_RETURN_MEAN, metric, ppo_config, success_rate

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        with pytest.raises(ValueError, match="factory"):
            ppo_config(env_factory="test_web_pages:no_such_factory")
        result = _one_iteration()
    finally:
        ray.shutdown()
    assert metric(result, "env_runners/num_env_steps_sampled_lifetime") >= 16
    rate = success_rate(result)
    assert rate is not None and 0.0 <= rate <= 1.0
    assert metric(result, "env_runners/web_episodes_infra_failed") == 0
    assert math.isfinite(float(metric(result, "learners/default_policy/total_loss")))
    episode_return = metric(result, EPISODE_RETURN_MEAN)
    assert episode_return is not None and -1.0 <= episode_return < 1.0  # rewards are discounted: never 1.0


def _one_iteration() -> dict[str, Any]:
    from raygent.jobs.web_agent.rllib import ppo_config

    config = ppo_config(
        env_factory="test_web_pages:make_pages_env",
        num_env_runners=0,
        train_batch_size=16,
        minibatch_size=8,
        num_epochs=1,
        max_steps=4,
        hidden=(16,),
        env_overrides={"cpus": None},
    )
    algo = config.build_algo()
    try:
        return dict(algo.train())
    finally:
        algo.stop()
