"""Tables and figures of the HySCAN study: the Cohen-style certified-accuracy-vs-radius curve and clean/EOT bars."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from raygent.platform.study import figure

SETTING = ["smoothing_sigma", "attention_noise"]
SUMMARY = [
    "hybrid/clean_acc",
    "baseline/clean_acc",
    "hybrid/cert_acc_r025",
    "baseline/cert_acc_r025",
    "hybrid/eot_pgd_acc",
    "baseline/eot_pgd_acc",
]


def setting_means(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (σ, attention noise): the seed-mean of the headline metrics and the number of seeds."""
    if results.empty:
        return pd.DataFrame(columns=[*SETTING, "seeds", *SUMMARY])
    grouped = results.groupby(SETTING)
    table = grouped[SUMMARY].mean()
    table.insert(0, "seeds", grouped["seed"].nunique())
    return table.reset_index()


def plot_study(
    results: pd.DataFrame,
    path: Path,
    sigma: float,
    noise: float,
    radii: Sequence[float],
    key: Callable[[str, float], str],
) -> None:
    """Left: certified accuracy vs ℓ2 radius of both models at the default setting (mean ± std over seeds), other σ
    faint. Right: clean and EOT-PGD accuracy of both models for every (σ, noise) setting."""
    with figure(path, 1, 2, figsize=(13, 4.8)) as (_, (left, right)):
        colors = {"hybrid": "tab:red", "baseline": "tab:blue"}
        for (s, n), group in results.groupby(SETTING):
            is_default = bool(np.isclose(s, sigma) and np.isclose(n, noise))
            for model, color in colors.items():
                curve = group[[key(model, r) for r in radii]].to_numpy()
                mean = curve.mean(axis=0)
                if is_default:
                    left.plot(radii, mean, color=color, lw=2.2, marker="o", label=f"{model} (σ={s:g}, noise={n:g})")
                    left.fill_between(
                        radii, mean - curve.std(axis=0), mean + curve.std(axis=0), color=color, alpha=0.15
                    )
                elif model == "baseline" or np.isclose(n, noise):
                    left.plot(radii, mean, color=color, lw=0.8, alpha=0.35, ls="--" if model == "baseline" else "-")
        left.axvline(0.25, color="grey", lw=0.8, ls=":")
        left.set(
            xlabel="ℓ2 radius r",
            ylabel="certified accuracy",
            title="Randomized smoothing (faint: other σ)",
            ylim=(0, 1),
        )
        left.legend(loc="upper right", fontsize=8)

        table = setting_means(results)
        labels = [
            f"σ={s:g}\nnoise={n:g}" for s, n in zip(table["smoothing_sigma"], table["attention_noise"], strict=True)
        ]
        x = np.arange(len(table))
        width = 0.2
        bars = [
            ("hybrid/clean_acc", "hybrid clean", "tab:red", None),
            ("baseline/clean_acc", "baseline clean", "tab:blue", None),
            ("hybrid/eot_pgd_acc", "hybrid EOT-PGD", "tab:red", "//"),
            ("baseline/eot_pgd_acc", "baseline EOT-PGD", "tab:blue", "//"),
        ]
        for index, (column, label, color, hatch) in enumerate(bars):
            right.bar(
                x + (index - 1.5) * width,
                table[column],
                width,
                label=label,
                color=color,
                hatch=hatch,
                alpha=0.9 if hatch is None else 0.45,
                edgecolor="black",
                linewidth=0.4,
            )
        right.set_xticks(x, labels, fontsize=7)
        right.set(ylabel="accuracy", title="Clean and EOT-PGD (ℓ∞) accuracy, mean over seeds", ylim=(0, 1.15))
        right.legend(fontsize=8, ncol=4, loc="upper center")
