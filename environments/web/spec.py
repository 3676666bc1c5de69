"""The `web_url` environment of the registry (`raygent envs`; the `raygent.envs` entry point in pyproject.toml):
`UrlEnv` (`url_env.py`) on any page served on loopback, and `url_tasks`, its task function.

The page is both the environment's (`env.kwargs.url`) and its tasks' (`env.task_kwargs.url`):

    env: {name: web_url, kwargs: {url: "http://127.0.0.1:8000/"}, task_kwargs: {url: "http://127.0.0.1:8000/"}}

The suite's own apps are registered environments too, one per app, as a web agent runs them
(`agent/spec.py`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Annotated

from pydantic import AfterValidator

from raygent.environments.web.url_env import DEFAULT_INSTRUCTION, URL_ENV_ID, check_url, url_task
from raygent.platform.contracts import Task
from raygent.platform.envs import EnvSpec

SPLITS = ("train", "heldout")
LoopbackUrl = Annotated[str, AfterValidator(check_url)]
"""An http(s) URL on loopback (checked when a config gives it, before Ray starts)."""


def url_tasks(
    split: str, seed: int, n: int, url: LoopbackUrl = "", instructions: Sequence[str] = (DEFAULT_INSTRUCTION,)
) -> list[Task]:
    """`n` free tasks on `url` (no checker: an episode ends on `finished()` or at the step limit): `train` draws
    the instructions by `seed`, `heldout` takes them in order. A task's seed is its instruction's index."""
    if not url:
        raise ValueError("url_tasks needs task_kwargs.url: the page, http(s) on loopback (e.g. http://127.0.0.1:8000/)")
    check_url(url)
    pool = list(instructions)
    if not pool:
        raise ValueError("url_tasks needs at least one instruction")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    rng = random.Random(f"url/{split}/{seed}")
    picks = [rng.randrange(len(pool)) for _ in range(n)] if split == "train" else [i % len(pool) for i in range(n)]
    return [url_task(url, pool[k], seed=k) for k in picks]


SPEC = EnvSpec(
    name="web_url",
    description="any page served on loopback in Chromium, no checker (give kwargs.url and task_kwargs.url)",
    id=URL_ENV_ID,
    registration="raygent.environments.web.url_env:register_envs",
    tasks="raygent.environments.web.spec:url_tasks",
    splits=SPLITS,
)
