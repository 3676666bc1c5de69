"""The web-task contract: one parameterized template per class, checked from the app's state, solved by script.

This follows BrowserGym's task shape (DESIGN §4) with one change: `validate` reads the app's *state* (the JSON
its page returns from `window.raygent.getState()`), not the page, so checkers are pure functions testable
without a browser. `BrowserEnv` does the page work: it opens the app, calls `window.raygent.setState(...)`
with `initial_state(params)`, and after every action reads the state and calls `validate`.

A template's `solve` is a generator that drives the page through the same action grammar an agent uses: it
yields an action string, receives the next observation text (see `observe.py`), and yields the next action,
until the task validates. It knows the seed's `UISpec` (the scripted expert is privileged; the agent must read
the docs).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Generator
from typing import Any, ClassVar

from raygent.environments.web.ui import UISpec

ATOMIC, COMPOSED, LONG = 1, 2, 3
"""Difficulty levels: one command, a few commands combined, a long sequence."""

Solver = Generator[str, str, None]
"""`action = next(s)`, then `action = s.send(observation_text)` after each step."""


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
    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        """`(reward, done, message)` for the app's current state: reward 1.0 and done when the goal is met."""

    @abstractmethod
    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        """The scripted expert for this task (see the module docstring)."""


TASKS: dict[str, dict[str, type[WebTask]]] = {}
"""Registry: app -> template -> class. Filled by `register` in each `apps/<app>/tasks.py`."""


def register(cls: type[WebTask]) -> type[WebTask]:
    """Class decorator that adds a template to `TASKS`; a duplicate name is an error."""
    templates = TASKS.setdefault(cls.app, {})
    if cls.template in templates:
        raise ValueError(f"duplicate task template {cls.app}/{cls.template}")
    if cls.difficulty not in (ATOMIC, COMPOSED, LONG):
        raise ValueError(f"{cls.app}/{cls.template}: difficulty must be 1, 2 or 3")
    templates[cls.template] = cls
    return cls
