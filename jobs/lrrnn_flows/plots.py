"""The study's figure: per case, ground-truth vs sampled dynamics and the residual before/after max-ent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from raygent.jobs.lrrnn_flows.pipeline import HIST_BINS
from raygent.platform.study import figure

DYNAMICS = {  # case -> (statistic, axis label)
    "bistable": ("stable_fp", "stable fixed points"),
    "multistable": ("stable_fp", "stable fixed points"),
    "heavy_tailed": ("stable_fp", "stable fixed points"),
    "limit_cycle": ("period", "period (tau)"),
    "ring": ("ring_drift_deg", "drift over 10 tau (deg)"),
    "recorded": ("stable_fp", "stable fixed points"),
}

REFERENCE_COLOURS = {"truth": "0.3", "point est.": "0.6", "truth at N'": "0.8"}
FLOW_COLOURS = ("tab:orange", "tab:blue")


def _hist(rows: pd.DataFrame, prefix: str) -> np.ndarray:
    cols = [c for c in rows.columns if c.startswith(f"hist/{prefix}_")]
    return rows[sorted(cols)].mean().to_numpy() if cols and len(rows) else np.zeros(len(HIST_BINS) - 1)


def plot_study(results: pd.DataFrame, path: Path) -> None:
    """2 x (cases + 1) panels: dynamics bars, residual histograms; last column rank elbow and entropy vs lambda."""
    lam_hi, lam_lo = results["entropy_weight"].max(), results["entropy_weight"].min()
    cases = [c for c in DYNAMICS if c in set(results["case"])]
    size = (3.2 * (len(cases) + 1), 6.2)
    with figure(path, 2, len(cases) + 1, figsize=size, squeeze=False, dpi=110) as (_, axes):
        centres = 0.5 * (HIST_BINS[1:] + HIST_BINS[:-1])
        gauss = np.exp(-0.5 * centres**2) / np.sqrt(2 * np.pi)
        for col, case in enumerate(cases):
            rows = results[(results["case"] == case) & (results["rank_offset"] == 0)]
            stat, label = DYNAMICS[case]
            bars = {"truth": rows.get(f"gt/{stat}"), "point est.": rows.get(f"fit/{stat}"),
                    "truth at N'": rows.get(f"null/{stat}")}  # the ring's finite-size drift floor
            for lam in sorted(set(rows["entropy_weight"])):
                bars[f"flow λ={lam:g}"] = rows[rows["entropy_weight"] == lam].get(f"sampled/{stat}")
            names = [k for k, v in bars.items() if v is not None and pd.to_numeric(v, errors="coerce").notna().any()]
            values = [pd.to_numeric(bars[k], errors="coerce") for k in names]
            ax = axes[0, col]
            flow = [FLOW_COLOURS[int(bool(lam_hi != lam_lo and k.endswith(f"={lam_hi:g}")))] for k in names]
            ax.bar(range(len(names)), [v.mean() for v in values], yerr=[v.std() for v in values],
                   color=[REFERENCE_COLOURS.get(k, c) for k, c in zip(names, flow, strict=True)])
            ax.set_xticks(range(len(names)), names, rotation=30, fontsize=7)
            ax.set_title(case)
            ax.set_ylabel(label, fontsize=8)
            ax = axes[1, col]
            ax.plot(centres, _hist(rows[rows["entropy_weight"] == lam_hi], "point"), "k-", label="point estimate")
            ax.plot(centres, _hist(rows[rows["entropy_weight"] == lam_lo], "flow"), "--", color="tab:orange",
                    label=f"flow λ={lam_lo:g}")
            ax.plot(centres, _hist(rows[rows["entropy_weight"] == lam_hi], "flow"), "-", color="tab:blue",
                    label=f"flow λ={lam_hi:g}")
            ax.plot(centres, gauss, ":", color="0.5", label="N(0,1)")
            ax.set_xlabel("unidentifiable residual (z)", fontsize=8)
            if col == 0:
                ax.legend(fontsize=6)
        ax = axes[0, -1]
        colour = {case: f"C{i}" for i, case in enumerate(sorted(set(results["case"])))}
        for case in colour:
            rows = results[results["case"] == case].groupby("rank_offset")["fit/heldout_mse"].median()
            ax.semilogy(rows.index, rows.to_numpy(), "o-", color=colour[case], label=case)
        ax.set_xlabel("rank - true rank")
        ax.set_ylabel("held-out prediction MSE", fontsize=8)
        ax.set_title("rank elbow")
        ax.legend(fontsize=6)
        ax = axes[1, -1]
        for case in colour:
            at_rank = results[(results["case"] == case) & (results["rank_offset"] == 0)]
            rows = at_rank.groupby("entropy_weight")["flow/entropy"].mean()
            if len(rows):
                ax.plot(rows.index, rows.to_numpy(), "o-", color=colour[case], label=case)
        ax.set_xlabel("entropy weight λ")
        ax.set_ylabel("flow entropy (nats)", fontsize=8)
