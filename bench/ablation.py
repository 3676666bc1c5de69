"""The small-model recipe, one part off at a time: `grpo_toy` (SmolLM2-135M-Instruct, `jobs/configs/grpo_toy.yaml`).

    python bench/ablation.py [--seeds 0 1 2] [--variants recipe sft_10 ...] [--keep DIR]

Each variant is the job's config with the overrides of `VARIANTS` after it; each run is one `raygent run grpo_toy
trainer.seed=S` in a fresh process. Runs go seed by seed (every variant of seed 0 first), so a bench stopped
part-way holds whole seeds. With `--keep DIR` a run whose `summary.json` is already there is read, not rerun: the
bench resumes where it stopped.

Measured (docs/architecture.md, "The small-model recipe"; runs reproducible): the recipe (5 SFT steps) +0.420 ±
0.060 (2026-12-08); with 10 SFT steps (`sft_10`) +0.104 ± 0.206, with 10 SFT steps and the gate (`evening`, the
recipe of 2026-12-07) −0.076 ± 0.358, and on that recipe: dynamic sampling off +0.101 ± 0.209, a 3-step warm-up
+0.101 ± 0.157, full fine-tuning −0.056 ± 0.048 (2026-12-07). `gate` (5 SFT steps and the gate, 2026-12-08, seeds 0
and 1): +0.510 / +0.219 (the recipe on them: +0.500 / +0.354). The `EXTRA_VARIANTS` on the new recipe are not
measured yet.

Per run: `seed=S variant=V sft=… grpo=… gain=… minutes=…` and the per-template counts. Then a table (gain mean ±
population standard deviation over seeds, minutes a run). Last line: `<variant>_gain=…` for every variant, then
`seeds=N`.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from statistics import mean, pstdev

from _runs import parse_args
from grpo_toy import per_template, run_once

GATE = ["tasks.entry=raygent.platform.rl.tasks:AdmissionGate", "tasks.kwargs={min_outcomes: 8, window: 32}"]

VARIANTS: dict[str, list[str]] = {
    "recipe": [],
    # SFT teaches the calculator call too, leaving GRPO the comparisons only
    "sft_10": ["sft.steps=10"],
    # the task stream filtered to the templates whose running success is in the 20-80 % band (the admission gate)
    "gate": GATE,
    # every drawn batch trains, zero-variance groups dropped as before, none drawn to replace them
    "no_dynamic_sampling": ["rollout.dynamic_sampling=null"],
    # a warm-up of 3 steps (the recipe has none)
    "warmup": ["learner.schedule={warmup_steps: 3}"],
    # every weight trains, at a tenth of LoRA's rates (full fine-tuning's usual ratio)
    "full_finetune": ["learner.lora=null", "learner.lr=0.00002", "sft.lr=0.00005"],
}
EXTRA_VARIANTS: dict[str, list[str]] = {
    # the recipe of 2026-12-07 evening (10 SFT steps and the gate), the base of the first ablation table
    "evening": ["sft.steps=10", *GATE],
    # what might hold what SFT taught under an update that seeks a shortcut (not parts of the recipe: `--variants`)
    # a KL to the policy as RL began (after SFT), k3 estimator
    "kl": ["learner.loss.terms=[{name: grpo, clip_high: 0.28}, {name: kl, coef: 0.05}]"],
    # a quarter of the recipe's RL rate
    "small_step": ["learner.lr=0.00005"],
}


def run(seed: int, variant: str, root: Path) -> dict[str, float]:
    run_dir = root / f"{variant}-seed{seed}"
    if (run_dir / "summary.json").exists() and (run_dir / "minutes").exists():
        summary, minutes = json.loads((run_dir / "summary.json").read_text()), float((run_dir / "minutes").read_text())
    else:
        summary, minutes = run_once(seed, {**VARIANTS, **EXTRA_VARIANTS}[variant], run_dir)
        (run_dir / "minutes").write_text(f"{minutes:.3f}")
    row = {"sft": summary["before_success"], "grpo": summary["after_success"], "minutes": minutes}
    row["gain"] = row["grpo"] - row["sft"]
    print(
        f"seed={seed} variant={variant} sft={row['sft']:.3f} grpo={row['grpo']:.3f} gain={row['gain']:.3f} "
        f"minutes={minutes:.2f}\n  {per_template(run_dir)}",
        flush=True,
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--variants", nargs="+", choices=[*VARIANTS, *EXTRA_VARIANTS], default=list(VARIANTS))
    parser.add_argument("--keep", type=Path, default=None, help="keep (and resume from) the run directories here")
    args = parse_args(parser)
    rows: dict[str, list[dict[str, float]]] = {variant: [] for variant in args.variants}
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        for seed in args.seeds:
            for variant in args.variants:
                rows[variant].append(run(seed, variant, root))
    print(f"{'variant':<22}{'sft':>8}{'grpo':>8}{'gain':>16}{'minutes':>9}")
    for variant, runs in rows.items():
        gains = [r["gain"] for r in runs]
        print(
            f"{variant:<22}{mean(r['sft'] for r in runs):>8.3f}{mean(r['grpo'] for r in runs):>8.3f}"
            f"{mean(gains):>9.3f} ± {pstdev(gains):.3f}{mean(r['minutes'] for r in runs):>9.2f}"
        )
    gains_line = " ".join(f"{variant}_gain={mean(r['gain'] for r in runs):.3f}" for variant, runs in rows.items())
    print(f"{gains_line} seeds={len(args.seeds)}")


if __name__ == "__main__":
    main()
