"""The report of an agent run: learning curve, success before and after RL, example trajectories.

Reads `metrics.jsonl` (the trainer's records) and writes `curve.png`, `summary.json` and `report.html` into the
run directory. A recipe passes its claim and the threshold its verdict uses.
"""

from __future__ import annotations

import html
import json
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
    """Training success and reward per GRPO step, and held-out success at each evaluation."""
    train = [r for r in records if r.get(m.STAGE) == "grpo"]
    evals = [r for r in records if r.get(m.STAGE) == "eval"]
    fig, ax = plt.subplots(figsize=(7, 4))
    if train:
        ax.plot([r[m.STEP] for r in train], [r[m.SUCCESS] for r in train], label="train success (sampled)", alpha=0.7)
        ax.plot([r[m.STEP] for r in train], [r[m.REWARD] for r in train], label="train reward", alpha=0.4)
    if evals:
        ax.plot([r[m.STEP] for r in evals], [r[m.EVAL_SUCCESS] for r in evals], "o-", label="held-out success (greedy)")
    ax.set_xlabel("GRPO step")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_report(
    run_dir: Path,
    job: str,
    claim: str,
    before: float,
    after: float,
    min_gain: float,
    examples: list[dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Writes the three files; returns the summary (`holds` is `after - before >= min_gain`)."""
    records = m.MetricsLog(run_dir, tensorboard=False).read()
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
        **(extra or {}),
    }
    (run_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2))
    rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(str(v))}</td></tr>" for k, v in summary.items())
    shots = "".join(_example_html(example) for example in examples or [])
    (run_dir / REPORT_FILE).write_text(
        f"<!doctype html><meta charset='utf-8'><title>{html.escape(job)}</title>"
        f"<h1>{html.escape(job)}</h1><p>{html.escape(claim)}</p>"
        f"<h2>Learning curve</h2><img src='{CURVE_FILE}' alt='learning curve'>"
        f"<h2>Before and after</h2><table border=1 cellpadding=4>{rows}</table>"
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
