"""PRISM's claim on a reduced grid (600 scenes, 10 epochs, width 8; dual/single head × γ 0/0.5 × 3 seeds), in this
process without Ray: the verdict's checks and the cell means.

A study's outcome on a reduced grid moves with seeds and machines (2026-12-07: `weighting_raises_recall` came out
False in one `make test` run), so it is measured here rather than asserted by the suite; the suite tests the
verdict's checks on constructed results (`tests/jobs/test_prism.py`). About 3 minutes on 2 cores.

    python bench/prism_grid.py

Last line: one `<check>=<0|1>` per check of the verdict, then `holds=…`.
"""

from __future__ import annotations

from raygent.jobs.prism import PrismStudy
from raygent.platform.config import load_config
from raygent.platform.session import grid_locally

REDUCED = {
    "n_train": 600,
    "n_test": 100,
    "n_downstream": 800,
    "n_downstream_test": 300,
    "epochs": 10,
    "downstream_epochs": 12,
    "width": 8,
}


def main() -> None:
    fixed = {**load_config("prism").study.model_dump(), **REDUCED}
    grid = grid_locally(PrismStudy(), fixed, {"heads": ["dual", "single"], "gamma": [0.0, 0.5], "seed": [0, 1, 2]})
    verdict = PrismStudy().analyze(grid)
    for cell, metrics in verdict.evidence.get("cells", {}).items():
        means = ", ".join(f"{name} {value['mean']:.3f}" for name, value in metrics.items() if isinstance(value, dict))
        print(f"{cell}: {means}", flush=True)
    checks = " ".join(f"{name}={int(bool(value))}" for name, value in verdict.checks.items())
    print(f"{checks} holds={int(bool(verdict.holds))}")


if __name__ == "__main__":
    main()
