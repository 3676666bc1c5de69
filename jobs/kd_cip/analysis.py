"""Seed-averaged tables, the claim's checks and the plot for the KD-CIP study (pure functions of the results).

Checks, on means over seeds (the paper's three findings as the method notes read them):
1. `kd_sparser_than_ce`: every distillation method at λ = 0 has fewer salient interactions than the
   cross-entropy student at λ = 0;
2. `cip_lowers_high_order`: for every distillation method and every λ > 0 in the sweep, the share of
   interaction strength at order ≥ 3 is lower than the same method's at λ = 0;
3. `cip_raises_ood`: for every distillation method and every λ > 0, OOD accuracy is higher than the same
   method's at λ = 0.
In-domain accuracies are reported beside them (the notes expect them within about a point).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from raygent.platform.study import figure

ID_ACC = "id_acc"
OOD_ACC = "ood_acc"
N_SALIENT = "n_salient"
HIGH_ORDER_MASS = "high_order_mass"
HIGH_ORDER_ABS = "high_order_abs"
SPURIOUS_INTERACTION = "spurious_interaction"
TEACHER_ID_ACC = "teacher_id_acc"
TEACHER_OOD_ACC = "teacher_ood_acc"
TEACHER_N_SALIENT = "teacher_n_salient"
TEACHER_HIGH_ORDER_MASS = "teacher_high_order_mass"
TRAIN_LOSS = "train_loss"
TRAIN_SECONDS = "train_seconds"
METRICS = (ID_ACC, OOD_ACC, N_SALIENT, HIGH_ORDER_MASS, HIGH_ORDER_ABS, SPURIOUS_INTERACTION)


def method_table(results: pd.DataFrame) -> pd.DataFrame:
    """Means over seeds per (method, cip_weight): one row each, with `n_seeds` and each metric's mean."""
    present = [m for m in METRICS if m in results.columns]
    grouped = results.groupby(["method", "cip_weight"], sort=True)
    table = grouped[present].mean()
    table["n_seeds"] = grouped.size()
    return table.reset_index()


def _value(table: pd.DataFrame, method: str, weight: float, column: str) -> float:
    row = table[(table["method"] == method) & (table["cip_weight"] == weight)]
    return float(row[column].iloc[0]) if len(row) else float("nan")


def claim_checks(table: pd.DataFrame) -> tuple[dict[str, bool], dict[str, Any]]:
    """The three checks on a `method_table`, and the numbers behind them."""
    methods = sorted(set(table["method"]))
    distilled = [m for m in methods if m != "ce"]
    weights = sorted(w for w in set(table["cip_weight"]) if w > 0)
    evidence: dict[str, Any] = {
        "rows": [
            {
                "method": str(row["method"]),
                "cip_weight": float(row["cip_weight"]),
                "n_seeds": int(row["n_seeds"]),
                **{m: round(float(row[m]), 4) for m in METRICS if m in row},
            }
            for _, row in table.iterrows()
        ]
    }
    if "ce" not in methods or not distilled:
        sparser = False
    else:
        ce = _value(table, "ce", 0.0, N_SALIENT)
        sparser = all(_value(table, m, 0.0, N_SALIENT) < ce for m in distilled)
    lowers = bool(weights) and bool(distilled)
    raises = lowers
    for method in distilled:
        base_mass, base_ood = _value(table, method, 0.0, HIGH_ORDER_MASS), _value(table, method, 0.0, OOD_ACC)
        for weight in weights:
            lowers &= _value(table, method, weight, HIGH_ORDER_MASS) < base_mass
            raises &= _value(table, method, weight, OOD_ACC) > base_ood
    checks = {
        "kd_sparser_than_ce": bool(sparser),
        "cip_lowers_high_order": bool(lowers),
        "cip_raises_ood": bool(raises),
    }
    return checks, evidence


def plot_study(results: pd.DataFrame, path: Path) -> None:
    """Two panels over λ, one line per method: high-order interaction share, and OOD (solid) / ID (dashed)
    accuracy, each with the spread over seeds."""
    with figure(path, 1, 2, figsize=(10, 4)) as (_, (left, right)):
        for index, (method, rows) in enumerate(results.groupby("method", sort=True)):
            stats = rows.groupby("cip_weight", sort=True)[[HIGH_ORDER_MASS, OOD_ACC, ID_ACC]].agg(["mean", "std"])
            weights = [str(w) for w in stats.index]
            color = f"C{index}"
            left.errorbar(
                weights,
                stats[HIGH_ORDER_MASS]["mean"],
                yerr=stats[HIGH_ORDER_MASS]["std"].fillna(0),
                marker="o",
                capsize=3,
                color=color,
                label=method,
            )
            right.errorbar(
                weights,
                stats[OOD_ACC]["mean"],
                yerr=stats[OOD_ACC]["std"].fillna(0),
                marker="o",
                capsize=3,
                color=color,
                label=f"{method} OOD",
            )
            right.plot(weights, stats[ID_ACC]["mean"], linestyle="--", marker=".", color=color, label=f"{method} ID")
        left.set(xlabel="CIP weight λ", ylabel="share of |I| at order ≥ 3", title="High-order interaction mass")
        right.set(xlabel="CIP weight λ", ylabel="accuracy", title="OOD (solid) and in-domain (dashed) accuracy")
        left.legend()
        right.legend(fontsize=7)
