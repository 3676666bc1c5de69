"""`CompactWebEnv`: the suite's `BrowserEnv` as the web agent sees it, registered as `raygent/web-agent-v0`.

A `gymnasium.Wrapper` of `BrowserEnv` with three differences:

- The observation `text` is `observation.compact` of the accessibility tree (ids unchanged); `inner` is the
  `BrowserEnv`, whose last full observation is `inner.render()` with `render_mode="ansi"`.
- Its browser is its thread's (`thread_browser`), like `shared_browser()`, but counted: the last environment of
  a thread to close closes that Chromium, so the recording and replay threads (`demos.py`, `screens.py`), which
  end, leave no browser behind.
- With `hindsight` (template ids), each step's `info["hindsight"]` lists the candidate goals of those templates
  the episode has achieved so far (`hindsight.HindsightGoals`), for the trainer's hindsight demonstrations.

SEAgent's actor sees screenshots of a whole desktop; here the text is the policy's input and a downscaled
screenshot (`screenshot=(w, h)`) is optional, for reports.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, SupportsFloat

import gymnasium
from playwright.sync_api import Error as PlaywrightError

from raygent.environments.web.agent.hindsight import INFO_KEY, HindsightGoals, encode
from raygent.environments.web.agent.observation import compact
from raygent.environments.web.browser import BrowserHost, BrowserHung
from raygent.environments.web.env import BrowserEnv

ENV_ID = "raygent/web-agent-v0"

_LOCAL = threading.local()


def thread_browser() -> BrowserHost:
    """This thread's `BrowserHost` (launched on first use), counted per environment that holds it."""
    host: BrowserHost | None = getattr(_LOCAL, "host", None)
    if host is None:
        host = _LOCAL.host = BrowserHost()
        _LOCAL.users = 0
    _LOCAL.users += 1
    return host


def release_thread_browser(host: BrowserHost) -> None:
    """One holder of `host` is done with it; the last one on its thread closes it."""
    ours = getattr(_LOCAL, "host", None) is host
    if ours:
        _LOCAL.users -= 1
    if not ours or _LOCAL.users <= 0:
        # made on another thread (the caller's thread is being abandoned), or this thread's last holder: close it
        host.close()
    if ours and _LOCAL.users <= 0:
        _LOCAL.host = None


class CompactWebEnv(gymnasium.Wrapper[dict[str, Any], str, dict[str, Any], str]):
    """A `gymnasium.Wrapper` of a `BrowserEnv` over any of the suite's apps with compact observation text (see the
    module docstring).

    `env` is the `BrowserEnv` to wrap; without one, the keyword arguments build it (`app`, `difficulties`,
    `screenshot`, `max_steps`, ...) on this thread's browser (`thread_browser`), which `close` releases.
    `hindsight`/`hindsight_per_template` are `HindsightGoals`'.
    """

    metadata = BrowserEnv.metadata
    action_grammar = BrowserEnv.action_grammar

    def __init__(
        self,
        env: BrowserEnv | None = None,
        *,
        hindsight: Sequence[str] = (),
        hindsight_per_template: int = 8,
        **kwargs: Any,
    ) -> None:
        self.goals = HindsightGoals(hindsight, hindsight_per_template) if hindsight else None
        self._host = thread_browser() if env is None else None
        super().__init__(env if env is not None else BrowserEnv(browser=self._host, **kwargs))
        self._closed = False

    @property
    def inner(self) -> BrowserEnv:
        """The wrapped `BrowserEnv` (its `task`, `last_state`, full observation `render()`)."""
        env = self.env
        assert isinstance(env, BrowserEnv)
        return env

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        observation, info = self.inner.reset(seed=seed, options=options)
        if self.goals is not None and self.inner.task is not None:
            try:
                self.goals.reset(self.inner.task, self.inner.read_state())
            except (PlaywrightError, BrowserHung):  # the first step finds the browser gone; no goals this time
                self.goals.reset(self.inner.task, None)
        return self._compact(observation), info

    def step(self, action: str) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.inner.step(action)
        if self.goals is not None and not info.get("infra_failure"):
            achieved = self.goals.achieved(self.inner.last_state)
            if achieved:
                info[INFO_KEY] = encode(achieved)
        return self._compact(observation), reward, terminated, truncated, info

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.inner.close()
        if self._host is not None:
            release_thread_browser(self._host)

    @staticmethod
    def _compact(observation: dict[str, Any]) -> dict[str, Any]:
        return {**observation, "text": compact(str(observation.get("text", "")))}


def register_envs() -> list[str]:
    """Register `raygent/web-agent-v0` with gymnasium (idempotent); returns the ids."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="raygent.environments.web.agent.env:CompactWebEnv")
    return [ENV_ID]
