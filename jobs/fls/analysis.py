"""Seed-averaged curves over alpha and the §14 checks of the claim (pure functions of the results table).

Checks, on the mean over seeds at each alpha (alpha sorted ascending, FLS ~ 1/alpha):
1. `interior_minimum`: min over interior alphas of the test error < min(error at the smallest alpha, error at
   the largest alpha) - 0.005 (the small-alpha, over-alignment side is weak, hence the small margin);
2. `overfitting_side`: error at the largest alpha >= interior minimum + 0.03 (the lazy side is strong);
3. `pr_monotone`: the participation ratio of neuron directions never falls by more than 2% (relative) from
   one alpha to the next; the tolerance absorbs seed noise on the plateau of the lazy regime, where the
   directions barely move from their random init.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

TEST_ERROR = "test_error"
TRAIN_ERROR = "train_error"
TRAIN_LOSS = "train_loss"
PARTICIPATION_RATIO = "participation_ratio"
GD_STEPS = "gd_steps"
REACHED_TARGET = "reached_target"
METRICS = (TEST_ERROR, TRAIN_ERROR, TRAIN_LOSS, PARTICIPATION_RATIO, GD_STEPS, REACHED_TARGET)

INTERIOR_MARGIN = 0.005
OVERFITTING_MARGIN = 0.03
PR_RELATIVE_TOLERANCE = 0.02


def alpha_curve(results: pd.DataFrame) -> pd.DataFrame:
    """Per-alpha means over seeds (ascending alpha): one row per alpha, columns `alpha`, `n_seeds`, the mean
    of each metric present (test error and participation ratio are required), and `test_error_std`."""
    grouped = results.groupby("alpha", sort=True)
    curve = grouped[[name for name in METRICS if name in results]].mean()
    curve["test_error_std"] = grouped[TEST_ERROR].std(ddof=0)
    curve["n_seeds"] = grouped.size()
    return curve.reset_index()


def curve_checks(curve: pd.DataFrame) -> tuple[dict[str, bool], dict[str, Any]]:
    """The three checks on one alpha curve (from `alpha_curve`), and the numbers behind them."""
    alphas = curve["alpha"].to_numpy(dtype=float)
    error = curve[TEST_ERROR].to_numpy(dtype=float)
    pr = curve[PARTICIPATION_RATIO].to_numpy(dtype=float)
    evidence: dict[str, Any] = {
        "alphas": [float(a) for a in alphas],
        "mean_test_error": [round(float(e), 5) for e in error],
        "mean_participation_ratio": [round(float(p), 4) for p in pr],
        "seeds_per_alpha": [int(n) for n in curve["n_seeds"]],
        "argmin_alpha": float(alphas[int(np.argmin(error))]) if len(error) else float("nan"),
    }
    if GD_STEPS in curve:
        evidence["mean_gd_steps"] = [round(float(s), 1) for s in curve[GD_STEPS]]
    if REACHED_TARGET in curve:
        reached = np.average(curve[REACHED_TARGET], weights=curve["n_seeds"])
        evidence["fraction_reached_target"] = round(float(reached), 4)
    if len(alphas) < 3:
        evidence["problem"] = "need at least 3 alpha values for an interior minimum"
        return {"interior_minimum": False, "overfitting_side": False, "pr_monotone": False}, evidence
    interior = int(np.argmin(error[1:-1])) + 1
    interior_min = float(error[interior])
    pr_steps = pr[1:] / pr[:-1] - 1.0
    evidence.update(
        interior_argmin_alpha=float(alphas[interior]),
        interior_min_error=round(interior_min, 5),
        small_alpha_margin=round(float(error[0]) - interior_min, 5),
        large_alpha_margin=round(float(error[-1]) - interior_min, 5),
        interior_margin=round(float(min(error[0], error[-1])) - interior_min, 5),
        worst_pr_relative_change=round(float(pr_steps.min()), 5),
        pr_relative_tolerance=PR_RELATIVE_TOLERANCE,
    )
    checks = {
        "interior_minimum": bool(interior_min < min(error[0], error[-1]) - INTERIOR_MARGIN),
        "overfitting_side": bool(error[-1] >= interior_min + OVERFITTING_MARGIN),
        "pr_monotone": bool(np.all(pr_steps >= -PR_RELATIVE_TOLERANCE)),
    }
    return checks, evidence


def varying_knobs(results: pd.DataFrame, params: list[str]) -> list[str]:
    """Parameters other than alpha and seed that take more than one value in the table (e.g. eps_target)."""
    return [
        name
        for name in params
        if name not in ("alpha", "seed") and name in results and results[name].astype(str).nunique() > 1
    ]


def group_label(knobs: list[str], values: tuple[Any, ...]) -> str:
    """`eps_target=0.05,width=256` for one group of a sweep over extra knobs; '' when there are none."""
    return ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in zip(knobs, values, strict=True))


def split_groups(results: pd.DataFrame, knobs: list[str]) -> list[tuple[str, pd.DataFrame]]:
    """The table split by the extra swept knobs: [(label, rows)], a single ('', table) when there are none."""
    if not knobs:
        return [("", results)]
    keyed = results.assign(**{f"_key_{k}": results[k].astype(str) for k in knobs})
    groups = []
    for _, rows in keyed.groupby([f"_key_{k}" for k in knobs], sort=True):
        values = tuple(rows.iloc[0][k] for k in knobs)
        groups.append((group_label(knobs, values), rows.drop(columns=[f"_key_{k}" for k in knobs])))
    return groups
