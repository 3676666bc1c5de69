"""`UrlEnv`: the suite's `BrowserEnv` on any page served on loopback, with no task checker (SEAgent's setting).

`raygent run seagent env.url=http://127.0.0.1:PORT/app/` points an agent at a web app nobody wrote a task for:
no checker, no scripted expert, no page contract. This module makes such a page one more registered app:

- `register_url_app(url)` registers (idempotently, in this process) an app `url_<crc32 of the url>` with one
  template, `free`, whose page is the URL and whose contract asks nothing of the page but to settle (its
  requests done and its DOM quiet for `QUIET_MS`; no `setState`, `getState` reads nothing): the page starts as
  it loads.
- A `free` task's instruction is a parameter (`params["instruction"]`), so a curriculum can propose any
  instruction (`url_task(url, instruction, seed)` builds the platform `Task`); `validate` never ends the episode
  and never says success: an episode ends on `finished()` or at the step limit, and whether it did what it was
  asked is a judge's decision (a World State Model), not the environment's.
- `UrlEnv(url=...)` is a `BrowserEnv` over that app, its origin allowed (loopback only) besides the suite's own
  server. Observation, actions, sandbox and crash handling are `BrowserEnv`'s.

Bad input never crashes a run: a URL that is not http(s) on loopback, an unreachable server or a page that never
finishes loading (`navigation_timeout_ms`, `reset_timeout_s`) makes `reset` raise `UrlUnavailable` (a
`RuntimeError` with the reason), which the RL core's rollout worker retries and then records as an infrastructure
failure of the episode. The constructor does not check the URL: an environment is built on a rollout worker's
thread, where a raise is counted the same way; a job checks its `env.url` at config time (`check_url`).
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence
from typing import Any, ClassVar, SupportsFloat

import gymnasium

from raygent.environments.web.actions import ActionSettings
from raygent.environments.web.env import LOOPBACK_HOSTS, BrowserEnv, Observation
from raygent.environments.web.registry import WebApp, env_id, get_app, register_app
from raygent.environments.web.sandbox import origin_of
from raygent.environments.web.task import ATOMIC, PageContract, WebTask
from raygent.platform.contracts import Task

URL_ENV_ID = "raygent/web-url-v0"
TEMPLATE = "free"
DEFAULT_INSTRUCTION = "Explore the app."
NO_CHECKER = "no checker: the environment does not judge this page"
QUIET_MS = 300
"""A page nobody wrote a `ready` for is ready once its requests are done and its DOM has not changed for this long."""
QUIET_CAP_MS = 8000
"""... or this long after its navigation started, whichever comes first (a page that animates forever)."""
QUIET_SCRIPT = """(() => {
  const w = window; w.__raygentPending = 0; w.__raygentChanged = 0;
  const done = () => { w.__raygentPending -= 1; w.__raygentChanged = performance.now(); };
  const fetch0 = w.fetch;
  if (fetch0) w.fetch = function (...a) { w.__raygentPending += 1; return fetch0.apply(this, a).finally(done); };
  const send0 = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...a) {
    w.__raygentPending += 1; this.addEventListener("loadend", done, {once: true}); return send0.apply(this, a);
  };
  new MutationObserver(() => { w.__raygentChanged = performance.now(); })
    .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
})();"""
"""Counts the page's pending fetch/XHR requests and stamps the time of its last DOM change (an init script)."""
QUIET_READY = (
    "() => document.readyState === 'complete' && ((window.__raygentPending || 0) <= 0"
    f" && performance.now() - (window.__raygentChanged || 0) > {QUIET_MS} || performance.now() > {QUIET_CAP_MS})"
)
FREE_CONTRACT = PageContract(
    ready=QUIET_READY, set_state=None, get_state="() => null", goal=None, init_scripts=(QUIET_SCRIPT,)
)
"""Nothing is asked of the page but to settle (no requests pending, DOM quiet): it starts as it loads and has no
state the environment reads. A page that builds itself from a fetched file (the suite's apps do) is observed
built, however loaded the machine is."""


class UrlUnavailable(RuntimeError):
    """The page cannot be used (not on loopback, unreachable, never settles): an infrastructure failure."""


def check_url(url: str) -> str:
    """`url` if it is an http(s) URL on this machine's loopback; else `ValueError` saying why."""
    origin = origin_of(url)
    if not origin:
        raise ValueError(f"{url!r} is not an http(s) URL")
    host = origin.split("://", 1)[1].rsplit(":", 1)[0]
    if host not in LOOPBACK_HOSTS and not host.startswith("127."):
        raise ValueError(f"{url!r} is not on loopback (127.0.0.1, localhost): the sandbox reaches nothing else")
    return url


def app_name(url: str) -> str:
    """The registered app name of `url`: `url_<crc32 hex>`."""
    return f"url_{zlib.crc32(url.encode()):08x}"


class FreeTask(WebTask):
    """A free instruction on a page with no checker (see the module docstring); `page` is set per URL."""

    template = TEMPLATE
    difficulty = ATOMIC
    max_steps = 15
    page: ClassVar[str] = ""
    contract: ClassVar[PageContract | None] = FREE_CONTRACT

    def url(self, params: dict[str, Any]) -> str | None:
        return str(params.get("url") or self.page)

    def sample(self, rng: random.Random) -> dict[str, Any]:
        return {"instruction": DEFAULT_INSTRUCTION, "url": self.page}

    def goal(self, params: dict[str, Any]) -> str:
        return str(params.get("instruction") or DEFAULT_INSTRUCTION)

    def initial_state(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[Any, ...]:
        return 0.0, False, NO_CHECKER, False


def register_url_app(url: str) -> str:
    """Register the app of `url` in this process (idempotent; the URL is not checked here) and return its name."""
    name = app_name(url)
    try:
        get_app(name)
        return name
    except KeyError:
        pass
    template = type(f"FreeTask_{name}", (FreeTask,), {"app": name, "page": url, "__doc__": FreeTask.__doc__})
    register_app(WebApp(name=name, templates=(template,), url=url, description=f"any page: {url}"))
    return name


def url_task(url: str, instruction: str, seed: int = 0, difficulty: int = 0, **extra: Any) -> Task:
    """The platform `Task` of `instruction` on `url` (registers the URL's app; `extra` joins the task's params,
    e.g. a curriculum's bookkeeping)."""
    name = register_url_app(url)
    return Task(
        id=f"{name}/{TEMPLATE}/{seed}",
        env=URL_ENV_ID,
        instruction=instruction,
        difficulty=difficulty,
        params={
            "app": name,
            "template": TEMPLATE,
            "seed": seed,
            "ui_seed": 0,
            "params": {"instruction": instruction, "url": url},
            **extra,
        },
    )


def task_url(task: Task | dict[str, Any] | str | None) -> str | None:
    """The URL a free task (a platform `Task` or its dict) names, else None."""
    if isinstance(task, Task):
        params = task.params
    elif isinstance(task, dict):
        params = task.get("params") or {}
    else:
        return None
    inner = params.get("params") if isinstance(params, dict) else None
    return str(inner["url"]) if isinstance(inner, dict) and inner.get("url") else None


class UrlEnv(BrowserEnv):
    """`BrowserEnv` on the page at `url` (see the module docstring); registered as `raygent/web-url-v0`.

    Args:
        url: the page (http(s) on loopback); its origin is allowed besides the suite's server.
        max_steps: the episode's step limit (no checker ends it; only `finished()` or this).
        page_timeout_ms: how long a page load (and each navigation an action starts) may take.
        reset_timeout_s, reset_retries, step_timeout_s, screenshot, viewport, cpus, browser, server,
            render_mode, allowed_origins: `BrowserEnv`'s.
    """

    def __init__(
        self,
        url: str,
        max_steps: int = 15,
        page_timeout_ms: float = 15000,
        action_settings: ActionSettings | None = None,
        allowed_origins: Sequence[str] = (),
        **kwargs: Any,
    ) -> None:
        self.url = url
        self.problem = ""
        try:
            check_url(url)
        except ValueError as error:
            self.problem = str(error)
        settings = action_settings or ActionSettings(navigation_timeout_ms=page_timeout_ms)
        origins = [*allowed_origins, origin_of(url)] if not self.problem else list(allowed_origins)
        super().__init__(
            app=register_url_app(url),
            max_steps=max_steps,
            action_settings=settings,
            allowed_origins=origins,
            **kwargs,
        )

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict]:
        """Open the page for `options["task"]` (a free task of this URL, its instruction from the task) or for
        the default instruction; `UrlUnavailable` when the page cannot be used."""
        options = dict(options or {})
        given = options.get("task")
        url = task_url(given) or self.url
        if url != self.url:
            raise UrlUnavailable(f"task {getattr(given, 'id', given)!r} is for {url}, this environment for {self.url}")
        if self.problem:
            raise UrlUnavailable(f"infrastructure failure: {self.problem}")
        if given is None:
            options["task"] = url_task(self.url, DEFAULT_INSTRUCTION)
        try:
            return super().reset(seed=seed, options=options)
        except RuntimeError as error:
            raise UrlUnavailable(f"infrastructure failure: {self.url} did not load: {error}") from error

    def step(self, action: str) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = super().step(action)
        info["checker"] = False
        return observation, reward, terminated, truncated, info


def register_envs() -> list[str]:
    """Register `raygent/web-url-v0` with gymnasium (idempotent); returns the ids."""
    if URL_ENV_ID not in gymnasium.registry:
        gymnasium.register(id=URL_ENV_ID, entry_point="raygent.environments.web.url_env:UrlEnv")
    return [URL_ENV_ID]


__all__ = [
    "URL_ENV_ID",
    "FreeTask",
    "UrlEnv",
    "UrlUnavailable",
    "app_name",
    "check_url",
    "env_id",
    "register_envs",
    "register_url_app",
    "task_url",
    "url_task",
]
