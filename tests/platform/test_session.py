"""The in-process trial session: reports, checkpoint state, and the local grid used by study tests."""

from __future__ import annotations

import math
from typing import Any

import pytest

from raygent.platform import session
from raygent.platform.study import StudyParams, TuneStudy


class CountParams(StudyParams):
    steps: int = 3
    scale_factor: float = 1.0


class CountStudy:
    """Reports `value = scale_factor * step`, resuming from its saved step."""

    name = "count"
    summary = "counts"
    claim = "it counts"
    params_model = CountParams
    metric = "value"
    mode = "max"

    def trainable(self, config: dict[str, Any]) -> None:
        params = CountParams.model_validate(config)
        start = (session.restore() or {"step": 0})["step"]
        for step in range(start, params.steps):
            session.report({"value": params.scale_factor * step}, state={"step": step + 1})

    def analyze(self, results):  # pragma: no cover - not used here
        raise NotImplementedError

    def plot(self, results, path):  # pragma: no cover - not used here
        raise NotImplementedError


def test_run_locally_collects_every_report_in_order() -> None:
    reports = session.run_locally(CountStudy().trainable, {"steps": 4, "scale_factor": 2.0})
    assert [r["value"] for r in reports] == [0.0, 2.0, 4.0, 6.0]
    assert session.last_report() == {"value": 6.0}


def test_grid_locally_builds_the_sweep_table() -> None:
    table = session.grid_locally(CountStudy(), {"steps": 2}, {"scale_factor": [1.0, 3.0], "seed": [0, 1]})
    assert len(table) == 4
    assert list(table.columns[:3]) == ["trial_id", "status", "iterations"]
    assert set(table["status"]) == {"TERMINATED"}
    assert sorted(table["value"]) == [1.0, 1.0, 3.0, 3.0]
    assert {"seed", "scale", "steps", "scale_factor"} <= set(table.columns)


def test_metric_names_must_not_clash_with_parameters() -> None:
    with pytest.raises(ValueError, match="clash"):
        session.result_row({"value": 1}, [{"value": 2}], trial_id="t")


def test_study_satisfies_the_protocol() -> None:
    assert isinstance(CountStudy(), TuneStudy)


def test_reports_under_tune_carry_the_study_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tune rejects a result without the study metric, so an intermediate report gets it as NaN."""
    from ray import tune

    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(tune, "report", lambda metrics, checkpoint=None: sent.append(metrics))
    session.reset("value")
    try:
        session.report({"train/loss": 0.5})
        session.report({"value": 2.0})
    finally:
        session.reset()
    assert math.isnan(sent[0]["value"]) and sent[0]["train/loss"] == 0.5
    assert sent[1] == {"value": 2.0}
    assert session.last_report() is None
