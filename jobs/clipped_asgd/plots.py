"""The study's figure: iterations-to-ε and τ_max against S, and the heavy-tail p90 bars per θ."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from raygent.platform.study import figure


def _label(clip: float) -> str:
    return "unclipped" if math.isinf(clip) else f"clipped c={clip:g}"


def plot_study(table: pd.DataFrame, path: Path) -> None:
    """Left: median iterations to ε (lightest θ) vs S, log x, with τ_max on a second axis.
    Right: p90 over seeds of the final ‖∇f‖² per θ, clipped vs unclipped (geometric mean over S)."""
    light = float(table["theta"].min())
    clips = sorted(float(c) for c in table["clip"].unique())
    with figure(path, 1, 2, figsize=(11, 4.2), dpi=110) as (_, (left, right)):
        tau_axis = left.twinx()
        for index, clip in enumerate(clips):
            rows = table[(table["clip"] == clip) & (table["theta"] == light)]
            by_s = rows.groupby("slowdown")
            left.plot(by_s["iters_to_target_p50"].mean(), marker="o", color=f"C{index}", label=_label(clip))
            tau_axis.plot(by_s["tau_max"].max(), ls="--", marker="x", color=f"C{index}", alpha=0.6)
        left.set_xscale("log")
        left.set_xlabel("straggler slowdown S")
        left.set_ylabel(f"median iterations to ||grad f||^2 <= eps (theta={light:g})")
        left.set_ylim(bottom=0)
        tau_axis.set_yscale("log")
        tau_axis.set_ylabel("observed tau_max before target (dashed)")
        left.legend(loc="lower left")
        left.set_title("Iterations vs straggler slowdown")

        thetas = sorted(float(t) for t in table["theta"].unique())
        width = 0.8 / len(clips)
        for index, clip in enumerate(clips):
            heights = [
                float(
                    np.exp(np.log(table[(table["clip"] == clip) & (table["theta"] == t)]["final_grad_sq_p90"]).mean())
                )
                for t in thetas
            ]
            positions = np.arange(len(thetas)) + (index - (len(clips) - 1) / 2) * width
            right.bar(positions, heights, width=width, color=f"C{index}", label=_label(clip))
        right.set_xticks(np.arange(len(thetas)), [f"theta={t:g}" for t in thetas])
        right.set_yscale("log")
        right.set_ylabel("p90 over seeds of final ||grad f||^2")
        right.legend()
        right.set_title("Heavy tails: p90 final gradient norm")
