"""FactGuard's claims: `raygent run factguard` per seed and variant; held-out numbers of SFT and of SFT → GRPO.

    python bench/factguard.py [--seeds 0 1 2] [--variants decision_aware outcome_only no_tools] [overrides ...]

Variants: `decision_aware` (the config), `outcome_only` (`reward.entry=...:OutcomeOnly`), `no_tools`
(`env.task_kwargs.tools=false`). Each run is a fresh `raygent run factguard trainer.seed=S` process. Per variant it
prints means ± standard deviations over seeds of accuracy, macro-F1, cost-weighted error and tool calls on `claim`
items (which need none), before (SFT) and after GRPO. Claims (issue 21): decision-aware GRPO beats SFT on accuracy
and macro-F1 with lower cost-weighted error and no more tool calls on `claim` items; outcome-only calls tools more
or misses more. Last line: `key=value` means of the decision-aware variant's gains and the run time.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from statistics import mean, pstdev

from _runs import parse_args, run_job

VARIANTS = {
    "decision_aware": [],
    "outcome_only": ["reward.entry=raygent.rewards.factguard.decision_aware:OutcomeOnly"],
    "no_tools": ["env.task_kwargs.tools=false"],
}
KEYS = ("accuracy", "macro_f1", "cost_error", "tool_calls/claim", "tool_calls", "missed_fake")


def run_once(seed: int, overrides: list[str], run_dir: Path) -> tuple[dict, float]:
    """(factguard.json, minutes) of one `raygent run factguard` in a fresh process."""
    return run_job("factguard", [f"trainer.seed={seed}", *overrides], run_dir, "factguard.json")


def spread(values: list[float]) -> str:
    return f"{mean(values):.3f} ± {pstdev(values):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("overrides", nargs="*", help="config overrides for every run, e.g. trainer.steps=20")
    args = parse_args(parser)
    results: dict[str, list[dict]] = {variant: [] for variant in args.variants}
    minutes: list[float] = []
    with tempfile.TemporaryDirectory() as root:
        for seed in args.seeds:
            for variant in args.variants:
                result, wall = run_once(seed, [*VARIANTS[variant], *args.overrides], Path(root) / f"{variant}{seed}")
                results[variant].append(result)
                minutes.append(wall)
                b, a = result["before"], result["after"]
                print(
                    f"seed {seed} {variant}: accuracy {b['accuracy']:.3f} -> {a['accuracy']:.3f}, cost error "
                    f"{b['cost_error']:.3f} -> {a['cost_error']:.3f} ({wall:.1f} min)",
                    flush=True,
                )
    for variant, runs in results.items():
        print(f"{variant} ({len(runs)} seeds)")
        for key in KEYS:
            before = [r["before"].get(key, float("nan")) for r in runs]
            after = [r["after"].get(key, float("nan")) for r in runs]
            print(f"  {key:18s} SFT {spread(before)}   SFT→GRPO {spread(after)}")
    line = f"minutes={mean(minutes):.2f} seeds={len(args.seeds)}"
    if results.get("decision_aware"):
        runs = results["decision_aware"]
        gain = {k: [r["after"][k] - r["before"][k] for r in runs] for k in ("accuracy", "macro_f1", "cost_error")}
        line = (
            f"gain_accuracy={mean(gain['accuracy']):.3f} gain_accuracy_sd={pstdev(gain['accuracy']):.3f} "
            f"gain_macro_f1={mean(gain['macro_f1']):.3f} cost_error_change={mean(gain['cost_error']):.3f} " + line
        )
    print(line)


if __name__ == "__main__":
    main()
