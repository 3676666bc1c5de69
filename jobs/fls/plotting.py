"""The figure of the study: test error against alpha (log axis, FLS ~ 1/alpha), participation ratio on a twin axis."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pandas as pd

from raygent.jobs.fls.analysis import PARTICIPATION_RATIO, TEST_ERROR, alpha_curve, split_groups
from raygent.platform.study import figure


def plot_error_and_pr(results: pd.DataFrame, knobs: list[str], path: Path) -> None:
    """Per-seed test errors (dots), their mean (line) and the mean participation ratio (dashed, right axis),
    one colour per group of the extra swept knobs."""
    with figure(path, figsize=(7.0, 4.5)) as (_, ax_error):
        ax_pr = ax_error.twinx()
        colours = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
        groups = split_groups(results, knobs)
        for index, (label, rows) in enumerate(groups):
            colour = colours[index % len(colours)]
            pr_colour = colours[1] if len(groups) == 1 else colour
            suffix = f" ({label})" if label else ""
            curve = alpha_curve(rows)
            ax_error.scatter(rows["alpha"], rows[TEST_ERROR], s=12, alpha=0.35, color=colour)
            ax_error.plot(curve["alpha"], curve[TEST_ERROR], "o-", color=colour, label=f"test error{suffix}")
            ax_pr.plot(
                curve["alpha"], curve[PARTICIPATION_RATIO], "s--", color=pr_colour, alpha=0.6, label=f"PR{suffix}"
            )
        ax_error.set_xscale("log")
        ax_error.set_xlabel("init scale alpha (feature-learning strength ~ 1/alpha)")
        ax_error.set_ylabel("test error (dots: seeds, line: mean)")
        ax_pr.set_ylabel("participation ratio of neuron directions")
        handles = ax_error.get_legend_handles_labels()[0] + ax_pr.get_legend_handles_labels()[0]
        labels = ax_error.get_legend_handles_labels()[1] + ax_pr.get_legend_handles_labels()[1]
        ax_error.legend(handles, labels, loc="upper center", fontsize=8)
        ax_error.set_title("Optimal feature-learning strength under early stopping at a target train loss")
