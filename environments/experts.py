"""What the text environments' scripted experts share: the expert protocol and one episode run through an env.

An expert is a policy over observation texts (`reset(task)`, then `act(text)` per turn) that reads what the
environment shows and never its hidden answer, so its episodes are faithful SFT demonstrations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, SupportsFloat

from raygent.platform.contracts import Task


class TextExpert(Protocol):
    def reset(self, task: Task) -> None: ...

    def act(self, observation_text: str) -> str: ...


class TextEnv(Protocol):
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]: ...

    def step(self, action: str) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]: ...


@dataclass
class Demonstration:
    """One expert episode: `observations[i]` is the text the expert saw before `actions[i]`."""

    task: Task
    observations: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    reward: float = 0.0
    success: bool = False

    def turns(self) -> list[tuple[str, str]]:
        """The (observation text, action) pairs in order."""
        return list(zip(self.observations, self.actions, strict=True))


def run_expert(expert: TextExpert, task: Task, env: TextEnv) -> Demonstration:
    """`expert`'s episode of `task` through `env` (observations carry their text under `"text"`)."""
    expert.reset(task)
    observation, _ = env.reset(options={"task": task})
    demo = Demonstration(task=task)
    done = False
    while not done:
        action = expert.act(observation["text"])
        demo.observations.append(observation["text"])
        demo.actions.append(action)
        observation, reward, terminated, truncated, info = env.step(action)
        demo.reward += float(reward)
        demo.success = bool(info.get("success", False))
        done = terminated or truncated
    return demo
