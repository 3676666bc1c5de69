"""BrowserEnv: the grammar, the server, task ids, check_env, actions and their errors, crash and hang recovery."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import gymnasium
import numpy as np
import psutil
import pytest
from gymnasium.utils.env_checker import check_env

from raygent.environments.web.actions import ActionSettings, normalize_hotkey
from raygent.environments.web.browser import BrowserHost, shared_browser
from raygent.environments.web.discrete import make_discrete_env, worker_core
from raygent.environments.web.env import BrowserEnv, register_envs, run_solver
from raygent.environments.web.grammar import (
    WEB_GRAMMAR,
    ClickLabel,
    ClickPoint,
    DoubleClickElement,
    DragAction,
    HotkeyAction,
    ScrollElement,
    ScrollPoint,
    SelectAction,
    TypeText,
)
from raygent.environments.web.observe import find, parse
from raygent.environments.web.registry import env_id, from_platform, list_tasks, make_task, platform_tasks
from raygent.environments.web.server import shared_server, ui_spec
from raygent.platform.contracts import Task
from raygent.policies.actions import ActionGrammar, ClickAction, FinishedAction, InvalidAction, TypeAction

pytestmark = pytest.mark.browser

TASK = "media_player/play_track/1"

# ---------------------------------------------------------------- grammar (no browser)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("click(12)", ClickAction(element=12)),
        ("click(100, 200)", ClickPoint(x=100, y=200)),
        ("Thought: the menu.\nAction: click(start_box='(235,512)')", ClickPoint(x=235, y=512)),
        ("click(start_box='<|box_start|>(10,20,30,40)<|box_end|>')", ClickPoint(x=20, y=30)),
        ("drag(start_box='(1,2)', end_box='(3,4)')", DragAction(x1=1, y1=2, x2=3, y2=4)),
        ('type(3, "a, b")', TypeAction(element=3, text="a, b")),
        ("type(content='hello\\n')", TypeText(content="hello\n")),
        ('type("12")', TypeText(content="12")),
        ("select(4, 1.5×)", SelectAction(element=4, option="1.5×")),
        ("hotkey(key='ctrl s')", HotkeyAction(key="ctrl s")),
        ("scroll(7, down)", ScrollElement(element=7, direction="down")),
        ("scroll(start_box='(5,6)', direction='up')", ScrollPoint(x=5, y=6, direction="up")),
        ("finished()", FinishedAction()),
        ('click_label("Play Rate…")', ClickLabel(label="Play Rate…")),
    ],
)
def test_grammar_reads_both_forms(text: str, expected: object) -> None:
    parsed = WEB_GRAMMAR.parse(text)
    assert parsed == expected and parsed.valid
    assert WEB_GRAMMAR.parse(parsed.render()) == parsed


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("click(1001, 5)", "less than or equal to 1000"),
        ("click(-1)", "greater than or equal to 0"),
        ("scroll(3, sideways)", "'up', 'down', 'left' or 'right'"),
        ("drag(1, 2, 3)", "missing argument(s) y2"),
        ("answer(42)", "not accepted here"),
        ("press the button", "no action found"),
        ("click(start_box='(1,2)'", "missing ')'"),
    ],
)
def test_grammar_refuses_invalid_actions(text: str, reason: str) -> None:
    parsed = WEB_GRAMMAR.parse(text)
    assert isinstance(parsed, InvalidAction) and parsed.raw == text and reason in parsed.reason


def test_forms_of_one_kind_need_different_arities() -> None:
    with pytest.raises(ValueError, match="share the kind"):
        ActionGrammar([ClickAction, DoubleClickElement, ClickAction])

    class Tap(ClickPoint):
        pass

    with pytest.raises(ValueError, match="number of fields"):
        ActionGrammar([ClickPoint, Tap])


def test_grammar_describes_every_form() -> None:
    lines = WEB_GRAMMAR.describe().splitlines()
    assert "click(x, y): click at a point of the 0-1000 grid over the screen" in lines
    assert any(line.startswith("click(element):") for line in lines)
    assert normalize_hotkey("ctrl shift z") == "Control+Shift+Z" and normalize_hotkey("Control+S") == "Control+s"


# ---------------------------------------------------------------- server and task ids (no browser)


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, b""


def test_a_client_hanging_up_mid_reply_prints_no_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    server = shared_server()
    try:
        raise BrokenPipeError(32, "Broken pipe")
    except BrokenPipeError:
        server.handle_error(None, ("127.0.0.1", 1))
    assert capsys.readouterr().err == ""
    try:
        raise ValueError("a real bug")
    except ValueError:
        server.handle_error(None, ("127.0.0.1", 1))
    assert "ValueError: a real bug" in capsys.readouterr().err


def test_server_renders_ui_json_and_hides_python() -> None:
    origin = shared_server().origin
    status, body = _get(f"{origin}/media_player/ui.json?seed=0")
    default = json.loads(body)
    assert status == 200 and default["commands"]["mute"]["label"] == "Mute" and default["seed"] == 0
    moved = json.loads(_get(f"{origin}/media_player/ui.json?seed=11")[1])
    assert any(moved["commands"][c]["label"] != default["commands"][c]["label"] for c in default["commands"])
    assert _get(f"{origin}/media_player/index.html")[0] == 200
    for hidden in (
        "/media_player/tasks.py",
        "/media_player/commands.py",
        "/nope/ui.json",
        "/media_player/ui.json?seed=x",
    ):
        assert _get(origin + hidden)[0] == 404, hidden


def test_task_ids_and_platform_tasks() -> None:
    assert "media_player/play_track" in list_tasks("media_player")
    assert set(list_tasks("media_player", difficulties=[3])) < set(list_tasks("media_player"))
    one, again = make_task("media_player/seek_pause/7"), make_task("media_player/seek_pause/7@0")
    assert one.params == again.params and one.ui_seed == 0 and make_task("media_player/seek_pause/7@4").ui_seed == 4
    assert make_task("media_player/seek_pause/8").params != one.params
    task = make_task("media_player/seek_pause/7", ui_seed=3).to_platform()
    assert isinstance(task, Task) and task.id == "media_player/seek_pause/7@3" and task.env == env_id("media_player")
    assert task.instruction == one.goal and task.difficulty == 2
    assert from_platform(task.model_dump()).params == one.params and from_platform(task).ui_seed == 3
    listed = platform_tasks("media_player", seeds=range(2), ui_seed=5)
    assert len(listed) == 2 * len(list_tasks("media_player")) and all(t.id.endswith("@5") for t in listed)
    assert [t.difficulty for t in listed] == sorted(t.difficulty for t in listed)
    for bad in ("media_player/seek_pause", "media_player/seek_pause/x", "media_player/seek_pause/1@y"):
        with pytest.raises(ValueError):
            make_task(bad)
    with pytest.raises(KeyError):
        make_task("media_player/no_such_template/1")


# ---------------------------------------------------------------- the environment in a browser


@pytest.fixture(scope="module")
def env() -> Iterator[BrowserEnv]:
    environment = BrowserEnv(app="media_player", action_settings=ActionSettings(action_timeout_ms=1500, wait_s=0.2))
    yield environment
    environment.close()


def test_check_env_passes() -> None:
    environment = BrowserEnv(app="media_player", difficulties=(1,), screenshot=(160, 100))
    try:
        check_env(environment, skip_render_check=True)
        obs, _ = environment.reset(seed=3)
        assert obs["screenshot"].shape == (100, 160, 3) and obs["screenshot"].dtype == np.uint8
        assert obs["screenshot"].std() > 0  # a picture of the app, not a blank
    finally:
        environment.close()


def test_reset_observation_and_info(env: BrowserEnv) -> None:
    obs, info = env.reset(options={"task": make_task(TASK, ui_seed=2).to_platform()})
    assert obs["url"].endswith("/media_player/index.html?seed=2") and obs["last_action_error"] == ""
    assert obs["goal"] == make_task(TASK).goal and info["task_id"] == f"{TASK}@2"
    assert info["visited_urls"] == [obs["url"]] and info["blocked_requests"] == [] and not info["infra_failure"]
    elements = parse(obs["text"])
    ids = [e.id for e in elements if e.id is not None]
    assert ids == list(range(1, len(ids) + 1))
    assert {"button", "slider", "option", "canvas"} <= {e.role for e in elements if e.id}
    assert any(e.role == "listbox" for e in elements)


def test_actions_errors_and_episode_end(env: BrowserEnv) -> None:
    obs, _ = env.reset(options={"task": TASK})
    obs, reward, terminated, truncated, info = env.step("click(999)")
    assert "no element [999]" in obs["last_action_error"] and (reward, terminated, truncated) == (0.0, False, False)
    obs, *_, info = env.step("jump to the end")
    assert "no action found" in obs["last_action_error"] and info["valid_action"] is False
    obs, *_ = env.step("hotkey('ctrl m')")  # the Mute shortcut
    assert obs["last_action_error"] == "" and "(muted)" in obs["text"]
    canvas = next(e for e in parse(obs["text"]) if e.role == "canvas")
    assert canvas.box is not None
    x, y = (canvas.box[0] + canvas.box[2]) // 2, (canvas.box[1] + canvas.box[3]) // 2
    obs, *_ = env.step(f"click({x}, {y})")  # a click on the video plays the first track
    assert "Playing:" in obs["text"]
    obs, reward, terminated, truncated, info = env.step("finished()")
    assert terminated and not truncated and reward == 0.0 and info["success"] is False
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.step("wait()")


def test_solver_succeeds_and_max_steps_truncates(env: BrowserEnv) -> None:
    assert run_solver(env, TASK, ui_seed=4) == (True, 2)
    env.reset(options={"task": TASK})
    assert env.max_steps == make_task(TASK).max_steps
    env.max_steps_override = 3
    try:
        for step in range(3):
            _, reward, terminated, truncated, info = env.step("hotkey(Escape)")
            assert truncated == (step == 2)
    finally:
        env.max_steps_override = None
    assert not terminated and reward == 0.0 and info["success"] is False


def test_type_select_and_scroll_by_element(env: BrowserEnv) -> None:
    obs, _ = env.reset(options={"task": "media_player/set_speed/1"})
    obs, *_ = env.step(f"type({find(obs['text'], 'Volume', role='slider')}, 35)")
    assert 'slider "Volume" value="35"' in obs["text"]
    obs, *_ = env.step(f"scroll({find(obs['text'], 'Playlist', role='listbox')}, down)")
    assert obs["last_action_error"] == ""
    obs, *_ = env.step(f"select({find(obs['text'], 'Playlist', role='listbox')}, nope)")
    assert "no option 'nope'" in obs["last_action_error"]


def test_click_label_finds_the_element_by_the_name_a_layout_gives_it(env: BrowserEnv) -> None:
    default = ui_spec("media_player", 0).commands["speed"]
    seed = next(s for s in range(1, 200) if ui_spec("media_player", s).commands["speed"].label != default.label)
    placed = ui_spec("media_player", seed).commands["speed"]
    env.reset(options={"task": make_task("media_player/set_speed/1", ui_seed=seed).to_platform()})
    obs, *_ = env.step(f'click_label("{placed.menu}")')
    assert obs["last_action_error"] == "" and f'menuitem "{placed.label}"' in obs["text"]
    obs, *_ = env.step(f'click_label("{placed.label.upper()}")')
    assert obs["last_action_error"] == "" and 'combobox "Speed"' in obs["text"]
    obs, *_, info = env.step(f'click_label("{default.label}")')  # the default layout's name is not on this one
    assert f"no element named '{default.label}'" in obs["last_action_error"] and info["valid_action"]


def test_gymnasium_registration() -> None:
    ids = register_envs()
    assert env_id("media_player") in ids and register_envs() == ids
    made = gymnasium.make(env_id("media_player"), difficulties=(1,))
    try:
        assert made.unwrapped.apps == ("media_player",)
    finally:
        made.close()


def _hang_or_kill(host: BrowserHost, sig: int) -> None:
    assert host.pid is not None
    os.kill(host.pid, sig)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP], ids=["crash", "hang"])
def test_browser_crash_or_hang_is_an_infra_failure_and_recovers(sig: int) -> None:
    host = BrowserHost()
    environment = BrowserEnv(app="media_player", browser=host, step_timeout_s=8)  # slack for a loaded CI machine
    try:
        environment.reset(options={"task": TASK})
        launches, pid = host.launches, host.pid
        environment.step("click(1)")
        _hang_or_kill(host, sig)
        started = time.monotonic()
        obs, reward, terminated, truncated, info = environment.step("click(2)")
        assert info["infra_failure"] is True and truncated and not terminated and reward == 0.0
        assert "infrastructure failure" in obs["last_action_error"] and info["success"] is False
        assert time.monotonic() - started < 20
        with pytest.raises(RuntimeError):
            environment.step("wait()")
        assert run_solver(environment, TASK) == (True, 2)
        assert host.launches == launches + 1 and host.pid != pid
    finally:
        environment.close()
        host.close()


def test_environments_on_different_threads_each_get_a_browser() -> None:
    """The RL core steps each environment of a worker on its own thread (`EpisodeRunner`); Playwright's sync
    objects belong to their thread, so each thread's `BrowserEnv`s share that thread's browser."""

    def episode() -> tuple[tuple[bool, int], BrowserHost]:
        environment = BrowserEnv(app="media_player")
        try:
            return run_solver(environment, TASK), environment.host
        finally:
            environment.close()

    with ThreadPoolExecutor(max_workers=2) as pool:
        first, second = [future.result() for future in [pool.submit(episode) for _ in range(2)]]
        (solved, _), host = first
        assert solved and second[0][0] and second[1] is not host
        assert pool.submit(lambda: shared_browser() is shared_browser()).result()
    assert shared_browser() not in {host, second[1]}
    for finished in (host, second[1]):
        finished.close()  # their threads are gone: kill the browsers


def _tree_affinities(pid: int) -> set[frozenset[int]]:
    """The distinct CPU affinities of every thread of process `pid` and its descendants."""
    root = psutil.Process(pid)
    found = set()
    for process in [root, *root.children(recursive=True)]:
        for thread in process.threads():
            found.add(frozenset(os.sched_getaffinity(thread.id)))
    return found


def test_pinned_browser_keeps_every_process_on_its_core_across_contexts_and_relaunches() -> None:
    """`cpus` holds the stepping thread, the thread's driver and the browser tree to one core: the renderers of
    later contexts, the GPU process's self-pinned threads and a relaunched browser too (the last core: Chromium's
    own choice for its threads is the first). On its own thread, so the test's own thread stays free."""
    core = max(os.sched_getaffinity(0))

    def pinned_episodes() -> list[set[frozenset[int]]]:
        host = BrowserHost()
        environment = BrowserEnv(app="media_player", browser=host, cpus=[core])
        seen = []
        try:
            for relaunch in (False, True):
                if relaunch:
                    host.kill()
                for _ in range(2):  # a fresh context (and renderer) each time; the GPU threads start at the first
                    assert run_solver(environment, TASK) == (True, 2)
                assert host.pid is not None
                seen.append(_tree_affinities(host.pid))
            driver = psutil.Process(host.pid).ppid()
            seen.append(_tree_affinities(driver))
            seen.append({frozenset(os.sched_getaffinity(0))})
            assert host.launches == 2
        finally:
            environment.close()
            host.close()
        return seen

    with ThreadPoolExecutor(max_workers=1) as pool:
        seen = pool.submit(pinned_episodes).result()
    assert all(found == {frozenset({core})} for found in seen), seen


def test_pin_refuses_cores_the_process_may_not_use_and_worker_cores_go_round_robin() -> None:
    with pytest.raises(ValueError, match="subset"):
        BrowserHost().pin([10_000])
    cores = sorted(os.sched_getaffinity(0))
    assert [worker_core(i) for i in range(2 * len(cores))] == cores + cores

    class EnvContext(dict):  # RLlib's: the env config, plus the runner's index as an attribute
        worker_index = 1

    assert make_discrete_env(EnvContext(cpus="worker")).browser_env.cpus == (cores[0],)
    assert make_discrete_env({"cpus": "worker"}).browser_env.cpus is None  # the driver's local runner
    assert make_discrete_env({"cpus": [cores[-1]]}).browser_env.cpus == (cores[-1],)
