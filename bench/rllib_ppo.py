"""RLlib PPO (new API stack) on one web app's atomic tasks through the discrete wrapper: the success curve.

    python bench/rllib_ppo.py [--app code_editor] [--iterations 25] [--env-runners 2] [--batch 256]
                              [--minibatch 64] [--epochs 8] [--lr 1e-3] [--max-steps 6] [--policy elements|flat]
                              [--verbs click [left_double right_single]]
                              [--ui-seed 0] [--templates open_file word_wrap ...] [--seed 0] [--max-minutes M]
                              [--free-browsers] [--env-factory module:attr] [--out curve.json]

The environment is `"raygent-web-discrete"` (`jobs/web_agent/rllib.py`, registered with `register_env`) over
`BrowserEnv`; each env runner is a Ray actor with its own Chromium. An iteration samples `--batch` steps and
runs PPO's update (`--policy elements`: one MLP shared across element slots; `flat`: RLlib's MLP over the
whole feature vector); its success rate is the share of the episodes that ended in that iteration whose
task validated (`WebSuccessCallback`). The first iteration samples with the untrained policy, so
`first_success` is close to a masked random agent's rate. Default app: the code editor, whose atomic tasks
ground best in this encoding (file names and menu labels that occur in the instruction; every atomic
template fits the action space, see `tests/jobs/test_web_rllib.py`).

`--env-factory module:attr` trains on whatever that factory builds from the env config (another registered app,
an external benchmark's pages; `make_discrete_env`'s `factory` key); the module must be importable in every
env runner (an installed package).

One line per iteration, then each template's solved share in the first and second half of the run, then the
last line: `iterations=… first_success=… last_success=… best_success=…`.

What to expect on 2 shared cores (resets dominate sampling; measured while other jobs loaded the machine):

- The full default run (all 7 atomic templates, 256 steps an iteration, 25 iterations: about 40 minutes)
  went from 0.09 to 0.28 (best 0.31): `open_file` (click the named file) from 0.73 to 1.00 solved and
  `word_wrap` (a menu, then its item) from 0.04 to 0.87 between the run's halves; the 3–5-action templates
  (a file, a menu, a menu item, a dialog field) stayed unsolved: a random policy almost never reaches them.
- A 10-minute run, `--templates open_file word_wrap run_file --batch 128 --max-steps 5 --iterations 40
  --max-minutes 9`: 11 iterations, success 0.08, 0.21, 0.04, 0.11, 0.15, 0.18, 0.31, 0.39, 0.46, 0.23, 0.26
  (`open_file` 0.41 -> 1.00 between the halves, `word_wrap` 0.00 -> 0.08, `run_file` 0 -> 0).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import ray

from raygent.jobs.web_agent.rllib import (
    EPISODE_RETURN_MEAN,
    EPISODES_DONE,
    EPISODES_INFRA_FAILED,
    metric,
    ppo_config,
    success_rate,
    template_counts,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", default="code_editor")
    parser.add_argument("--iterations", type=int, default=25)
    parser.add_argument("--env-runners", type=int, default=2)
    parser.add_argument("--batch", type=int, default=256, help="env steps per iteration")
    parser.add_argument("--minibatch", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--entropy", type=float, default=0.01)
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument("--policy", choices=("elements", "flat"), default="elements")
    parser.add_argument("--verbs", nargs="+", default=["click"], help="element action types (atomic tasks: click)")
    parser.add_argument("--hidden", type=int, nargs="+", default=None, help="layers (elements: 64 64; flat: 128 128)")
    parser.add_argument("--ui-seed", type=int, default=0, help="menu layout seed; -1 draws one per episode")
    parser.add_argument("--templates", nargs="*", default=None, help="restrict to these atomic templates")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-minutes", type=float, default=None, help="stop after the iteration that passes this")
    parser.add_argument("--num-cpus", type=int, default=2)
    parser.add_argument(
        "--free-browsers", action="store_true", help="leave env runners' browsers unpinned (default: a core each)"
    )
    parser.add_argument("--env-factory", default=None, help="module:attr building each runner's environment")
    parser.add_argument("--out", type=Path, default=None, help="write the curve as JSON here")
    args = parser.parse_args()

    ray.init(address="local", num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    config = ppo_config(
        args.app,
        templates=args.templates,
        ui_seed=None if args.ui_seed < 0 else args.ui_seed,
        max_steps=args.max_steps,
        num_env_runners=args.env_runners,
        train_batch_size=args.batch,
        minibatch_size=args.minibatch,
        num_epochs=args.epochs,
        lr=args.lr,
        entropy_coeff=args.entropy,
        policy=args.policy,
        hidden=args.hidden,
        verbs=args.verbs,
        seed=args.seed,
        env_overrides={"cpus": None} if args.free_browsers else None,
        env_factory=args.env_factory,
    )
    start = time.perf_counter()
    algo = config.build_algo()
    print(f"built PPO in {time.perf_counter() - start:.0f} s ({args.app}, atomic tasks, {args.policy})", flush=True)
    curve: list[dict[str, float | None]] = []
    per_template: dict[str, dict[int, tuple[int, int]]] = {}
    try:
        for iteration in range(1, args.iterations + 1):
            result = algo.train()
            point = {
                "iteration": iteration,
                "success": success_rate(result),
                "episodes": metric(result, f"env_runners/{EPISODES_DONE}"),
                "infra_failures": metric(result, f"env_runners/{EPISODES_INFRA_FAILED}"),
                "return_mean": metric(result, EPISODE_RETURN_MEAN),
                "len_mean": metric(result, "env_runners/episode_len_mean"),
                "steps": metric(result, "env_runners/num_env_steps_sampled_lifetime"),
                "minutes": (time.perf_counter() - start) / 60,
            }
            point = {key: (float(value) if value is not None else None) for key, value in point.items()}
            curve.append(point)
            print(" ".join(f"{key}={_fmt(value)}" for key, value in point.items()), flush=True)
            for name, (episodes, solved) in template_counts(result).items():
                totals = per_template.setdefault(name, {})
                totals[iteration] = (episodes, solved)
            if args.max_minutes is not None and point["minutes"] is not None and point["minutes"] >= args.max_minutes:
                print(f"stopping: {point['minutes']:.1f} minutes >= --max-minutes {args.max_minutes}", flush=True)
                break
    finally:
        algo.stop()
        ray.shutdown()
    half = len(curve) // 2
    for name, by_iteration in per_template.items():
        early = [by_iteration.get(i, (0, 0)) for i in range(1, half + 1)]
        late = [by_iteration.get(i, (0, 0)) for i in range(half + 1, len(curve) + 1)]
        print(f"template {name}: first half {_share(early)}, second half {_share(late)}")
    if args.out is not None:
        record = {"args": {k: str(v) for k, v in vars(args).items()}, "curve": curve, "templates": per_template}
        args.out.write_text(json.dumps(record))
    rates = [p["success"] for p in curve if p["success"] is not None]
    print(
        f"iterations={len(curve)} first_success={_fmt(rates[0] if rates else None)} "
        f"last_success={_fmt(rates[-1] if rates else None)} best_success={_fmt(max(rates) if rates else None)}"
    )


def _share(counts: list[tuple[int, int]]) -> str:
    episodes, solved = sum(c[0] for c in counts), sum(c[1] for c in counts)
    return f"{solved}/{episodes} solved" + (f" ({solved / episodes:.2f})" if episodes else "")


def _fmt(value: float | None) -> str:
    if value is None:
        return "none"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.3f}"


if __name__ == "__main__":
    main()
