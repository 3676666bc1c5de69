"""Run directories: `runs/<job>/<timestamp>/` holding the resolved config and everything a run writes.

A run directory is planned (`plan_run_dir`: the path is checked, nothing is created) before the job connects to
Ray, and made (`make_run_dir`) only once the job starts, so a config, an `--out` or an address that fails leaves
nothing on disk. An existing run directory is never written over unless asked (`--resume` continues it,
`--force` replaces its config).
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import yaml

from raygent.platform.config import ConfigError, JobConfig, read_yaml_file, validate_config

CONFIG_FILE = "config.yaml"
SUMMARY_FILE = "summary.json"
RESULTS_FILE = "results.csv"
REPORT_FILE = "report.html"
PLOT_FILE = "curve.png"
EVENTS_FILE = "trials.jsonl"
TUNE_DIR = "tune"


def plan_run_dir(job: str, out: Path | None = None, root: Path = Path("runs"), force: bool = False) -> Path:
    """The run directory a new run will use (absolute), checked but not created.

    `out` if given (it must not be empty, not a file, not an existing run directory unless `force`, and its
    nearest existing parent must be a writable directory), else a fresh `runs/<job>/<YYYYmmdd-HHMMSS>`
    (suffixed if that second is taken).
    """
    if out is None:
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        base = root / job / stamp
        path, n = base, 1
        while path.exists():
            n += 1
            path = base.with_name(f"{stamp}-{n}")
        _check_creatable(path, "runs/")
        return path.absolute()
    text = str(out)
    if not text.strip():
        raise ConfigError(f"--out {text!r}: expected a directory path for the run, e.g. --out runs/{job}-a")
    try:
        exists, is_dir = out.exists(), out.is_dir()
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--out {text!r}: not a usable path ({exc})") from None
    if exists and not is_dir:
        raise ConfigError(f"--out {text!r} is a file; expected a directory for the run")
    if is_dir and (out / CONFIG_FILE).exists() and not force:
        raise ConfigError(
            f"--out {text!r} is already a run directory; continue it with --resume {text}, "
            "or replace its config with --force (its old results stay beside the new ones)"
        )
    if is_dir and not os.access(out, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {text!r}: the directory is not writable")
    if not exists:
        _check_creatable(out, f"--out {text!r}")
    return out.absolute()


def _check_creatable(path: Path, what: str) -> None:
    """`path` can be made: it is made with its missing parents and removed again, so the check is the real
    `mkdir` (permissions, read-only or virtual file systems, a file in the way) and leaves nothing behind."""
    path = path.absolute()
    missing = [path, *(p for p in path.parents if not p.exists())]
    try:
        path.mkdir(parents=True)
    except OSError as exc:
        raise ConfigError(f"{what}: cannot create {path} ({exc.strerror or exc})") from None
    for made in sorted(missing, key=lambda p: len(p.parts), reverse=True):
        made.rmdir()


def make_run_dir(path: Path) -> Path:
    """Create a planned run directory; an `OSError` (a race, a full disk) becomes a `ConfigError` naming it."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the run directory {path} ({exc.strerror or exc})") from None
    return path.resolve()


def new_run_dir(job: str, out: Path | None = None, root: Path = Path("runs"), force: bool = False) -> Path:
    """`plan_run_dir` and `make_run_dir` in one step (for callers with nothing to check in between)."""
    return make_run_dir(plan_run_dir(job, out, root, force))


def save_config(run_dir: Path, config: JobConfig) -> None:
    (run_dir / CONFIG_FILE).write_text(yaml.safe_dump(config_dict(config), sort_keys=False))


def config_dict(config: JobConfig) -> dict[str, Any]:
    return config.model_dump(mode="json", exclude_none=True)


def load_run_config(run_dir: Path) -> JobConfig:
    """The saved config of a run directory; `ConfigError` naming the directory when it is not a run's."""
    try:
        is_dir = run_dir.is_dir()
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{run_dir}: not a usable path ({exc})") from None
    if not is_dir:
        what = "does not exist" if not run_dir.exists() else "is a file"
        raise ConfigError(f"{run_dir}: {what}; expected a raygent run directory")
    path = run_dir / CONFIG_FILE
    if not path.is_file():
        raise ConfigError(f"{run_dir}: not a raygent run directory (no {CONFIG_FILE})")
    data = read_yaml_file(path, what="run's saved config")
    try:
        return validate_config(data)
    except ConfigError as exc:
        raise ConfigError(f"{path}: not a valid run config: {exc}") from None
