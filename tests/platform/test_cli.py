"""The `raygent` command line: listing, help with examples, and output locations."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import raygent

COMMANDS = ("list", "run", "sweep", "submit", "report", "status")


def test_list_json_names_the_studies() -> None:
    done = raygent("list", "--json")
    assert done.returncode == 0, done.stderr
    jobs = {job["name"]: job for job in json.loads(done.stdout)}
    assert {"fls", "neuqi", "clipped_asgd"} <= set(jobs)
    for job in jobs.values():
        assert job["kind"] in {"sweep", "run"} and job["summary"] and job["entry"].count(":") == 1


def test_list_table_has_one_line_per_job() -> None:
    done = raygent("list")
    assert done.returncode == 0
    assert "fls" in done.stdout and "sweep" in done.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_has_an_example(command: str) -> None:
    done = raygent(command, "--help")
    assert done.returncode == 0
    assert "Example" in done.stdout and f"raygent {command}" in done.stdout


def test_report_of_a_missing_run_fails_cleanly(tmp_path) -> None:
    done = raygent("report", str(tmp_path))
    assert done.returncode == 2 and "not a raygent run directory" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("status", ["TERMINATED", "ERROR"])
def test_report_rebuilds_a_sweep_from_its_results_table(
    status: str, tmp_path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No Ray: the saved config and results.csv are all `raygent report` reads. A sweep whose every trial failed
    has no metric column, and still reports (the claim does not hold); a column missing otherwise is exit 2
    (tests/platform/test_bad_input.py)."""
    import pandas as pd

    from raygent.platform import rundir
    from raygent.platform.cli import main
    from raygent.platform.config import load_config

    rundir.save_config(tmp_path, load_config("fls"))
    rows = [{"alpha": alpha, "seed": seed, "status": status} for alpha in (0.01, 0.3, 1.0) for seed in (0, 1)]
    if status == "TERMINATED":
        steps = {"gd_steps": 10, "reached_target": 1}
        rows = [
            row | steps | {"test_error": 0.1 + abs(row["alpha"] - 0.3), "participation_ratio": row["alpha"]}
            for row in rows
        ]
    pd.DataFrame(rows).to_csv(tmp_path / "results.csv", index=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(tmp_path)])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 0, err
    assert out.strip().splitlines()[-1] == str(tmp_path.resolve() / "report.html")
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["holds"] is (status == "TERMINATED") and summary["trials"] == 6


def test_status_lists_local_runs(tmp_path) -> None:
    run = tmp_path / "fls" / "20260101-000000"
    run.mkdir(parents=True)
    (run / "summary.json").write_text(json.dumps({"job": "fls", "holds": True, "trials": 3}))
    done = raygent("status", "--runs", str(tmp_path))
    assert done.returncode == 0 and "holds" in done.stdout and "fls" in done.stdout


def test_tasks_lists_every_apps_templates_over_three_levels() -> None:
    done = raygent("tasks", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    apps = {row["app"] for row in rows}
    assert apps == {"code_editor", "image_editor", "word_processor", "slide_editor", "media_player"}
    for name in apps:
        mine = [row for row in rows if row["app"] == name]
        assert len(mine) >= 15 and {row["difficulty"] for row in mine} == {1, 2, 3}
        assert all(row["example"] for row in mine)
    assert raygent("tasks", "no_such_app").returncode == 2


def test_an_embedded_cluster_starts_on_a_machine_without_a_ray_token(tmp_path) -> None:
    """Ray 2.60 clusters use token auth; on a fresh machine (no ~/.ray/auth_token) the embedded cluster makes one."""
    script = "from raygent.platform.cluster import connect; print(connect(num_cpus=1).num_cpus)"
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("RAY_AUTH_MODE", None)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "1.0"
    assert (tmp_path / ".ray" / "auth_token").is_file()


def test_a_restored_sweep_reports_to_the_live_progress_bar_from_the_trials_already_done() -> None:
    """`Tuner.restore` unpickles the callbacks saved with the experiment: they must drive the live bar, which
    starts at the trials that had ended before the interruption."""
    import io
    import pickle
    from types import SimpleNamespace

    from rich.console import Console

    from raygent.platform.progress import SweepProgress

    saved = pickle.dumps(SweepProgress(4, "loss", Console(file=io.StringIO())))  # the first run's callback
    live = SweepProgress(4, "loss", Console(file=io.StringIO()))
    with live:
        restored = pickle.loads(saved)
        trials = [SimpleNamespace(status=s) for s in ("TERMINATED", "TERMINATED", "RUNNING", "PENDING")]
        restored.on_step_begin(0, trials)
        assert live.progress is not None and live.progress.tasks[live.task].completed == 2
        trials[2].status = "TERMINATED"
        restored.on_trial_complete(1, trials, trials[2])
        assert live.progress.tasks[live.task].completed == 3
        restored.on_trial_error(2, trials, trials[3])
        assert live.progress.tasks[live.task].completed == 4 and restored.errors == 1


def test_submitted_runs_go_to_durable_storage_and_the_logs_line_works(monkeypatch: pytest.MonkeyPatch) -> None:
    import shlex

    from raygent.platform.config import ConfigError, load_config
    from raygent.platform.submit import _shell_word, logs_command, run_path

    config = load_config("fls")
    assert run_path(config).startswith("$HOME/raygent-runs/fls/")
    assert run_path(config, storage="/mnt/runs").startswith("/mnt/runs/fls/")
    assert run_path(load_config("fls", ["cluster.storage=/data/runs"])).startswith("/data/runs/fls/")
    assert run_path(config, out="/x/y") == "/x/y"
    with pytest.raises(ConfigError, match="--storage ''"):
        run_path(config, storage="")
    word = _shell_word("$HOME/raygent-runs/fls/1 a")
    assert subprocess.run(["sh", "-c", f"echo {word}"], capture_output=True, text=True, env={"HOME": "/h"}).stdout == (
        "/h/raygent-runs/fls/1 a\n"
    )
    assert shlex.split(_shell_word("/mnt/runs/a b")) == ["/mnt/runs/a b"]
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    assert (
        logs_command("http://h:8265", "raygent-fls-1")
        == "RAY_AUTH_MODE=token ray job logs --address http://h:8265 -f raygent-fls-1"
    )
    monkeypatch.delenv("RAY_AUTH_MODE")
    assert logs_command("http://h:8265", "j").startswith("ray job logs")
