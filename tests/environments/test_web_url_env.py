"""`UrlEnv`: the suite's browser environment on a page it did not build, with no checker (SEAgent's setting)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from raygent.environments.web.registry import from_platform
from raygent.environments.web.server import AppServer
from raygent.environments.web.url_env import (
    DEFAULT_INSTRUCTION,
    UrlEnv,
    UrlUnavailable,
    app_name,
    check_url,
    register_url_app,
    task_url,
    url_task,
)

from conftest import free_port


def test_only_http_urls_on_loopback_pass_the_check() -> None:
    assert check_url("http://127.0.0.1:8000/app/") == "http://127.0.0.1:8000/app/"
    assert check_url("http://localhost:9/x")
    for bad in ("https://example.com/", "file:///etc/passwd", "ftp://127.0.0.1/", "127.0.0.1:80", "http://10.0.0.1/"):
        with pytest.raises(ValueError):
            check_url(bad)


def test_a_free_task_carries_its_instruction_and_url_and_never_succeeds() -> None:
    url = "http://127.0.0.1:1/some-app/"
    task = url_task(url, "Open the File menu.", seed=7, difficulty=1, atoms=["file"])
    assert task.params["app"] == app_name(url) == register_url_app(url)
    assert task_url(task) == url and task_url(task.model_dump()) == url and task_url("x") is None
    instance = from_platform(task)
    assert instance.goal == "Open the File menu." and instance.task.url(instance.params) == url
    reward, done, _, success = instance.task.validate({"anything": 1}, instance.params)
    assert (reward, done, success) == (0.0, False, False)
    assert task.params["atoms"] == ["file"]


@pytest.fixture(scope="module")
def served() -> Iterator[AppServer]:
    """A suite app served by a second loopback server, treated as an unknown page (no contract, no checker)."""
    server = AppServer(docs=False).start()

    def never(subpath: str, query: dict[str, list[str]]) -> tuple[int, str, bytes]:
        time.sleep(20)  # the page's script never arrives, so its load event never fires
        return 200, "text/javascript", b""

    def hanging_page(subpath: str, query: dict[str, list[str]]) -> tuple[int, str, bytes]:
        if subpath.endswith(".js"):
            return never(subpath, query)
        return 200, "text/html", b"<html><body><script src='/hang/slow.js'></script><button>Go</button></body></html>"

    def late_page(subpath: str, query: dict[str, list[str]]) -> tuple[int, str, bytes]:
        if subpath == "data":
            time.sleep(1.5)  # a page that builds itself from a slow request (a loaded machine)
            return 200, "application/json", b'{"label": "Built late"}'
        script = "fetch('/late/data').then(r => r.json()).then(d => { const b = document.createElement('button');"
        script += " b.textContent = d.label; document.body.append(b); });"
        return 200, "text/html", f"<html><body><script>{script}</script></body></html>".encode()

    def busy_page(subpath: str, query: dict[str, list[str]]) -> tuple[int, str, bytes]:
        script = "setInterval(() => { document.title = String(Date.now()); }, 50);"  # never quiet
        return 200, "text/html", f"<html><body><button>Busy</button><script>{script}</script></body></html>".encode()

    server.add_route("/hang/", hanging_page)
    server.add_route("/late/", late_page)
    server.add_route("/busy/", busy_page)
    yield server
    server.stop()


@pytest.mark.browser
def test_an_unknown_page_runs_until_finished_or_the_step_limit(served: AppServer) -> None:
    url = served.app_url("media_player")
    env = UrlEnv(url=url, max_steps=2)
    try:
        observation, info = env.reset(options={"task": url_task(url, "Mute the sound.")})
        assert observation["goal"] == "Mute the sound." and observation["url"].startswith(served.origin)
        assert 'slider "Volume"' in observation["text"]
        volume = re.search(r'\[(\d+)\] slider "Volume"', observation["text"])
        assert volume is not None
        observation, reward, terminated, truncated, info = env.step("click(9999)")  # no such element
        assert observation["last_action_error"] and not terminated and not truncated and reward == 0.0
        _, reward, terminated, truncated, info = env.step("scroll(500, 500, down)")
        assert truncated and not terminated and info["success"] is False and info["checker"] is False

        observation, _ = env.reset()  # no task: the default instruction on the URL
        assert observation["goal"] == DEFAULT_INSTRUCTION
        _, _, terminated, truncated, info = env.step("finished()")
        assert terminated and not truncated and not info["infra_failure"]
    finally:
        env.close()


@pytest.mark.browser
def test_a_page_is_observed_once_its_requests_are_done_and_its_dom_is_quiet(served: AppServer) -> None:
    pages = (("/late/index.html", 'button "Built late"', 10), ("/busy/index.html", 'button "Busy"', 14))
    for path, button, most_s in pages:
        env = UrlEnv(url=f"{served.origin}{path}", reset_retries=0)
        try:
            began = time.perf_counter()
            observation, _ = env.reset()
            assert button in observation["text"] and time.perf_counter() - began < most_s  # a busy page: the cap
        finally:
            env.close()


@pytest.mark.browser
def test_bad_pages_are_infrastructure_failures_with_a_reason(served: AppServer) -> None:
    closed_port = free_port()  # a loopback port nobody listens on
    cases = {
        "http://example.com/app/": "not on loopback",
        f"http://127.0.0.1:{closed_port}/app/": "did not load",
        f"{served.origin}/hang/index.html": "did not load",
    }
    for url, reason in cases.items():
        env = UrlEnv(url=url, page_timeout_ms=1500, reset_timeout_s=10, reset_retries=0)
        try:
            began = time.perf_counter()
            with pytest.raises(UrlUnavailable, match=reason):
                env.reset()
            assert time.perf_counter() - began < 12
        finally:
            env.close()


@pytest.mark.browser
def test_a_task_for_another_url_is_refused(served: AppServer) -> None:
    env = UrlEnv(url=served.app_url("media_player"))
    try:
        with pytest.raises(UrlUnavailable, match="is for"):
            env.reset(options={"task": url_task(served.app_url("code_editor"), "Open a file.")})
    finally:
        env.close()
