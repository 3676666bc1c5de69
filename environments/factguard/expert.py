"""The FactGuard oracle: calls a tool only when the item needs it, and decides from the evidence it reads.

- `claim` items: no tool; the claim's template decides (`cures ... in one day`, `is secretly a` are hoaxes).
- `clip` items: `analyze_clip(t, t)` on the second the claim names; `spliced` in the answer means fake.
- `kb` items: `retrieve(<claim words>)`; the fact-check's rating (`: true` / `: false`) decides.

Without tools (the ablation, `task.params["tools"]` False) it answers `claim` items the same and the others with
`verdict(fake, 0.5)`: undecidable, and a missed fake costs more than a false alarm. Its verdicts come from the
texts it reads (it never looks at the label), so its episodes are faithful SFT demonstrations (`demonstrate`).
"""

from __future__ import annotations

import re

from raygent.environments.experts import Demonstration, run_expert
from raygent.environments.factguard.env import FactGuardEnv
from raygent.environments.factguard.tools import format_clip, format_retrieve, format_verdict
from raygent.platform.contracts import Task

CONFIDENT = 0.9
UNSURE = 0.5
_HOAX = re.compile(r" cures .* in one day$| is secretly a ")


def is_hoax(claim: str) -> bool:
    """Whether a `claim` item's claim is one of the hoax templates."""
    return _HOAX.search(claim) is not None


def query_of(claim: str) -> str:
    """The oracle's retrieval query: the claim's words without `is`."""
    return " ".join(word for word in claim.split() if word != "is")


class OracleExpert:
    """A policy over observation texts: `reset(task)`, then `act(text)` per turn."""

    def __init__(self) -> None:
        self._task: Task | None = None
        self._asked = False

    def reset(self, task: Task) -> None:
        self._task, self._asked = task, False

    def act(self, observation_text: str) -> str:
        if self._task is None:
            raise RuntimeError("call reset(task) before act()")
        params = self._task.params
        kind, claim = params["kind"], params["claim"]
        if kind == "claim":
            return format_verdict("fake" if is_hoax(claim) else "real", CONFIDENT)
        if not params.get("tools", True):
            return format_verdict("fake", UNSURE)
        if not self._asked:
            self._asked = True
            if kind == "clip":
                return format_clip(int(params["second"]), int(params["second"]))
            return format_retrieve(query_of(claim))
        if kind == "clip":
            fake = "spliced" in observation_text
        else:
            if not observation_text.startswith("retrieved: fact check:"):
                raise RuntimeError(f"expected a fact-check, got {observation_text!r}")
            fake = observation_text.endswith(": false")
        return format_verdict("fake" if fake else "real", CONFIDENT)


def demonstrate(task: Task, env: FactGuardEnv | None = None) -> Demonstration:
    """The oracle's episode of `task` through a FactGuard environment."""
    return run_expert(OracleExpert(), task, env or FactGuardEnv())


def factguard_demonstrations(tasks: list[Task]) -> list[list[tuple[str, str]]]:
    """The oracle's (observation, action) turns for each task (`env.demonstrations`)."""
    env = FactGuardEnv()
    return [demonstrate(task, env).turns() for task in tasks]
