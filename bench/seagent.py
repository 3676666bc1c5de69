"""SEAgent's claim: self-evolution with the World State Model against the same run with the app's checker.

    python bench/seagent.py [--seeds 0 1 2] [--variants wsm checker] [--smollm2] [--keep DIR] [overrides ...]
    python bench/seagent.py --generalist media_player code_editor [--seeds 0 1 2] [--keep DIR] [overrides ...]

Each (seed, variant) is one `raygent run seagent trainer.seed=S seagent.variant=V` (a fresh process, as a user
runs it; demonstrations, the judge's data and the fine-tuned judge are cached after the first run). Both variants
of a seed start from the same prior agent (SFT on four other apps) and are measured the same way: greedy
held-out success on the media player's own tasks, with its checker. Per run it prints before → after; then per
variant the mean gain, and `ratio=` the WSM run's mean gain over the checker run's (claim: gain > 0 and ratio ≥
0.5), and the judge's agreement with the media player's checker (success and first-error-step accuracy).

`--generalist APP APP ...` measures the second claim instead: per seed one `raygent run seagent
seagent.generalist=[APPS]` (a specialist per app, then the generalist); per seed and app the specialist's and the
generalist's held-out success on that app; last line `specialists=… generalist=… diff=… diff_sd=…` (claim: the
generalist's mean ≥ the specialists' mean, diff ≥ 0).

`--smollm2` starts from the pretrained SmolLM2-135M-Instruct preset instead of the tiny one (`SMOLLM2_OVERRIDES`:
a short fine-tuning SFT on the four other apps' experts and four GRPO steps of 4 × 4 episodes): a prior that reads
the screen, where the tiny one solved none of the media player's episodes.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from statistics import mean, pstdev

from _runs import SMOLLM2_WEB, parse_args, run_job

SMOLLM2_OVERRIDES = SMOLLM2_WEB
"""`raygent run seagent` overrides of the SmolLM2 preset (`--smollm2`)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--variants", nargs="+", default=["wsm", "checker"], choices=["wsm", "checker"])
    parser.add_argument("--keep", type=Path, default=None, help="keep the run directories here")
    parser.add_argument("--generalist", nargs="+", default=None, help="specialists on these apps, then a generalist")
    parser.add_argument("--smollm2", action="store_true", help="the SmolLM2-135M-Instruct preset (SMOLLM2_OVERRIDES)")
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. trainer.steps=10")
    args = parse_args(parser)
    args.overrides = [*(SMOLLM2_OVERRIDES if args.smollm2 else []), *args.overrides]
    if args.generalist:
        generalist(args)
        return
    gains: dict[str, list[float]] = {v: [] for v in args.variants}
    minutes: dict[str, list[float]] = {v: [] for v in args.variants}
    agreement: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        for seed in args.seeds:
            for variant in args.variants:
                overrides = [f"trainer.seed={seed}", f"seagent.variant={variant}", *args.overrides]
                summary, wall = run_job("seagent", overrides, root / f"{variant}_seed{seed}")
                minutes[variant].append(wall)
                gains[variant].append(summary["gain"])
                if summary.get("wsm_agreement"):
                    agreement.append(summary["wsm_agreement"])
                print(
                    f"seed {seed} {variant}: {summary['before_success']:.3f} → {summary['after_success']:.3f} "
                    f"(gain {summary['gain']:+.3f}) in {minutes[variant][-1]:.1f} min",
                    flush=True,
                )
    for variant in args.variants:
        spread = pstdev(gains[variant])
        print(f"{variant}: gain={mean(gains[variant]):.3f} gain_sd={spread:.3f} minutes={mean(minutes[variant]):.2f}")
    if agreement:
        first = [a["first_error_accuracy"] for a in agreement if "first_error_accuracy" in a]
        ranking = [a["within_task_auc"] for a in agreement if "within_task_auc" in a]
        print(
            f"wsm_success_accuracy={mean(a['success_accuracy'] for a in agreement):.3f} "
            f"wsm_first_error_accuracy={mean(first) if first else float('nan'):.3f} "
            f"wsm_within_task_auc={mean(ranking) if ranking else float('nan'):.3f}"
        )
    if "wsm" in gains and "checker" in gains and gains["checker"]:
        checker = mean(gains["checker"])
        ratio = mean(gains["wsm"]) / checker if checker > 0 else float("nan")
        print(f"wsm_gain={mean(gains['wsm']):.3f} checker_gain={checker:.3f} ratio={ratio:.2f} seeds={len(args.seeds)}")


def generalist(args: argparse.Namespace) -> None:
    apps = f"[{','.join(args.generalist)}]"
    diffs, specialists, generalists, minutes = [], [], [], []
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        for seed in args.seeds:
            overrides = [f"trainer.seed={seed}", f"seagent.generalist={apps}", *args.overrides]
            summary, wall = run_job("seagent", overrides, root / f"generalist_seed{seed}")
            minutes.append(wall)
            details = json.loads((root / f"generalist_seed{seed}" / "generalist.json").read_text())
            for app, row in details["apps"].items():
                distilled = row["successes_distilled"]
                print(
                    f"seed {seed} {app}: prior {row['specialist_before']:.3f}, specialist "
                    f"{row['specialist_after']:.3f}, generalist {row['generalist_after']:.3f} ({distilled} distilled)",
                    flush=True,
                )
            specialists.append(summary["specialists_success"])
            generalists.append(summary["generalist_success"])
            diffs.append(generalists[-1] - specialists[-1])
            print(f"seed {seed}: specialists {specialists[-1]:.3f} generalist {generalists[-1]:.3f} in {wall:.1f} min")
    print(
        f"specialists={mean(specialists):.3f} generalist={mean(generalists):.3f} diff={mean(diffs):.3f} "
        f"diff_sd={pstdev(diffs):.3f} minutes={mean(minutes):.2f} seeds={len(args.seeds)}"
    )


if __name__ == "__main__":
    main()
