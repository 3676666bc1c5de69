"""Overhead of `raygent sweep` over a raw `ray.tune.Tuner` running the same trainable and grid.

Each measurement is a fresh process, as a user would run it: the raw side starts Ray and fits a Tuner
over the FLS study's trainable; the raygent side runs `raygent sweep fls` with the same grid, which adds
config validation, the trial log, the results table, the verdict, the plot and the report. Rounds are
interleaved so machine load hits both alike; medians are compared.

`raygent sweep` sets `reuse_actors=True` (a trial process's start-up, mostly imports, costs more than a
small trial), which Tune leaves off by default; so the raw Tuner runs twice per round, with Tune's default
and with actor reuse, and `overhead_ratio` is against the default while `overhead_vs_reuse` isolates
raygent's own additions.

Final line: `raw_s=… raw_reuse_s=… raygent_s=… overhead_ratio=… overhead_vs_reuse=… rounds=… trials=…`.
Target: overhead_ratio ≤ 1.10.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ALPHAS = [0.0001, 0.01, 0.1, 0.3, 1.0, 10.0]
SEEDS = [0, 1]

RAW = f"""
import os
os.environ.setdefault("RAY_AUTH_MODE", "token")
import ray
from ray import tune
from raygent.jobs.fls.study import FLSStudy
from raygent.platform.config import load_config

ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
fixed = load_config("fls").study.model_dump()
space = {{**fixed, "alpha": tune.grid_search({ALPHAS}), "seed": tune.grid_search({SEEDS})}}
tuner = tune.Tuner(
    tune.with_resources(FLSStudy().trainable, {{"cpu": 1}}),
    param_space=space,
    tune_config=tune.TuneConfig(metric="test_error", mode="min", max_concurrent_trials=2, reuse_actors={{reuse}}),
    run_config=tune.RunConfig(storage_path=os.path.abspath("{{out}}"), name="raw", verbose=0),
)
grid = tuner.fit()
assert not grid.errors and len(grid) == {len(ALPHAS) * len(SEEDS)}
"""


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, text=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    raw, raw_reuse, ours = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(args.rounds):
            for reuse, times in ((False, raw), (True, raw_reuse)):
                script = RAW.replace("{out}", str(Path(tmp) / f"raw{index}{reuse}")).replace("{reuse}", str(reuse))
                times.append(timed([sys.executable, "-c", script]))
            ours.append(
                timed(
                    [
                        sys.executable,
                        "-m",
                        "raygent.platform.cli",
                        "sweep",
                        "fls",
                        f"sweep.space.alpha.grid={ALPHAS}",
                        f"sweep.space.seed.grid={SEEDS}",
                        "--out",
                        str(Path(tmp) / f"raygent{index}"),
                    ]
                )
            )
            line = f"raw {raw[-1]:.1f}s  raw+reuse {raw_reuse[-1]:.1f}s  raygent {ours[-1]:.1f}s"
            print(f"round {index}: {line}", flush=True)
    raw_s, reuse_s, raygent_s = statistics.median(raw), statistics.median(raw_reuse), statistics.median(ours)
    print(
        f"raw_s={raw_s:.2f} raw_reuse_s={reuse_s:.2f} raygent_s={raygent_s:.2f} "
        f"overhead_ratio={raygent_s / raw_s:.3f} overhead_vs_reuse={raygent_s / reuse_s:.3f} "
        f"rounds={args.rounds} trials={len(ALPHAS) * len(SEEDS)}"
    )


if __name__ == "__main__":
    main()
