"""XSkill's claim over seeds: held-out success of the same frozen agent with and without the memory it accumulated,
and the ablation (experiences only, skills only, both), on ToolCalc.

    python bench/xskill.py [--seeds 0 1 2] [--job xskill_web] [--smollm2] [overrides ...]   e.g. xskill.rl=true

`--job xskill_web` runs XSkill on the web suite (`jobs/configs/xskill_web.yaml`; its transfer run takes the overrides
`env.task_kwargs.apps=[...] env.task_kwargs.eval_apps=[media_player]`).

`--smollm2` freezes the pretrained SmolLM2-135M-Instruct preset instead of the tiny one, an agent that can read its
context (ToolCalc: `SMOLLM2_OVERRIDES`, a short fine-tuning SFT, groups of 4 in phase I; the web suite:
`_runs.SMOLLM2_WEB`, the web agent's SmolLM2 settings, so 4 phase-I steps).

Each seed is one `raygent run JOB trainer.seed=S` in a fresh process. Per seed it prints the four variants'
held-out success after phase I (overall, and on the novel templates no demonstration covered). Last line: means
over seeds, `gain` = both − none with `gain_sd` its standard deviation over seeds, and `minutes` the mean wall time
of a run.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from statistics import mean

from _runs import SMOLLM2_WEB, parse_args, run_job, variant_summary

VARIANTS = ("none", "experiences", "skills", "both")
SMOLLM2_OVERRIDES = [
    "policy.model=smollm2-135m-instruct",
    # Full fine-tuning of 134.5 M parameters: an 8-task SFT step with memory contexts takes 15-28 s on 2 cores.
    "sft.steps=20",
    "sft.batch_tasks=8",
    "sft.lr=0.00005",
    "rollout.group_size=4",
]
"""`raygent run xskill` overrides of the SmolLM2 preset (`--smollm2`)."""


def run_once(job: str, seed: int, overrides: list[str], run_dir: Path) -> tuple[dict, float]:
    """(xskill.json, minutes) of one `raygent run JOB` in a fresh process."""
    return run_job(job, [f"trainer.seed={seed}", *overrides], run_dir, "xskill.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--job", choices=["xskill", "xskill_web"], default="xskill")
    parser.add_argument("--smollm2", action="store_true", help="the SmolLM2-135M-Instruct preset (SMOLLM2_OVERRIDES)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the run directories under this folder")
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. trainer.steps=8")
    args = parse_args(parser)
    smollm2 = SMOLLM2_WEB if args.job == "xskill_web" else SMOLLM2_OVERRIDES
    overrides = [*(smollm2 if args.smollm2 else []), *args.overrides]
    success: dict[str, list[float]] = {v: [] for v in VARIANTS}
    novel: dict[str, list[float]] = {v: [] for v in VARIANTS}
    minutes: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        for seed in args.seeds:
            results, wall = run_once(args.job, seed, overrides, root / f"seed{seed}")
            minutes.append(wall)
            after = results["after"]
            for variant in VARIANTS:
                success[variant].append(after[variant]["success"])
                novel[variant].append(after[variant]["novel"])
            line = " ".join(f"{v} {after[v]['success']:.3f} (novel {after[v]['novel']:.3f})" for v in VARIANTS)
            print(
                f"seed {seed}: {line}; memory {results['memory'].get('xskill/experiences', 0):.0f} tips "
                f"{results['memory'].get('xskill/skills', 0):.0f} skills; {wall:.1f} min",
                flush=True,
            )
    novel_means = " ".join(f"novel_{v}={mean(novel[v]):.3f}" for v in VARIANTS)
    print(f"{variant_summary(success)} {novel_means} minutes={mean(minutes):.2f} seeds={len(args.seeds)}")


if __name__ == "__main__":
    main()
