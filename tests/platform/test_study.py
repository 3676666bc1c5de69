"""The study helpers every study's `analyze` and `plot` share (`verdict`, `figure`, `completed`), and the report
handing a study only its finished trials."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest

from raygent.platform import report, rundir
from raygent.platform.config import load_config
from raygent.platform.study import Verdict, completed, figure, finished, trial_counts, verdict

PNG = b"\x89PNG\r\n\x1a\n"


def test_verdict_holds_when_every_check_passed_and_makes_them_plain_bools() -> None:
    judged = verdict("the claim", {"a": np.bool_(True), "b": True}, {"gain": 0.3})
    assert judged == Verdict(claim="the claim", holds=True, evidence={"gain": 0.3}, checks={"a": True, "b": True})
    assert all(type(ok) is bool for ok in judged.checks.values())
    failed = verdict("the claim", {"a": True, "b": np.bool_(False)}, {"gain": 0.3})
    assert not failed.holds and failed.checks == {"a": True, "b": False}


def test_a_verdict_without_checks_or_with_an_error_does_not_hold() -> None:
    assert not verdict("c", {}).holds and verdict("c", {}).evidence == {}
    incomplete = verdict("c", {"grid_complete": False}, {"trials_completed": 2})
    assert not incomplete.holds and incomplete.checks == {"grid_complete": False}
    evidence = {"settings": [1, 2]}
    error = verdict("c", {"x": True}, evidence, error="no trial at the default")
    assert not error.holds and error.checks == {"x": True}
    assert list(error.evidence.items()) == [("settings", [1, 2]), ("error", "no trial at the default")]
    assert evidence == {"settings": [1, 2]}  # the caller's dict is left alone


def test_figure_writes_the_png_and_closes_the_figure(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    path = tmp_path / "new" / "folder" / "curve.png"
    with figure(path, 1, 2, figsize=(4, 2), dpi=50) as (fig, (left, right)):
        left.plot([0, 1], [1, 0])
        right.bar([0, 1], [2, 3])
        number = fig.number
    assert path.read_bytes()[:8] == PNG
    assert number not in plt.get_fignums()
    assert matplotlib_backend() == "agg"


def test_figure_closes_the_figure_on_an_error_and_writes_nothing(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    path = tmp_path / "curve.png"
    before = set(plt.get_fignums())
    with pytest.raises(KeyError, match="missing"), figure(path) as (fig, ax):
        ax.plot([0, 1], [0, 1])
        raise KeyError("missing")
    assert set(plt.get_fignums()) == before and fig.number not in plt.get_fignums()
    assert not path.exists()


def matplotlib_backend() -> str:
    import matplotlib

    return matplotlib.get_backend().lower()


def test_completed_keeps_the_rows_with_every_required_metric() -> None:
    results = pd.DataFrame({"seed": [0, 1, 2], "score": [0.5, None, 1], "steps": ["3", "4", "5"]})
    done = completed(results, ["score"], ["score", "steps", "absent"])
    assert list(done["seed"]) == [0, 2] and done["steps"].dtype == float
    assert completed(results, ["absent"]).empty and list(completed(results, ["absent"]).columns) == list(results)
    assert trial_counts(results, done) == {"trials_completed": 2, "trials_failed": 1}


class RecordingStudy:
    """Keeps what the report hands its `analyze` and `plot`."""

    name: ClassVar[str] = "recording"
    summary: ClassVar[str] = "records its input"
    claim: ClassVar[str] = "it records"
    metric: ClassVar[str] = "test_error"
    mode: ClassVar[str] = "min"
    seen: ClassVar[dict[str, pd.DataFrame]] = {}

    def trainable(self, config: dict[str, Any]) -> None:  # pragma: no cover - not run here
        raise NotImplementedError

    def analyze(self, results: pd.DataFrame) -> Verdict:
        RecordingStudy.seen["analyze"] = results
        return verdict(
            self.claim, {"rows_finished": bool((results["status"] == "TERMINATED").all())}, {"trials": len(results)}
        )

    def plot(self, results: pd.DataFrame, path: Path) -> None:
        RecordingStudy.seen["plot"] = results
        with figure(path) as (_, ax):
            ax.plot(results["alpha"], results["test_error"])


def test_the_report_hands_the_study_only_the_finished_trials_and_counts_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "load_entry", lambda entry: RecordingStudy)
    RecordingStudy.seen.clear()
    rows = [
        {"trial_id": "t0", "status": "TERMINATED", "alpha": 0.1, "test_error": 0.3},
        {"trial_id": "t1", "status": "ERROR", "alpha": 0.3, "test_error": 9.0},
        {"trial_id": "t2", "status": "TERMINATED", "alpha": 1.0, "test_error": 0.2},
        {"trial_id": "t3", "status": "RUNNING", "alpha": 3.0, "test_error": 8.0},
    ]
    summary = report.finalize(tmp_path, load_config("fls"), pd.DataFrame(rows))
    for handed in RecordingStudy.seen.values():
        assert list(handed["trial_id"]) == ["t0", "t2"] and list(handed.index) == [0, 1]
    assert set(RecordingStudy.seen) == {"analyze", "plot"}
    assert summary["holds"] is True and summary["evidence"] == {"trials": 2}
    assert summary["trials"] == 4 and summary["errored"] == 1
    assert json.loads((tmp_path / rundir.SUMMARY_FILE).read_text())["errored"] == 1
    assert (tmp_path / rundir.PLOT_FILE).read_bytes()[:8] == PNG
    assert "Trials (4, 1 errored)" in (tmp_path / rundir.REPORT_FILE).read_text()
    assert list(finished(pd.DataFrame(rows))["trial_id"]) == ["t0", "t2"]


def test_a_sweep_without_a_finished_trial_reports_without_calling_the_study(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "load_entry", lambda entry: RecordingStudy)
    RecordingStudy.seen.clear()
    rows = [{"trial_id": "t0", "status": "ERROR", "alpha": 0.1}]
    summary = report.finalize(tmp_path, load_config("fls"), pd.DataFrame(rows))
    assert RecordingStudy.seen == {}
    assert summary["holds"] is False and summary["evidence"] == {"error": "no trial finished"}
    assert summary["checks"] == {} and summary["errored"] == 1
    assert not (tmp_path / rundir.PLOT_FILE).exists()
