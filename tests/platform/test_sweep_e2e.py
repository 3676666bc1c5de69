"""`raygent sweep` and `raygent run` end to end on the embedded cluster, including kill and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from conftest import RAYGENT, ROOT, raygent

pytestmark = [pytest.mark.slow, pytest.mark.ray]

# The reduced grid of tests/jobs/test_fls.py: enough for the claim, 20 trials.
GRID = ["sweep.space.alpha.grid=[0.0001,0.01,0.3,1.0,10.0]", "sweep.space.seed.grid=[0,1,2,3]"]


def events(run_dir: Path) -> list[dict]:
    path = run_dir / "trials.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_sweep_killed_part_way_resumes_without_rerunning_finished_trials(tmp_path: Path) -> None:
    run_dir = tmp_path / "fls"
    first = subprocess.Popen(
        [*RAYGENT, "sweep", "fls", *GRID, "sweep.max_concurrent_trials=1", "--out", str(run_dir)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.time() + 300
    while sum(e["event"] == "end" for e in events(run_dir)) < 4:
        assert first.poll() is None, "the sweep ended before it could be interrupted"
        assert time.time() < deadline, "no trial finished in time"
        time.sleep(0.2)
    os.killpg(first.pid, signal.SIGKILL)  # the driver and the Ray cluster it started
    first.wait()
    finished_before = {e["trial_id"] for e in events(run_dir) if e["event"] == "end"}
    assert 4 <= len(finished_before) < 20

    done = raygent("sweep", "--resume", str(run_dir))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(run_dir.resolve())

    starts = Counter(e["trial_id"] for e in events(run_dir) if e["event"] == "start")
    assert all(starts[trial] == 1 for trial in finished_before), f"a finished trial ran again: {starts}"
    assert all(count <= 2 for count in starts.values()), "only the trial interrupted mid-way starts again"
    replayed = {e["trial_id"] for e in events(run_dir) if e["event"] == "replayed"}
    assert replayed <= finished_before, "only trials that had finished may be replayed"
    results = pd.read_csv(run_dir / "results.csv")
    assert len(results) == 20 and set(results["status"]) == {"TERMINATED"}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["job"] == "fls" and summary["holds"] is True and summary["checks"]
    assert (run_dir / "curve.png").stat().st_size > 1000
    assert "HOLDS" in (run_dir / "report.html").read_text()

    rebuilt = raygent("report", str(run_dir))
    assert rebuilt.returncode == 0 and rebuilt.stdout.strip().splitlines()[-1].endswith("report.html")


def test_run_executes_one_trial_at_the_config_values(tmp_path: Path) -> None:
    done = raygent("run", "fls", "study.alpha=0.3", "study.seed=5", "--out", str(tmp_path / "one"))
    assert done.returncode == 0, done.stdout + done.stderr
    results = pd.read_csv(tmp_path / "one" / "results.csv")
    assert len(results) == 1 and results.loc[0, "alpha"] == 0.3 and results.loc[0, "seed"] == 5
    assert 0.0 <= results.loc[0, "test_error"] <= 1.0
    saved = (tmp_path / "one" / "config.yaml").read_text()
    assert "alpha: 0.3" in saved and "seed: 5" in saved


def test_optuna_search_with_asha_samples_the_space(tmp_path: Path) -> None:
    run_dir = tmp_path / "optuna"
    space = "sweep.space={alpha: {loguniform: [0.0001, 10.0]}, seed: {choice: [0, 1]}}"
    done = raygent(
        "sweep",
        "fls",
        "sweep.search=optuna",
        space,
        "sweep.num_samples=4",
        "sweep.scheduler.type=asha",
        "--out",
        str(run_dir),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = pd.read_csv(run_dir / "results.csv")
    assert len(results) == 4 and set(results["status"]) == {"TERMINATED"}
    assert results["alpha"].between(0.0001, 10.0).all() and results["alpha"].nunique() == 4
    assert set(results["seed"]) <= {0, 1}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["trials"] == 4 and isinstance(summary["holds"], bool)
