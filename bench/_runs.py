"""One `raygent run JOB` in a fresh process, as a user runs it: the benches' shared runner, argument parsing and
SmolLM2 settings, and the XSkill benches' summary line."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from statistics import mean, pstdev
from typing import Any

SMOLLM2_WEB = [
    "policy.model=smollm2-135m-instruct",
    # the engine generates while the learner waits (sync): both cores for its ~1,000-token screen prompts
    "policy.backend_options.threads=2",
    # a 4-task SFT step on SmolLM2's tokens of the screens takes ~22 s (loss 3.1 -> 0.8 in 4 steps)
    "sft.steps=12",
    "sft.lr=0.00005",
    "learner.lr=0.00002",
    "learner.autocast=bf16",
    "rollout.group_size=4",
    "trainer.steps=4",
]
"""The SmolLM2-135M preset on a web app's screens (`--smollm2` of the web agent's and SEAgent's benches)."""


def run_job(
    job: str, overrides: list[str], run_dir: Path, result: str = "summary.json"
) -> tuple[dict[str, Any], float]:
    """(`run_dir/result` as JSON, minutes) of `raygent run JOB OVERRIDES --out RUN_DIR`; a failed run ends the bench
    with the tails of its output."""
    start = time.perf_counter()
    command = [sys.executable, "-m", "raygent.platform.cli", "run", job, *overrides, "--out", str(run_dir)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{job} {' '.join(overrides)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads((run_dir / result).read_text()), (time.perf_counter() - start) / 60


def parse_args(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """The bench's arguments, its `key=value` config overrides taken from anywhere on the command line (after
    `--seeds 0 1 2` argparse alone would read them as seeds) into `overrides`."""
    argv = sys.argv[1:]
    overrides = [a for a in argv if "=" in a and not a.startswith("-")]
    args = parser.parse_args([a for a in argv if a not in overrides])
    args.overrides = [*(getattr(args, "overrides", None) or []), *overrides]
    return args


def variant_summary(success: dict[str, list[float]]) -> str:
    """`none=… experiences=… skills=… both=… gain=… gain_sd=…`: each XSkill memory variant's mean held-out success
    over runs, and both − none (`gain`) with its population standard deviation over runs."""
    gains = [b - a for a, b in zip(success["none"], success["both"], strict=True)]
    means = " ".join(f"{variant}={mean(values):.3f}" for variant, values in success.items())
    return f"{means} gain={mean(gains):.3f} gain_sd={pstdev(gains):.3f}"
