"""The `TuneStudy` contract: how one paper's study plugs into `raygent sweep`.

A study is a small class in `jobs/<paper>/` with:

- `params_model`: a frozen pydantic model of every knob the trainable reads, with defaults. The YAML's
  `study:` block sets the fixed knobs; the YAML's `sweep.space:` block names the swept ones. Both are
  validated against this model before anything starts.
- `trainable(config)`: one trial. It reads `params_model.model_validate(config)`, trains, and calls
  `raygent.platform.session.report(metrics, state=...)` one or more times. The same function runs under
  Ray Tune (`raygent sweep`) and in-process (`session.run_locally`, for unit tests).
- `analyze(results)`: turns the sweep's results table (one row per finished trial: swept knobs as columns,
  then the last reported metrics) into a `Verdict` on the paper's claim, built by `verdict`.
- `plot(results, path)`: writes the PNG of the curve the paper is about, drawn in `with figure(path, ...)`.

The report hands `analyze` and `plot` only the trials that finished (`finished`: status TERMINATED); the errored
and unfinished ones are counted in the summary, so no study filters on `status` itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, Self, runtime_checkable

import pandas as pd
from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from matplotlib.figure import Figure


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


def verdict(
    claim: str, checks: Mapping[str, object], evidence: Mapping[str, Any] | None = None, error: str | None = None
) -> Verdict:
    """The verdict on `claim`: it holds when there is at least one check and every check passed (each made a plain
    bool). `error`, when given, says why the claim could not be judged: it is the evidence's last entry, `"error"`,
    and the claim does not hold. An early return for a grid without the cells a check needs is
    `verdict(claim, {"grid_complete": False}, evidence)`."""
    plain = {name: bool(ok) for name, ok in checks.items()}
    numbers = dict(evidence or {})
    if error is not None:
        numbers["error"] = error
    return Verdict(
        claim=claim, holds=error is None and bool(plain) and all(plain.values()), evidence=numbers, checks=plain
    )


@contextmanager
def figure(path: Path, *subplots: Any, dpi: int = 120, **options: Any) -> Iterator[tuple[Figure, Any]]:
    """`with figure(path, 1, 2, figsize=(11, 4)) as (fig, axes):` draws a study's plot: `plt.subplots(*subplots,
    **options)` on the Agg backend; on leaving, `tight_layout` and the PNG saved to `path` (its folder created) at
    `dpi`. The figure is closed however the block ends; on an error nothing is written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(*subplots, **options)
    try:
        yield fig, axes
        fig.tight_layout()
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=dpi)
    finally:
        plt.close(fig)


# Helpers of the studies' `analyze`: the finished trials, which of them reported, and mean ± spread over seeds.


def finished(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of the trials that finished (status TERMINATED), numbered from 0: what `report.write_report` hands a
    study's `analyze` and `plot`."""
    return results[results["status"] == "TERMINATED"].reset_index(drop=True)


def completed(results: pd.DataFrame, required: Sequence[str], metrics: Iterable[str] = ()) -> pd.DataFrame:
    """The (finished) trials with every `required` column set; `metrics` cast to float.

    Empty (with the same columns) when no trial reported a required column at all."""
    if results.empty or any(name not in results for name in required):
        return results.iloc[0:0]
    done = results.dropna(subset=list(required))
    return done.astype({name: float for name in metrics if name in done})


def trial_counts(results: pd.DataFrame, done: pd.DataFrame) -> dict[str, int]:
    """`trials_completed` (the rows of `done`, e.g. `completed(results, ...)`) and `trials_failed` (the finished
    trials that did not report every required metric), the first entries of a study's evidence."""
    return {"trials_completed": len(done), "trials_failed": len(results) - len(done)}


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
