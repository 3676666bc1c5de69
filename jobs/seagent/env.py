"""`SeagentEnv` (`raygent/seagent-v0`): the web agent's compact browser environment, pointed at a URL too.

One environment serves both kinds of task a SEAgent run has:

- the curriculum's free tasks on `url` (`environments/web/url_env.py`: no checker; an episode ends on
  `finished()` or the turn limit), and
- the held-out evaluation's suite tasks (the app's own checker, which training never sees).

A generalist trains on several apps at once: `urls` adds more pages to the one at `url`, and a free task runs on
whichever of them it names.

It is `CompactWebEnv` (compact accessibility text, one Chromium per thread) over a `BrowserEnv` whose sandbox also
allows the URL's origin (loopback only), with the URL's app registered in the worker's process. The step that
ends an episode carries the final screen's compact text in `info["screen"]`, which the World State Model reads
as the last frame (the RL core's trajectory keeps only the screens before each step). A URL that is not on
loopback, unreachable or never settles makes `reset` raise (`UrlUnavailable`): the rollout worker retries and
then records the episode as an infrastructure failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, SupportsFloat

import gymnasium

from raygent.environments.web.agent.env import CompactWebEnv
from raygent.environments.web.sandbox import origin_of
from raygent.environments.web.url_env import UrlUnavailable, check_url, register_url_app, task_url
from raygent.rewards.seagent.wsm import FINAL_SCREEN_KEY

ENV_ID = "raygent/seagent-v0"


class SeagentEnv(CompactWebEnv):
    """See the module docstring. `url` (and `urls`): the apps' pages; other kwargs are `CompactWebEnv`'s
    (`BrowserEnv`'s)."""

    def __init__(self, url: str = "", page_timeout_ms: float = 15000, urls: Sequence[str] = (), **kwargs: Any) -> None:
        self.urls, self.problem = [u for u in dict.fromkeys([url, *urls]) if u], ""
        origins = list(kwargs.pop("allowed_origins", ()))
        for page in self.urls:
            try:
                check_url(page)
                origins.append(origin_of(page))
                register_url_app(page)
            except ValueError as error:
                self.problem = str(error)
        if "action_settings" not in kwargs:
            from raygent.environments.web.actions import ActionSettings

            kwargs["action_settings"] = ActionSettings(navigation_timeout_ms=page_timeout_ms)
        super().__init__(allowed_origins=origins, **kwargs)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        given = (options or {}).get("task")
        url = task_url(given)
        if url is not None:
            if self.problem or url not in self.urls:
                raise UrlUnavailable(f"infrastructure failure: {self.problem or f'no environment for {url}'}")
            try:
                return super().reset(seed=seed, options=options)
            except RuntimeError as error:
                raise UrlUnavailable(f"infrastructure failure: {url} did not load: {error}") from error
        return super().reset(seed=seed, options=options)

    def step(self, action: str) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = super().step(action)
        info[FINAL_SCREEN_KEY] = str(observation.get("text", ""))
        return observation, reward, terminated, truncated, info


def register_envs() -> list[str]:
    """Register `raygent/seagent-v0` with gymnasium (idempotent); returns the ids."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="raygent.jobs.seagent.env:SeagentEnv")
    return [ENV_ID]
