"""ReasonAug's claims over seeds: the ReID model's held-out mAP and Rank-1 after the loop, per variant.

    python bench/reasonaug.py [--seeds 0 1 2] [--variants closed open random none nogate] [--out DIR] [overrides ...]

Per seed, one `raygent run reasonaug trainer.steps=0` process makes the SFT policy (the heuristic writer imitated);
then each variant is one `raygent run reasonaug reasonaug.variant=V policy.model=<that SFT policy> sft.steps=0`
process, so every variant starts from the same policy, the same ReID model (round 0) and the same judge, and runs
the same loop (`jobs/reasonaug/recipe.py`): `closed` (GRPO on MAGR, ReID retrained on gated edits), `open` (the SFT
policy's fixed instruction distribution), `random` (uniform identity-preserving edits), `none` (no edit accepted),
`nogate` (closed with the identity gate off). `trainer.seed` and `env.task_kwargs.world_seed` are the seed.
With `--out`, finished runs (their `reasonaug.json`) are kept and not rerun, so seeds can run in separate calls.

Claims (issue 21): mAP closed > open > random >= none; nogate accepts identity-changing edits and its mAP falls
below closed. Last line: `key=value` means over seeds of each variant's final mAP, and the minutes a run took.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import mean, pstdev

from _runs import parse_args

VARIANTS = ("closed", "open", "random", "none", "nogate")
KEYS = ("map_after", "rank1_after", "accepted", "pool_identity_changed", "identity_changed_last", "hard_last")


def run(args: list[str], run_dir: Path, log: Path) -> float:
    """Minutes of one `raygent run reasonaug` process (exits the bench if it fails)."""
    start = time.perf_counter()
    command = [sys.executable, "-m", "raygent.platform.cli", "run", "reasonaug", *args, "--out", str(run_dir)]
    done = subprocess.run(command, capture_output=True, text=True)
    log.write_text(done.stdout + "\n" + done.stderr)
    if done.returncode != 0:
        sys.exit(f"{run_dir} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return (time.perf_counter() - start) / 60


def spread(values: list[float]) -> str:
    return f"{mean(values):.3f} ± {pstdev(values):.3f}" if values else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--out", type=Path, default=None, help="keep runs here (finished ones are not rerun)")
    parser.add_argument("overrides", nargs="*", help="config overrides for every run, e.g. trainer.steps=16")
    args = parse_args(parser)
    root = args.out or Path(tempfile.mkdtemp(prefix="reasonaug-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    minutes: dict[str, list[float]] = {}
    for seed in args.seeds:
        common = [f"trainer.seed={seed}", f"env.task_kwargs.world_seed={seed}", *args.overrides]
        sft = root / f"seed{seed}" / "sft"
        if not (sft / "checkpoints" / "final" / "config.json").exists():
            minutes.setdefault("sft", []).append(run([*common, "trainer.steps=0"], sft, root / f"seed{seed}-sft.log"))
        policy = sft / "checkpoints" / "final"
        for variant in args.variants:
            run_dir = root / f"seed{seed}" / variant
            if (run_dir / "reasonaug.json").exists():
                continue
            wall = run(
                [*common, f"reasonaug.variant={variant}", f"policy.model={policy}", "sft.steps=0"],
                run_dir,
                root / f"seed{seed}-{variant}.log",
            )
            minutes.setdefault(variant, []).append(wall)
            result = json.loads((run_dir / "reasonaug.json").read_text())
            result["minutes"] = wall
            (run_dir / "bench.json").write_text(json.dumps(result, indent=2))
            print(
                f"seed {seed} {variant}: mAP {result['map_before']:.3f} -> {result['map_after']:.3f}, "
                f"Rank-1 {result['rank1_before']:.3f} -> {result['rank1_after']:.3f} ({wall:.1f} min)",
                flush=True,
            )
    table: dict[str, list[dict]] = {}
    for variant in args.variants:
        for seed in args.seeds:
            path = root / f"seed{seed}" / variant / "reasonaug.json"
            if path.exists():
                result = json.loads(path.read_text())
                bench = root / f"seed{seed}" / variant / "bench.json"
                result["minutes"] = json.loads(bench.read_text()).get("minutes") if bench.exists() else None
                table.setdefault(variant, []).append(result)
    print(
        f"\nruns in {root}; round-0 mAP (shared by the variants of a seed): "
        + ", ".join(f"seed {r['seed']} {r['map_before']:.3f}" for r in table.get(args.variants[0], []))
    )
    print("variant  | " + " | ".join(KEYS) + " | per-seed mAP")
    for variant, results in table.items():
        cells = [spread([float(r[k]) for r in results]) for k in KEYS]
        per_seed = " ".join(f"{r['map_after']:.3f}" for r in results)
        print(f"{variant:8s} | " + " | ".join(cells) + f" | {per_seed}")
    means = {f"map_{v}": mean(float(r["map_after"]) for r in rs) for v, rs in table.items()}
    walls = [r["minutes"] for rs in table.values() for r in rs if r.get("minutes")]
    summary = {**{k: f"{v:.4f}" for k, v in means.items()}, "minutes_per_run": f"{mean(walls):.2f}" if walls else "nan"}
    print(" ".join(f"{k}={v}" for k, v in summary.items()))


if __name__ == "__main__":
    main()
