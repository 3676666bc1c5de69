"""Run directories: `runs/<job>/<timestamp>/` holding the resolved config and everything a run writes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import yaml

from raygent.platform.config import ConfigError, JobConfig, validate_config

CONFIG_FILE = "config.yaml"
SUMMARY_FILE = "summary.json"
RESULTS_FILE = "results.csv"
REPORT_FILE = "report.html"
PLOT_FILE = "curve.png"
EVENTS_FILE = "trials.jsonl"
TUNE_DIR = "tune"


def new_run_dir(job: str, out: Path | None = None, root: Path = Path("runs")) -> Path:
    """`out` if given, else a fresh `runs/<job>/<YYYYmmdd-HHMMSS>` (suffixed if that second is taken)."""
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        return out.resolve()
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = root / job / stamp
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{stamp}-{n}")
    path.mkdir(parents=True)
    return path.resolve()


def save_config(run_dir: Path, config: JobConfig) -> None:
    (run_dir / CONFIG_FILE).write_text(yaml.safe_dump(config_dict(config), sort_keys=False))


def config_dict(config: JobConfig) -> dict[str, Any]:
    return config.model_dump(mode="json", exclude_none=True)


def load_run_config(run_dir: Path) -> JobConfig:
    path = run_dir / CONFIG_FILE
    if not path.is_file():
        raise ConfigError(f"{run_dir}: not a raygent run directory (no {CONFIG_FILE})")
    return validate_config(yaml.safe_load(path.read_text()))
