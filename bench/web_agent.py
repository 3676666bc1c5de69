"""The web agent's claim: `raygent run web_agent` for several seeds; held-out success of the SFT model and after GRPO.

    python bench/web_agent.py [--seeds 0 1 2] [--keep DIR] [overrides ...]

Each seed is one `raygent run web_agent trainer.seed=S` on the embedded cluster (a fresh process, as a user runs
it; the scripted experts' demonstrations are recorded once and then read from the on-disk cache). Per seed it
prints both rows of the report; then `heldout_templates: sft_success=… grpo_success=… gain=…` (media-player
templates never trained on), and last `sft_success=… grpo_success=… gain=… minutes=…`: held-out tasks of the
trained templates, means over seeds; `minutes` is the mean wall time of one run (the issue's limit: 15 minutes
on 2 cores; claim: gain ≥ 0.10).
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
    parser.add_argument("--keep", type=Path, default=None, help="keep the run directories here")
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. trainer.steps=10")
    args = parser.parse_args()
    before, after, unseen_before, unseen_after, minutes = [], [], [], [], []
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        for seed in args.seeds:
            run_dir = root / f"seed{seed}"
            start = time.perf_counter()
            command = [sys.executable, "-m", "raygent.platform.cli", "run", "web_agent", f"trainer.seed={seed}"]
            done = subprocess.run([*command, *args.overrides, "--out", str(run_dir)], capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"seed {seed} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
            minutes.append((time.perf_counter() - start) / 60)
            summary = json.loads((run_dir / "summary.json").read_text())
            before.append(summary["before_success"])
            after.append(summary["after_success"])
            rows = {row["name"]: row for row in summary.get("rows", [])}
            unseen = rows.get("templates never trained on")
            if unseen is not None:
                unseen_before.append(unseen["before"])
                unseen_after.append(unseen["after"])
            unseen_text = f"; unseen templates {unseen['before']:.3f} → {unseen['after']:.3f}" if unseen else ""
            print(
                f"seed {seed}: sft {before[-1]:.3f} grpo {after[-1]:.3f}{unseen_text} in {minutes[-1]:.1f} min",
                flush=True,
            )
    if unseen_before:
        print(
            f"heldout_templates: sft_success={mean(unseen_before):.3f} grpo_success={mean(unseen_after):.3f} "
            f"gain={mean(unseen_after) - mean(unseen_before):.3f}"
        )
    print(
        f"sft_success={mean(before):.3f} grpo_success={mean(after):.3f} gain={mean(after) - mean(before):.3f} "
        f"minutes={mean(minutes):.2f} seeds={len(args.seeds)}"
    )


if __name__ == "__main__":
    main()
