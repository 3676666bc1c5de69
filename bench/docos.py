"""DocOS's claims over seeds: `raygent run docos trainer.seed=S` per seed, then TCR/TUI by variant and layout.

    python bench/docos.py [--seeds 0 1 2] [--keep DIR] [--smollm2] [overrides ...]
    python bench/docos.py --runs RUN_DIR [RUN_DIR ...]      # aggregate runs made already (one per seed)

Each seed is one run on the embedded cluster (a fresh process, as a user runs it; demonstrations are recorded once
and read from the cache after). Per seed it prints TCR of every variant (none, tools, oracle, the scripted reader)
on randomized and default layouts after SFT and after GRPO, and the tools agent's TUI; then the same as mean ± sd
over seeds, the claims (on randomized layouts oracle ≥ tools > none; the tools−none gap smaller on the default
layout; GRPO raises TCR and TUI) with how many seeds each holds on, and the search failure share (the oracle-minus-tools
gap over the tools agent's failures). Last line: `key=value` means.

`--smollm2` trains the pretrained SmolLM2-135M-Instruct preset instead of the tiny one (`SMOLLM2_OVERRIDES`: a short
fine-tuning SFT and two GRPO steps, 28 minutes a seed on 2 cores; demonstrations that click by name, a prompt that
shows the last action): an agent that can copy a label it read.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from statistics import mean, stdev
from typing import Any

from _runs import parse_args, run_job

SMOLLM2_OVERRIDES = [
    "policy.model=smollm2-135m-instruct",
    # the engine generates while the learner waits (sync): both cores for its screen-and-page prompts
    "policy.backend_options.threads=2",
    "sft.steps=16",
    "sft.lr=0.00005",
    "learner.lr=0.00002",
    "learner.autocast=bf16",
    "trainer.steps=2",
    # clicks by name: the agent copies the label a page prints (`click_label`); with ids it could not ground it
    "env.task_kwargs.grounding=label",
    # a prompt with no history shows its last action: without it the agent re-clicked the menu it had just opened
    "policy.prompt.last_action=true",
]
"""`raygent run docos` overrides of the SmolLM2 preset (`--smollm2`)."""
KEYS = [(variant, layout) for layout in ("random", "default") for variant in ("none", "tools", "oracle", "reader")]


def _ms(values: list[float]) -> str:
    values = [v for v in values if v == v]
    if not values:
        return "nan"
    return f"{mean(values):.3f} ± {stdev(values):.3f}" if len(values) > 1 else f"{values[0]:.3f}"


def _get(summary: dict[str, Any], variant: str, layout: str, key: str = "tcr") -> float:
    return float(summary.get(f"all/{variant}/{layout}", {}).get(key, float("nan")))


def run_seed(seed: int, root: Path, overrides: list[str]) -> tuple[Path, float]:
    run_dir = root / f"seed{seed}"
    _, minutes = run_job("docos", [f"trainer.seed={seed}", *overrides], run_dir, "docos.json")
    return run_dir, minutes


def report(runs: list[tuple[Path, float]]) -> None:
    results = [json.loads((run_dir / "docos.json").read_text()) for run_dir, _ in runs]
    for (run_dir, minutes), result in zip(runs, results, strict=True):
        for stage in ("sft", "grpo"):
            s = result["summary"][stage]
            cells = " ".join(f"{v}/{lay}={_get(s, v, lay):.3f}" for v, lay in KEYS)
            tui = f"tui_found={_get(s, 'tools', 'random', 'tui_found'):.2f}"
            tui += f" tui_followed={_get(s, 'tools', 'random', 'tui_followed'):.2f}"
            print(f"seed {result['seed']} {stage}: TCR {cells} | tools/random {tui}", flush=True)
        print(
            f"seed {result['seed']}: {run_dir} in {minutes:.1f} min" if minutes else f"seed {result['seed']}: {run_dir}"
        )
    for stage in ("sft", "grpo"):
        for variant, layout in KEYS:
            values = [_get(r["summary"][stage], variant, layout) for r in results]
            print(f"{stage} TCR {variant}/{layout}: {_ms(values)}  (per seed {', '.join(f'{v:.3f}' for v in values)})")
        for key in ("tui_found", "tui_followed"):
            values = [_get(r["summary"][stage], "tools", "random", key) for r in results]
            print(f"{stage} {key} tools/random: {_ms(values)}")
        shares = [r["claims"][stage]["search_failure"]["share"] for r in results]
        gaps = [r["claims"][stage]["search_failure"]["gap"] for r in results]
        print(f"{stage} search failure: gap {_ms(gaps)}, share of tools failures {_ms(shares)}")
        for claim in ("oracle_ge_tools_gt_none_random", "gap_shrinks_on_default", "grpo_raises_tcr", "grpo_raises_tui"):
            held = [bool(r["claims"][stage][claim]) for r in results if claim in r["claims"][stage]]
            if held:
                print(f"{stage} {claim}: {sum(held)}/{len(held)} seeds")
    final = [r["summary"]["grpo"] for r in results]
    first = [r["summary"]["sft"] for r in results]
    walls = [m for _, m in runs if m]

    def avg(rows: list[dict[str, Any]], variant: str, layout: str, key: str = "tcr") -> float:
        values = [v for v in (_get(row, variant, layout, key) for row in rows) if v == v]
        return mean(values) if values else float("nan")

    print(
        f"tcr_none={avg(final, 'none', 'random'):.3f} tcr_tools={avg(final, 'tools', 'random'):.3f} "
        f"tcr_oracle={avg(final, 'oracle', 'random'):.3f} tcr_reader={avg(final, 'reader', 'random'):.3f} "
        f"tcr_tools_sft={avg(first, 'tools', 'random'):.3f} "
        f"tui_found={avg(final, 'tools', 'random', 'tui_found'):.3f} "
        f"gap_random={avg(final, 'tools', 'random') - avg(final, 'none', 'random'):.3f} "
        f"gap_default={avg(final, 'tools', 'default') - avg(final, 'none', 'default'):.3f} "
        f"minutes={mean(walls) if walls else float('nan'):.2f} seeds={len(results)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--keep", type=Path, default=None, help="keep the run directories here")
    parser.add_argument("--smollm2", action="store_true", help="the SmolLM2-135M-Instruct preset (SMOLLM2_OVERRIDES)")
    parser.add_argument("--runs", type=Path, nargs="+", default=None, help="aggregate these run directories")
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. trainer.steps=10")
    args = parse_args(parser)
    overrides = [*(SMOLLM2_OVERRIDES if args.smollm2 else []), *args.overrides]
    if args.runs:
        report([(run_dir, 0.0) for run_dir in args.runs])
        return
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        report([run_seed(seed, root, overrides) for seed in args.seeds])


if __name__ == "__main__":
    main()
