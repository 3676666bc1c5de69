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

from collections.abc import Iterable, Sequence
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


# Helpers every study's `analyze` uses: which trials finished, and mean ± spread over seeds.


def completed(results: pd.DataFrame, required: Sequence[str], metrics: Iterable[str] = ()) -> pd.DataFrame:
    """The trials that finished (status TERMINATED) with every `required` column set; `metrics` cast to float.

    Empty (with the same columns) when no trial reported a required column at all."""
    if results.empty or any(name not in results for name in required):
        return results.iloc[0:0]
    done = results[results["status"] == "TERMINATED"].dropna(subset=list(required))
    return done.astype({name: float for name in metrics if name in done})


def mean_std(frame: pd.DataFrame, column: str) -> dict[str, float]:
    """`{"mean", "std"}` of a column over the frame's trials (population std: the spread of these seeds)."""
    values = frame[column].astype(float)
    return {"mean": float(values.mean()), "std": float(values.std(ddof=0))}


def summarize(frame: pd.DataFrame, columns: Iterable[str]) -> dict[str, dict[str, float]]:
    """`mean_std` of each column."""
    return {column: mean_std(frame, column) for column in columns}


def by_seed(frame: pd.DataFrame, column: str) -> dict[str, float]:
    """The column's mean per seed (keys are the seeds as strings, for JSON)."""
    return {str(int(seed)): float(value) for seed, value in frame.groupby("seed")[column].mean().items()}
