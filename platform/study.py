"""The `TuneStudy` contract: how one paper's study plugs into `raygent sweep`.

A study is a small class in `jobs/<paper>/` with:

- `params_model`: a frozen pydantic model of every knob the trainable reads, with defaults. The YAML's
  `study:` block sets the fixed knobs; the YAML's `sweep.space:` block names the swept ones. Both are
  validated against this model before anything starts.
- `trainable(config)`: one trial. It reads `params_model.model_validate(config)`, trains, and calls
  `raygent.platform.session.report(metrics, state=...)` one or more times. The same function runs under
  Ray Tune (`raygent sweep`) and in-process (`session.run_locally`, for unit tests).
- `analyze(results)`: turns the sweep's results table (one row per trial: swept knobs as columns, then
  the last reported metrics) into a `Verdict` on the paper's claim.
- `plot(results, path)`: writes the PNG of the curve the paper is about.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, Self, runtime_checkable

import pandas as pd
from pydantic import BaseModel, ConfigDict


class StudyParams(BaseModel):
    """Base of every study's parameter model: frozen, no unknown keys."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = 0
    scale: Literal["laptop", "paper"] = "laptop"

    paper_sizes: ClassVar[dict[str, Any]] = {}
    """The knobs `scale: paper` changes and their values from the paper's setting (a study's class sets them)."""

    def resolved(self) -> Self:
        """At `scale: paper`, `paper_sizes` wherever the config left the laptop default; else these params."""
        if self.scale != "paper":
            return self
        defaults = type(self)()
        updates = {k: v for k, v in self.paper_sizes.items() if getattr(self, k) == getattr(defaults, k)}
        return self.model_copy(update=updates)


class Verdict(BaseModel):
    """Whether the paper's claim held in this sweep, with the numbers behind it."""

    model_config = ConfigDict(frozen=True)

    claim: str
    holds: bool
    evidence: dict[str, Any]
    checks: dict[str, bool] = {}


@runtime_checkable
class TuneStudy(Protocol):
    """One paper's study. See the module docstring."""

    name: ClassVar[str]
    summary: ClassVar[str]
    claim: ClassVar[str]
    params_model: ClassVar[type[StudyParams]]
    metric: ClassVar[str]
    mode: ClassVar[Literal["min", "max"]]

    def trainable(self, config: dict[str, Any]) -> None: ...

    def analyze(self, results: pd.DataFrame) -> Verdict: ...

    def plot(self, results: pd.DataFrame, path: Path) -> None: ...
