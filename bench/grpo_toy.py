"""The RL core's proof: `raygent run grpo_toy` for several seeds; held-out success of the SFT model and after GRPO.

    python bench/grpo_toy.py [--seeds 0 1 2] [overrides ...]

Each seed is one `raygent run grpo_toy trainer.seed=S` on the embedded cluster (a fresh process, as a user runs
it). Last line: `sft_success=… grpo_success=… gain=… minutes=…` — means over seeds; `minutes` is the mean wall
time of one run (the issue's limit: 10 minutes on 2 cores; claim: gain ≥ 0.15).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import mean


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. trainer.steps=40")
    args = parser.parse_args()
    before, after, minutes = [], [], []
    with tempfile.TemporaryDirectory() as root:
        for seed in args.seeds:
            run_dir = Path(root) / f"seed{seed}"
            start = time.perf_counter()
            command = [sys.executable, "-m", "raygent.platform.cli", "run", "grpo_toy", f"trainer.seed={seed}"]
            done = subprocess.run([*command, *args.overrides, "--out", str(run_dir)], capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"seed {seed} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
            minutes.append((time.perf_counter() - start) / 60)
            summary = json.loads((run_dir / "summary.json").read_text())
            before.append(summary["before_success"])
            after.append(summary["after_success"])
            print(f"seed {seed}: sft {before[-1]:.3f} grpo {after[-1]:.3f} in {minutes[-1]:.1f} min", flush=True)
    print(
        f"sft_success={mean(before):.3f} grpo_success={mean(after):.3f} gain={mean(after) - mean(before):.3f} "
        f"minutes={mean(minutes):.2f} seeds={len(args.seeds)}"
    )


if __name__ == "__main__":
    main()
