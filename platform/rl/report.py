"""The report of an agent run: learning curve, success before and after RL, example trajectories.

Reads `metrics.jsonl` (the trainer's records) and writes `curve.png`, `summary.json` and `report.html` into the
run directory. A recipe passes its claim and the threshold its verdict uses, and optionally more before/after
rows (e.g. templates never trained on) and example steps with a `screenshot` path relative to the run directory.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from raygent.platform.rl import metrics as m

SUMMARY_FILE = "summary.json"
REPORT_FILE = "report.html"
CURVE_FILE = "curve.png"


def plot_curve(records: list[dict[str, Any]], path: Path) -> None:
    """Training success and reward per GRPO step, and held-out success (and every extra evaluation set's,
    `eval/<name>/success`) at each evaluation; beside it, held-out success and training success against wall time
    (minutes since the trainer started, where the records have it)."""
    train = [r for r in records if r.get(m.STAGE) == "grpo"]
    evals = [r for r in records if r.get(m.STAGE) == "eval"]
    timed = any(m.WALL in r for r in train + evals)
    fig, axes = plt.subplots(1, 2 if timed else 1, figsize=(12 if timed else 7, 4), squeeze=False)
    ax = axes[0][0]
    if train:
        ax.plot([r[m.STEP] for r in train], [r[m.SUCCESS] for r in train], label="train success (sampled)", alpha=0.7)
        ax.plot([r[m.STEP] for r in train], [r[m.REWARD] for r in train], label="train reward", alpha=0.4)
    # the held-out set (absent when a run evaluates only extra sets), then each extra set
    keys = {k for r in evals for k in r if k.startswith("eval/") and k.endswith("/success")}
    for key in sorted(keys, key=lambda k: (k != m.EVAL_SUCCESS, k)):
        points = [(r[m.STEP], r[key]) for r in evals if key in r]
        main = key == m.EVAL_SUCCESS
        label = "held-out success (greedy)" if main else f"{key.split('/')[1]} (greedy)"
        ax.plot([p[0] for p in points], [p[1] for p in points], "o-" if main else "s--", label=label)
    ax.set_xlabel("GRPO step")
    if timed:
        wall = axes[0][1]
        points = [(r[m.WALL] / 60, r[m.SUCCESS]) for r in train if m.WALL in r]
        wall.plot([p[0] for p in points], [p[1] for p in points], label="train success (sampled)", alpha=0.7)
        points = [(r[m.WALL] / 60, r[m.EVAL_SUCCESS]) for r in evals if m.WALL in r and m.EVAL_SUCCESS in r]
        wall.plot([p[0] for p in points], [p[1] for p in points], "o-", label="held-out success (greedy)")
        wall.set_xlabel("minutes since the trainer started")
    for axis in axes[0]:
        axis.set_ylim(-0.02, 1.02)
        axis.legend(loc="lower right")
        axis.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def batch_summary(train: Sequence[dict[str, Any]]) -> dict[str, float]:
    """How the RL steps filled their batches: draws a step, groups drawn and kept (with reward variance), and the
    admission gate's band and admitted share where a gate ran (`tasks/*`)."""
    if not train:
        return {}
    out = {
        "draws_per_step": sum(r.get(m.DRAWS, 1) for r in train) / len(train),
        "groups_drawn": float(sum(r.get(m.GROUPS_DRAWN, 0) for r in train)),
        "groups_kept": float(sum(r.get(m.GROUPS_KEPT, 0) for r in train)),
    }
    gated = [r for r in train if "tasks/admitted_fraction" in r]
    if gated:
        out["band_low"], out["band_high"] = gated[-1]["tasks/band_low"], gated[-1]["tasks/band_high"]
        out["admitted_fraction"] = sum(r["tasks/admitted_fraction"] for r in gated) / len(gated)
        out["evicted_templates_last"] = gated[-1]["tasks/evicted_templates"]
    return out


def human(value: Any) -> str:
    """A value as a person reads it in a table: floats to 3 decimals (small ones in scientific notation), mappings
    as `key value` pairs, sequences comma-separated."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:.3g}" if value and abs(value) < 1e-3 else f"{value:.3f}".rstrip("0").rstrip(".") or "0"
    if isinstance(value, dict):
        return ", ".join(f"{k} {human(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(human(v) for v in value)
    return str(value)


def write_report(
    run_dir: Path,
    job: str,
    claim: str,
    before: float,
    after: float,
    min_gain: float,
    examples: list[dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
    rows: Sequence[tuple[str, float, float]] = (),
    metrics_dir: Path | None = None,
) -> dict[str, Any]:
    """Writes the three files; returns the summary (`holds` is `after - before >= min_gain`). `rows` are more
    `(name, before, after)` lines of the before/after table (not part of the verdict), kept in the summary as
    `rows`. The curve, `steps` and `timing_s` read the metrics of `metrics_dir` (default `run_dir`: a job whose
    training ran in a subdirectory names it)."""
    records = m.MetricsLog(metrics_dir or run_dir, tensorboard=False).read()
    plot_curve(records, run_dir / CURVE_FILE)
    train = [r for r in records if r.get(m.STAGE) == "grpo"]
    timing = {
        key: sum(float(r.get(key, 0.0)) for r in train) for key in (m.TIMING_GENERATE, m.TIMING_LEARN, m.TIMING_SYNC)
    }
    summary = {
        "job": job,
        "claim": claim,
        "before_success": before,
        "after_success": after,
        "gain": after - before,
        "holds": bool(after - before >= min_gain),
        "steps": len(train),
        "timing_s": timing,
        **({"batches": batch_summary(train)} if train else {}),
        **(extra or {}),
    }
    if rows:
        summary["rows"] = [{"name": n, "before": b, "after": a, "gain": a - b} for n, b, a in rows]
    (run_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2))
    table = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{b:.3f}</td><td>{a:.3f}</td><td>{a - b:+.3f}</td></tr>"
        for name, b, a in [("held-out tasks", before, after), *rows]
    )
    details = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(human(v))}</td></tr>" for k, v in summary.items() if k != "rows"
    )
    shots = "".join(_example_html(example) for example in examples or [])
    (run_dir / REPORT_FILE).write_text(
        f"<!doctype html><meta charset='utf-8'><title>{html.escape(job)}</title>"
        f"<h1>{html.escape(job)}</h1><p>{html.escape(claim)}</p>"
        f"<h2>Learning curve</h2><img src='{CURVE_FILE}' alt='learning curve'>"
        f"<h2>Before and after</h2><table border=1 cellpadding=4>"
        f"<tr><th>evaluation set</th><th>before RL</th><th>after RL</th><th>gain</th></tr>{table}</table>"
        f"<h2>Run</h2><table border=1 cellpadding=4>{details}</table>"
        f"<h2>Example trajectories</h2>{shots}"
    )
    return summary


def _example_html(example: dict[str, Any]) -> str:
    steps = "".join(
        f"<li><pre>{html.escape(str(s.get('observation', '')))[:2000]}</pre>"
        + (f"<img src='{html.escape(s['screenshot'])}' width=320>" if s.get("screenshot") else "")
        + f"<b>action:</b> <code>{html.escape(str(s.get('action', '')))}</code></li>"
        for s in example.get("steps", [])
    )
    title = html.escape(f"{example.get('task', '')} — success: {example.get('success')}")
    return f"<h3>{title}</h3><ol>{steps}</ol>"
