"""Reporting from inside a trial, under Ray Tune or in-process.

Studies call `report` and `restore` from here instead of `ray.tune` directly, so the same trainable runs
under `raygent sweep` (each report becomes a Tune result, the state a Tune checkpoint) and in a plain
Python process (`run_locally`, used by unit tests and by benchmarks that time the bare trainable).
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import pickle
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

_STATE_FILE = "state.pkl"


class _LocalSession:
    def __init__(self) -> None:
        self.reports: list[dict[str, Any]] = []
        self.state: Any = None


_last_report: dict[str, Any] | None = None  # per trial process; read by the sweep's trial wrapper
_study_metric: str | None = None  # Tune checks every result for it; set by the sweep's trial wrapper

_local: contextvars.ContextVar[_LocalSession | None] = contextvars.ContextVar("raygent_session", default=None)


def report(metrics: Mapping[str, Any], state: Any | None = None) -> None:
    """Report one result; `state` (any picklable object) becomes the trial's checkpoint if given."""
    global _last_report
    _last_report = dict(metrics)
    local = _local.get()
    if local is not None:
        local.reports.append(dict(metrics))
        if state is not None:
            local.state = pickle.loads(pickle.dumps(state))
        return
    from ray import tune

    result = dict(metrics)
    if _study_metric is not None and _study_metric not in result:
        result[_study_metric] = float("nan")  # an intermediate report (e.g. training loss) before the study metric
    if state is None:
        tune.report(result)
        return
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / _STATE_FILE).write_bytes(pickle.dumps(state))
        tune.report(result, checkpoint=tune.Checkpoint.from_directory(tmp))


def reset(study_metric: str | None = None) -> None:
    """Forget the previous trial's last report (a reused trial process runs several trials); `study_metric` is
    the metric Tune requires in every result, filled with NaN in reports that do not carry it yet."""
    global _last_report, _study_metric
    _last_report = None
    _study_metric = study_metric


def last_report() -> dict[str, Any] | None:
    """The metrics of the latest `report` in this process (None before the first)."""
    return _last_report


def restore() -> Any | None:
    """The state of this trial's latest checkpoint, or None on a fresh start."""
    local = _local.get()
    if local is not None:
        return local.state
    from ray import tune

    checkpoint = tune.get_checkpoint()
    if checkpoint is None:
        return None
    with checkpoint.as_directory() as directory:
        path = Path(directory) / _STATE_FILE
        return pickle.loads(path.read_bytes()) if path.exists() else None


@contextlib.contextmanager
def _local_session() -> Iterator[_LocalSession]:
    session = _LocalSession()
    token = _local.set(session)
    try:
        yield session
    finally:
        _local.reset(token)


def run_locally(trainable: Callable[[dict[str, Any]], None], config: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Run one trial in this process; returns every report in order (the last is the trial's result)."""
    with _local_session() as session:
        trainable(dict(config))
    return session.reports


def result_row(params: Mapping[str, Any], reports: list[dict[str, Any]], trial_id: str) -> dict[str, Any]:
    """One row of a sweep's results table: every parameter, then the trial's last reported metrics."""
    last = reports[-1] if reports else {}
    clash = sorted(set(params) & set(last))
    if clash:
        raise ValueError(f"metric names clash with parameter names: {clash}")
    return {
        "trial_id": trial_id,
        "status": "TERMINATED" if reports else "ERROR",
        "iterations": len(reports),
        **params,
        **last,
    }


def grid_locally(study: Any, fixed: Mapping[str, Any], grid: Mapping[str, list[Any]]) -> pd.DataFrame:
    """Run the grid `fixed × product(grid)` in this process, without Ray; same table as `raygent sweep`.

    For unit tests of a study's claim on a reduced grid, where starting a cluster would cost more than the
    trials themselves.
    """
    keys = list(grid)
    rows = []
    for index, values in enumerate(itertools.product(*(grid[key] for key in keys))):
        params = study.params_model.model_validate({**fixed, **dict(zip(keys, values, strict=True))})
        reports = run_locally(study.trainable, params.model_dump())
        rows.append(result_row(params.model_dump(), reports, trial_id=f"local_{index:05d}"))
    return pd.DataFrame(rows)
