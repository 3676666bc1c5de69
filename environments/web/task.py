"""The web-task contract: one parameterized template per class, checked from the app's state, solved by script.

This follows BrowserGym's task shape (docs/design.md §4) with one change: `validate` reads the app's *state* (the JSON
its page returns from `window.raygent.getState()`), not the page, so checkers are pure functions testable
without a browser. `BrowserEnv` does the page work: it opens the app, calls `window.raygent.setState(...)`
with `initial_state(params)`, and after every action reads the state and calls `validate`.

A template's `solve` is a generator that drives the page through the same action grammar an agent uses: it
yields an action string, receives the next observation text (see `observe.py`), and yields the next action,
until the task validates. It knows the seed's `UISpec` (the scripted expert is privileged; the agent must read
the docs). A template without an expert leaves `solve` alone (it raises `NotImplementedError`).

Pages the suite did not build (issue 24): a template may give its own page (`url(params)`, a path on the suite's
server or a loopback URL) and its own `PageContract` (how the environment waits for the page, gives it the
initial state, reads its state and, when the page has one, its goal; extra init scripts adapt a page's own
globals). `PageTask` is the template for pages that compute their own reward in JavaScript.

Success is explicit: `validate` returns `(reward, done, message)` or `(reward, done, message, success)`;
`verdict(...)` reads either, and without the fourth item success is today's rule, `done and reward >= 1.0`
(a reward discounted by time needs the explicit form, or `PageTask`'s).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Generator, Sequence
from typing import Any, ClassVar, NamedTuple

from pydantic import BaseModel, ConfigDict

from raygent.environments.web.ui import UISpec

ATOMIC, COMPOSED, LONG = 1, 2, 3
"""Difficulty levels: one command, a few commands combined, a long sequence."""

Solver = Generator[str, str, None]
"""`action = next(s)`, then `action = s.send(observation_text)` after each step."""


class PageContract(BaseModel):
    """How `BrowserEnv` talks to a page: JavaScript function sources run with Playwright's `page.evaluate`.

    The default is the suite's own contract (`window.raygent` with `ready`, `setState`, `getState`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    ready: str | None = "() => window.raygent && window.raygent.ready"
    """Awaited until truthy after the load event (a returned promise is awaited too); None: the load is enough."""
    set_state: str | None = "async (state) => { await window.raygent.setState(JSON.parse(state)); }"
    """Called with the JSON text of `initial_state(params)`; None: the page starts as it loads."""
    get_state: str = "() => JSON.stringify(window.raygent ? window.raygent.getState() : null)"
    """Returns the state `validate` reads (an object, or its JSON text); anything but an object reads as `{}`."""
    goal: str | None = None
    """Returns the instruction the page shows (read once the page is ready); None: `goal(params)` is the goal."""
    init_scripts: tuple[str, ...] = ()
    """Scripts run in every document of the episode before the page's own (adapters of a page's globals)."""


SUITE_CONTRACT = PageContract()
"""The contract of the suite's own apps."""


class Verdict(NamedTuple):
    """`validate`'s answer read by `verdict`: reward, done, message and success."""

    reward: float
    done: bool
    message: str
    success: bool


def verdict(result: Sequence[Any]) -> Verdict:
    """A `Verdict` from `validate`'s `(reward, done, message[, success])`; without `success`, `done and reward >= 1`.

    >>> verdict((0.8, True, "done late")), verdict((0.8, True, "done late", True)).success
    (Verdict(reward=0.8, done=True, message='done late', success=False), True)
    """
    if len(result) not in (3, 4):
        raise ValueError(f"validate must return (reward, done, message[, success]), got {result!r}")
    reward, done, message = float(result[0]), bool(result[1]), str(result[2])
    success = bool(result[3]) if len(result) == 4 else done and reward >= 1.0
    return Verdict(reward, done, message, success)


class WebTask(ABC):
    """A task template. Subclasses set the class attributes and implement the five methods.

    `params` are JSON values (str, int, float, bool, lists and dicts of them); `sample` must draw them from
    `rng` only, so a task is reproducible from `(template, seed)`.
    """

    app: ClassVar[str]
    template: ClassVar[str]
    """Unique within the app, e.g. `find_replace`; the task id is `<app>/<template>/<seed>`."""
    difficulty: ClassVar[int]
    max_steps: ClassVar[int] = 30
    contract: ClassVar[PageContract | None] = None
    """The page contract of this template (None: its app's, `WebApp.contract`)."""

    def url(self, params: dict[str, Any]) -> str | None:
        """The page this task opens: a path on the suite's server (`/bench/click.html`) or an absolute loopback
        URL (its origin must be allowed: `BrowserEnv(allowed_origins=...)`); None: its app's page."""
        return None

    @abstractmethod
    def sample(self, rng: random.Random) -> dict[str, Any]:
        """Draw the task's parameters."""

    @abstractmethod
    def goal(self, params: dict[str, Any]) -> str:
        """The instruction shown to the agent. It names what to achieve, not which menu to use."""

    @abstractmethod
    def initial_state(self, params: dict[str, Any]) -> dict[str, Any]:
        """The state passed to `window.raygent.setState` before the episode (e.g. a document to edit)."""

    @abstractmethod
    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[Any, ...]:
        """`(reward, done, message)` for the app's current state: reward 1.0 and done when the goal is met; or
        `(reward, done, message, success)` to say success explicitly (see `verdict`)."""

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        """The scripted expert for this task (see the module docstring); optional."""
        raise NotImplementedError(f"{self.app}/{self.template} has no scripted expert")


class PageTask(WebTask):
    """A task whose page holds its goal and its reward (an external benchmark's static HTML task).

    Set `app`, `template`, `difficulty`, `page` (the page's path on the suite's server, e.g. `/bench/a.html`,
    or a loopback URL) and `contract`: its `get_state` returns `{"reward": r, "done": d}` (optionally
    `"success"` and `"message"`), its `goal` the page's instruction. Success is the page's `success` when it
    gives one, else `done and reward > 0` (a reward discounted by time is still a success).
    """

    page: ClassVar[str]
    contract: ClassVar[PageContract | None] = PageContract(
        ready=None,
        set_state=None,
        get_state="() => JSON.stringify(window.raygentPage || {})",
        goal="() => String((window.raygentPage && window.raygentPage.goal) || '')",
    )
    """Default: the page keeps `window.raygentPage = {goal, reward, done[, success, message]}` up to date."""

    def url(self, params: dict[str, Any]) -> str | None:
        return self.page

    def sample(self, rng: random.Random) -> dict[str, Any]:
        return {}

    def goal(self, params: dict[str, Any]) -> str:
        return ""

    def initial_state(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[Any, ...]:
        reward, done = float(state.get("reward") or 0.0), bool(state.get("done"))
        success = bool(state["success"]) if "success" in state else done and reward > 0
        return reward, done, str(state.get("message", "")), success


TASKS: dict[str, dict[str, type[WebTask]]] = {}
"""Registry: app -> template -> class. Filled by `register` in each `apps/<app>/tasks.py` (and by
`registry.register_app` for a registered app's templates)."""


def register(cls: type[WebTask]) -> type[WebTask]:
    """Class decorator that adds a template to `TASKS`; a duplicate name is an error."""
    templates = TASKS.setdefault(cls.app, {})
    if cls.template in templates:
        raise ValueError(f"duplicate task template {cls.app}/{cls.template}")
    if cls.difficulty not in (ATOMIC, COMPOSED, LONG):
        raise ValueError(f"{cls.app}/{cls.template}: difficulty must be 1, 2 or 3")
    templates[cls.template] = cls
    return cls
