"""A sweep's outputs: `results.csv`, the curve PNG, `summary.json` (the verdict) and `report.html`."""

from __future__ import annotations

import ast
import base64
import html
import json
import re
import traceback
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from raygent.platform import rundir
from raygent.platform.config import ConfigError, JobConfig, load_entry
from raygent.platform.study import TuneStudy, finished, verdict


def finalize(run_dir: Path, config: JobConfig, results: pd.DataFrame, wall_s: float | None = None) -> dict[str, Any]:
    """Write every output of a finished sweep and return the summary."""
    results.to_csv(run_dir / rundir.RESULTS_FILE, index=False)
    return write_report(run_dir, config, results, wall_s)


def write_report(run_dir: Path, config: JobConfig, results: pd.DataFrame, wall_s: float | None) -> dict[str, Any]:
    """The outputs but `results.csv`. The study's `analyze` and `plot` see only the finished trials (`finished`);
    the summary counts every trial and the errored ones, and the HTML table lists them all."""
    study: TuneStudy = load_entry(config.entry)()
    done = finished(results)
    if done.empty:
        judged = verdict(study.claim, {}, error="no trial finished")
    else:
        judged = study.analyze(done)
        study.plot(done, run_dir / rundir.PLOT_FILE)
    summary = {
        "job": config.job,
        "claim": judged.claim,
        "holds": bool(judged.holds),
        "evidence": judged.evidence,
        "checks": {name: bool(ok) for name, ok in judged.checks.items()},
        "metric": study.metric,
        "mode": study.mode,
        "trials": len(results),
        "errored": int((results["status"] == "ERROR").sum()),
        "wall_s": None if wall_s is None else round(wall_s, 2),
        "run_dir": str(run_dir),
    }
    (run_dir / rundir.SUMMARY_FILE).write_text(json.dumps(summary, indent=2, default=_plain))
    (run_dir / rundir.REPORT_FILE).write_text(render_html(run_dir, config, results, summary))
    return summary


def _plain(value: Any) -> Any:
    """json fallback for numpy scalars and arrays."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def render_html(run_dir: Path, config: JobConfig, results: pd.DataFrame, summary: dict[str, Any]) -> str:
    plot = run_dir / rundir.PLOT_FILE
    image = (
        f'<img alt="curve" src="data:image/png;base64,{base64.b64encode(plot.read_bytes()).decode()}">'
        if plot.exists()
        else "<p>(no plot: no trial finished)</p>"
    )
    verdict = "HOLDS" if summary["holds"] else "DOES NOT HOLD"
    color = "#1a7f37" if summary["holds"] else "#cf222e"
    checks = "".join(f"<li>{'✔' if ok else '✘'} {html.escape(name)}</li>" for name, ok in summary["checks"].items())
    evidence = html.escape(json.dumps(summary["evidence"], indent=2, default=_plain))
    table = results.to_html(index=False, float_format=lambda v: f"{v:.4g}", border=0)
    config_text = html.escape(yaml.safe_dump(rundir.config_dict(config), sort_keys=False))
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>raygent · {html.escape(config.job)}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}}
table{{border-collapse:collapse;font-size:12px}}td,th{{padding:2px 8px;border-bottom:1px solid #ddd}}
.verdict{{font-size:1.4em;color:{color};font-weight:bold}}pre{{background:#f6f8fa;padding:1em;overflow:auto}}
img{{max-width:100%}}</style></head><body>
<h1>{html.escape(config.job)}</h1><p>{html.escape(config.description)}</p>
<h2>Claim</h2><p>{html.escape(summary["claim"])}</p>
<p class="verdict">{verdict}</p><ul>{checks}</ul>
<h2>Curve</h2>{image}
<h2>Evidence</h2><pre>{evidence}</pre>
<h2>Trials ({summary["trials"]}, {summary["errored"]} errored)</h2>{table}
<h2>Config</h2><pre>{config_text}</pre>
</body></html>
"""


def rebuild_report(run_dir: Path, config: JobConfig) -> dict[str, Any]:
    """`raygent report`: `write_report` again from the sweep's `results.csv` (read by `load_results`). A column the
    study's `analyze` or `plot` looks up that the file lacks is a `ConfigError` naming the file and the column."""
    results = load_results(run_dir, config)
    try:
        return write_report(run_dir.resolve(), config, results, wall_s=None)
    except KeyError as exc:
        column = _absent_column(exc, results)
        if column is None:
            raise
        raise ConfigError(_missing_message(run_dir / rundir.RESULTS_FILE, [column], results, config.job)) from None


def load_results(run_dir: Path, config: JobConfig | None = None) -> pd.DataFrame:
    """A sweep's `results.csv`; a `ConfigError` naming the file when it is empty or not a CSV table. With the run's
    `config`, also when it lacks a column `write_report` reads: `status`, the swept knobs and, once a trial
    finished, the study's metric."""
    path = run_dir / rundir.RESULTS_FILE
    try:
        results = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise ConfigError(f"{path}: the file is empty; expected the sweep's results table (a CSV)") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a CSV table ({' '.join(str(exc).split())})") from None
    if config is not None:
        study: TuneStudy = load_entry(config.entry)()
        required = ["status", *config.sweep.space]
        if "status" not in results or (results["status"] == "TERMINATED").any():
            required.append(study.metric)
        missing = [name for name in dict.fromkeys(required) if name not in results.columns]
        if missing:
            raise ConfigError(_missing_message(path, missing, results, config.job))
    return results


def _missing_message(path: Path, missing: list[str], results: pd.DataFrame, job: str) -> str:
    names = ", ".join(repr(name) for name in missing)
    columns = [str(name) for name in results.columns]
    shown = ", ".join(columns[:12]) + (f", ... ({len(columns) - 12} more)" if len(columns) > 12 else "")
    return (
        f"{path}: no column{'s' if len(missing) > 1 else ''} {names} (needed for the {job} study's report); "
        f"its columns: {shown or '(none)'}"
    )


def _absent_column(exc: KeyError, results: pd.DataFrame) -> str | None:
    """The column a pandas lookup raised `exc` for (`KeyError('x')`, `'Column not found: x'`, `"['x'] not in
    index"`), when `results` lacks it; None for any other `KeyError` (one that pandas did not raise)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames or "pandas" not in Path(frames[-1].filename).parts or not exc.args:
        return None
    key = exc.args[0]
    names: list[Any] = [key]
    if isinstance(key, str):
        listed = re.fullmatch(r"\[(.*)\] not in index", key)
        try:
            names = list(ast.literal_eval(f"[{listed[1]}]")) if listed else [key.removeprefix("Column not found: ")]
        except (ValueError, SyntaxError):
            return None
    absent = [name for name in names if isinstance(name, str) and name not in results.columns]
    return absent[0] if absent else None
