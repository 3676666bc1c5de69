"""The browser sandbox: only the suite's own server is reachable; file:// and every other host are refused and logged.

A probe page served by the suite's server offers links and buttons that try to leave the sandbox; the agent's
own actions (typed URLs through `goto`, link clicks, a page script's `fetch`, a WebSocket, an image) try each.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from raygent.environments.web.actions import ActionSettings
from raygent.environments.web.env import BrowserEnv
from raygent.environments.web.observe import find
from raygent.environments.web.sandbox import Sandbox, origin_of
from raygent.environments.web.server import shared_server

pytestmark = pytest.mark.browser

EXTERNAL = "http://93.184.215.14/secret"
EXTERNAL_NAME = "https://example.com/page"
FILE = "file:///etc/hostname"

PROBE = """<!doctype html><html><head><title>probe</title></head><body>
<h1>Sandbox probe</h1>
<a href="{external}">external link</a>
<a href="{file}">file link</a>
<a href="{other_port}">other loopback port</a>
<button id="fetch-external" onclick="probe('{external_name}')">fetch external</button>
<button id="fetch-file" onclick="probe('{file}')">fetch file</button>
<button id="socket" onclick="socket()">open socket</button>
<button id="image" onclick="image()">load image</button>
<div id="result" role="status">idle</div>
<script>
function show(text) {{ document.getElementById('result').textContent = text; }}
function probe(url) {{
  fetch(url).then(r => r.text()).then(t => show('fetched: ' + t.slice(0, 40)), e => show('refused: ' + e));
}}
function socket() {{
  const ws = new WebSocket('ws://93.184.215.14/socket');
  ws.onopen = () => show('socket open');
  ws.onclose = () => show('socket closed');
  ws.onerror = () => show('socket error');
}}
function image() {{
  const img = new Image();
  img.onload = () => show('image loaded');
  img.onerror = () => show('image refused');
  img.src = 'http://203.0.113.9/pixel.png';
  document.body.append(img);
}}
</script></body></html>"""


def _probe_page(path: str, query: dict[str, list[str]]) -> tuple[int, str, bytes]:
    page = PROBE.format(
        external=EXTERNAL, external_name=EXTERNAL_NAME, file=FILE, other_port="http://127.0.0.1:9/ray-dashboard"
    )
    return 200, "text/html", page.encode()


@pytest.fixture(scope="module")
def env() -> Iterator[BrowserEnv]:
    shared_server().add_route("/sandbox-probe/", _probe_page)
    environment = BrowserEnv(app="media_player", action_settings=ActionSettings(action_timeout_ms=2000))
    yield environment
    environment.close()


@pytest.fixture
def probe(env: BrowserEnv) -> dict[str, Any]:
    env.reset(options={"task": "media_player/play_track/1"})
    obs, *_ = env.step(f'goto("{env.server.origin}/sandbox-probe/")')
    assert obs["url"].endswith("/sandbox-probe/") and obs["last_action_error"] == ""
    return obs


def _blocked(info: dict[str, Any], fragment: str) -> list[dict[str, Any]]:
    return [b for b in info["blocked_requests"] if fragment in b["url"]]


def _step(env: BrowserEnv, action: str) -> tuple[dict[str, Any], dict[str, Any]]:
    obs, _, _, _, info = env.step(action)
    return obs, info


def _until(
    env: BrowserEnv, step: tuple[dict[str, Any], dict[str, Any]], done: Callable[[dict, dict], bool]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Take `wait()` steps (at most five) until `done(obs, info)`: a refusal may reach the log or the page a
    moment after the action that caused it, on a busy machine."""
    for _ in range(5):
        if done(*step):
            break
        step = _step(env, "wait()")
    return step


def test_origin_and_allow_list() -> None:
    sandbox = Sandbox(("http://127.0.0.1:8000",))
    assert origin_of("http://127.0.0.1:8000/a?b") == "http://127.0.0.1:8000"
    assert origin_of("https://Example.com/x") == "https://example.com:443"
    assert origin_of("file:///etc/passwd") == ""
    assert sandbox.allows("http://127.0.0.1:8000/docs/") and sandbox.allows("about:blank")
    assert not sandbox.allows("http://127.0.0.1:8265/")  # another loopback service (Ray's dashboard)
    assert not sandbox.allows("http://localhost:8000/") and not sandbox.allows(FILE)
    assert sandbox.check_url(FILE) is not None and sandbox.blocked[-1].kind == "navigation"


def test_typed_urls_are_refused_and_logged(env: BrowserEnv, probe: dict[str, Any]) -> None:
    for url in (FILE, EXTERNAL, EXTERNAL_NAME, "chrome://settings"):
        obs, info = _step(env, f'goto("{url}")')
        assert "blocked" in obs["last_action_error"], url
        assert obs["url"].endswith("/sandbox-probe/")
        assert _blocked(info, url.split("//")[1].split("/")[0] or "etc/hostname"), url


def test_links_out_of_the_sandbox_are_refused(env: BrowserEnv, probe: dict[str, Any]) -> None:
    for name, fragment in (("external link", "93.184.215.14"), ("other loopback port", "127.0.0.1:9/")):
        obs, info = _step(env, f"click({find(probe['text'], name, role='link')})")
        obs, info = _until(env, (obs, info), lambda o, i, f=fragment: bool(_blocked(i, f)))
        assert _blocked(info, fragment), (name, info["blocked_requests"])
        assert "93.184" not in obs["url"] and ":9/" not in obs["url"]
        probe, _ = _step(env, f'goto("{env.server.origin}/sandbox-probe/")')
    obs, info = _step(env, f"click({find(probe['text'], 'file link', role='link')})")
    obs, info = _until(env, (obs, info), lambda o, i: bool(_blocked(i, "/etc/hostname")))
    assert not obs["url"].startswith("file:")
    assert _blocked(info, "/etc/hostname"), info["blocked_requests"]


def test_page_script_requests_are_refused(env: BrowserEnv, probe: dict[str, Any]) -> None:
    results = {}
    for button, fragment in (
        ("fetch external", "example.com"),
        ("fetch file", "/etc/hostname"),
        ("open socket", "ws://93.184.215.14"),
        ("load image", "203.0.113.9"),
    ):
        obs, info = _step(env, f"click({find(probe['text'], button, role='button')})")
        obs, info = _until(env, (obs, info), lambda o, i, f=fragment: bool(_blocked(i, f)) and "idle" not in o["text"])
        results[button] = next(e for e in obs["text"].splitlines() if "status" in e)
        assert _blocked(info, fragment), (button, info["blocked_requests"])
    assert "refused" in results["fetch external"] and "refused" in results["fetch file"]
    assert "fetched" not in json.dumps(results) and "socket open" not in results["open socket"]
    assert "image refused" in results["load image"]
