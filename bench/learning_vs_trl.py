"""What a run learns: raygent's trainer against TRL's `GRPOTrainer` on one single-turn task, everything matched.

    python bench/learning_vs_trl.py [--seeds 0 1 2] [--steps 12] [--prompts 4] [--group 8] [--completion-tokens 16]
        [--temperature 1.0] [--lr 5e-5] [--eval-tasks 64] [--task NAME] [--keep DIR] [overrides ...]

The task is one of `TASKS` (default `add`: "What is 3 + 5?", reward 1 when the completion's last integer is the sum;
`environments/single_turn/examples.py`), on which SmolLM2-135M-Instruct starts inside 20-70 % held-out greedy
success (greedy zero-shot, 2026-12-07: 0.328 on 64 random pairs; 0.294 on the 17 held-out pairs once each).
Both sides train SmolLM2-135M-Instruct (`smollm2-135m-instruct`, the same converted directory) for `--steps`
optimizer steps, each on `--prompts` prompts × `--group` completions of at most `--completion-tokens` tokens sampled
at `--temperature` (no top-k/top-p), with group-normalized advantages, the clipped surrogate (ε = 0.2), token-mean
loss, no KL term, AdamW at `--lr` (constant, no warm-up), gradient clipping at 1.0, float32:

- raygent: `raygent run single_turn` in a fresh process (`bench/_runs.py`), the generic job with the task's
  `module:attr` entries, chat framing, sync mode, its own evaluation off (`trainer.eval_tasks=0`);
- TRL: `GRPOTrainer` (`bench/_trl.py`'s settings) in a fresh process (this file with `--trl-side`), on the same
  prompt text (raygent's chat-framed prompt through the chat template, checked to tokenize the same), the same
  prompts in the same order (step i trains on the tasks raygent's task stream gives batch i) and the same reward
  function.

Held-out greedy success (64 tasks of the held-out split, drawn from its 17 pairs, never trained on, with
`heldout_seed(seed)` as raygent's trainer draws them) is scored by one function, `greedy_success`, for the untrained
model and both trained ones: 16 greedy tokens through raygent's HF backend, success = the reward function's verdict.
Wall time (`*_s`) is each side's fresh process from start to exit (raygent: Ray start, actors, training,
checkpoints; TRL: imports, loading, training, saving), evaluation excluded on both sides. The sides alternate
(TRL, then raygent) per seed.

Per seed: `seed=S before=… ours_after=… trl_after=… ours_gain=… trl_gain=… ours_s=… trl_s=…`; then the gains'
population standard deviations and the time ratio; last line: `ours_gain=… trl_gain=… ours_s=… trl_s=…` (means over
seeds). Target (issue #41): ours_gain ≥ trl_gain within one standard deviation, at ours_s ≤ 0.75 × trl_s.
Measured 2026-12-07, 2 cores, seeds 0 1 2: `ours_gain=0.620 trl_gain=0.474 ours_s=148.3 trl_s=249.8` (gains
± 0.167 and ± 0.199; time ratio 0.59; docs/single-turn.md). Kept as the regression guard of the RL core: rerun it
after a change to the trainer, the learner, the engines or the sync.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import mean, pstdev
from typing import Any

from _runs import parse_args, run_job

MODEL = "smollm2-135m-instruct"
EXAMPLES = "raygent.environments.single_turn.examples"
TASKS = {
    "add": (f"{EXAMPLES}:one_digit_sum", f"{EXAMPLES}:last_number_is_answer"),
    "larger": (f"{EXAMPLES}:two_digit_larger", f"{EXAMPLES}:last_number_is_answer"),
}
"""Task name: (task function, reward function), both `module:attr`."""


def task_functions(name: str) -> tuple[Any, Any]:
    from raygent.platform.config import load_entry

    tasks, reward = TASKS[name]
    return load_entry(tasks), load_entry(reward)


def heldout_tasks(name: str, seed: int, n: int) -> list[Any]:
    """The held-out tasks raygent's trainer would evaluate for `trainer.seed=seed`."""
    from raygent.platform.rl.tasks import heldout_seed

    return task_functions(name)[0]("heldout", heldout_seed(seed), n)


def train_stream(name: str, seed: int, steps: int, prompts: int) -> list[Any]:
    """The training tasks of `steps` steps in order: batch i is what raygent's `StaticSource` gives batch i."""
    from raygent.platform.rl.tasks import batch_seed

    task_fn = task_functions(name)[0]
    return [task for index in range(steps) for task in task_fn("train", batch_seed(seed, index), prompts)]


def prompt_text(tokenizer: Any, instruction: str) -> str:
    """The prompt both sides see: the job's chat framing through the model's chat template (as `ChatLoop`)."""
    from raygent.jobs.single_turn.recipe import SingleTurnPolicySettings
    from raygent.policies.prompts import render_prompt

    return render_prompt(tokenizer, SingleTurnPolicySettings().prompt.messages(instruction, ""))


def greedy_success(model_dir: Path, name: str, tasks: list[Any], completion_tokens: int) -> float:
    """Held-out greedy success of the model in `model_dir`: the one scorer of both sides (module docstring)."""
    import torch

    from raygent.environments.single_turn import score
    from raygent.policies.backends import SamplingParams
    from raygent.policies.backends.hf import HFBackend

    torch.set_num_threads(2)
    backend = HFBackend.from_pretrained(model_dir, max_batch_size=len(tasks))
    ids = [
        backend.tokenizer.encode(prompt_text(backend.tokenizer, t.instruction), add_special_tokens=False) for t in tasks
    ]
    completions = backend.generate(ids, SamplingParams(temperature=0.0, max_new_tokens=completion_tokens))
    reward_fn = task_functions(name)[1]
    successes = [score(reward_fn, c.text, t)[1] for c, t in zip(completions, tasks, strict=True)]
    del backend
    gc.collect()
    return sum(successes) / len(successes)


def ours(seed: int, args: argparse.Namespace, run_dir: Path) -> tuple[Path, float]:
    """(final checkpoint, seconds) of `raygent run single_turn` with the matched settings."""
    tasks, reward = TASKS[args.task]
    batch = args.prompts * args.group
    overrides = [
        f"trainer.seed={seed}",
        f"single_turn.tasks={tasks}",
        f"single_turn.reward={reward}",
        f"policy.model={MODEL}",
        "policy.prompt.framing=chat",
        "rollout.num_workers=1",
        f"rollout.envs_per_worker={batch}",
        f"rollout.max_batch={batch}",
        f"rollout.groups_per_step={args.prompts}",
        f"rollout.group_size={args.group}",
        f"rollout.sampling.max_new_tokens={args.completion_tokens}",
        f"rollout.sampling.temperature={args.temperature}",
        "rollout.sampling.top_p=1.0",
        "rollout.sampling.top_k=0",
        f"learner.lr={args.lr}",
        "learner.grad_clip=1.0",
        "learner.loss.terms=[{name: grpo}]",  # the clipped surrogate alone: no KL
        "sft.steps=0",
        f"trainer.steps={args.steps}",
        "trainer.eval_tasks=0",  # scored by greedy_success, as TRL's side is
        "trainer.eval_every=0",
        f"trainer.checkpoint_every={args.steps}",
        "trainer.tensorboard=false",
        *args.overrides,
    ]
    _, minutes = run_job("single_turn", overrides, run_dir)
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in records if r.get("stage") == "grpo"]
    print("  ours: train reward per step " + " ".join(f"{r['rollout/reward']:.2f}" for r in steps), flush=True)
    parts = {key: sum(r[f"timing/{key}"] for r in steps) for key in ("generate", "learn", "sync")}
    print(
        f"  ours: steps {sum(parts.values()):.1f} s (" + ", ".join(f"{k} {v:.1f}" for k, v in parts.items()) + ")",
        flush=True,
    )
    return run_dir / "checkpoints" / "final", minutes * 60


def trl(seed: int, args: argparse.Namespace, out: Path) -> tuple[Path, float]:
    """(saved model, seconds) of the TRL side in a fresh process (this file with `--trl-side`)."""
    command = [
        sys.executable, __file__, "--trl-side", "--seeds", str(seed), "--out", str(out), "--task", args.task,
        "--steps", str(args.steps), "--prompts", str(args.prompts), "--group", str(args.group),
        "--completion-tokens", str(args.completion_tokens), "--temperature", str(args.temperature),
        "--lr", str(args.lr),
    ]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"the TRL side failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    for line in done.stdout.splitlines():
        if line.startswith("trl rewards"):
            print(f"  trl: train reward per step {line.removeprefix('trl rewards ')}", flush=True)
        if line.startswith("trl steps"):
            print(f"  trl: steps {line.removeprefix('trl steps ')} s", flush=True)
    return out / "final", seconds


def trl_side(args: argparse.Namespace) -> None:
    """Train with `GRPOTrainer` on the matched settings and save the model to `--out/final`."""
    from _trl import StepTimer, grpo_config, grpo_trainer, same_token_ids, trl_version
    from datasets import Dataset

    from raygent.environments.single_turn import score
    from raygent.platform.contracts import Task
    from raygent.policies.loading import load_tokenizer, resolve_model

    trl_version()
    seed = args.seeds[0]
    model_dir = resolve_model(MODEL)
    tokenizer = load_tokenizer(model_dir)
    tasks = train_stream(args.task, seed, args.steps, args.prompts)
    texts = [prompt_text(tokenizer, task.instruction) for task in tasks]
    same_token_ids(tokenizer, texts)
    reward_fn = task_functions(args.task)[1]

    def reward(completions: list[str], task: list[str], **_: Any) -> list[float]:
        return [score(reward_fn, c, Task.model_validate_json(t))[0] for c, t in zip(completions, task, strict=True)]

    config = grpo_config(
        args.out / "trl",
        prompts=args.prompts,
        group=args.group,
        completion_tokens=args.completion_tokens,
        lr=args.lr,
        steps=args.steps,
        seed=seed,
        temperature=args.temperature,
        shuffle=False,  # step i trains on raygent's batch i
    )
    dataset = Dataset.from_dict({"prompt": texts, "task": [task.model_dump_json() for task in tasks]})
    timer = StepTimer()
    trainer = grpo_trainer(model_dir, config, reward, dataset, [timer])
    trainer.train()
    steps = [log for log in trainer.state.log_history if "reward" in log]
    if len(steps) != args.steps:
        raise RuntimeError(f"TRL ran {len(steps)} optimizer steps, expected {args.steps}")
    print("trl rewards " + " ".join(f"{log['reward']:.2f}" for log in steps), flush=True)
    print(f"trl steps {sum(timer.times):.1f}", flush=True)
    trainer.save_model(str(args.out / "final"))
    tokenizer.save_pretrained(str(args.out / "final"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--task", choices=sorted(TASKS), default="add")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--prompts", type=int, default=4, help="prompts per step (raygent's groups_per_step)")
    parser.add_argument("--group", type=int, default=8, help="completions per prompt (TRL's num_generations)")
    parser.add_argument("--completion-tokens", type=int, default=16)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--eval-tasks", type=int, default=64)
    parser.add_argument("--keep", type=Path, default=None, help="keep the run directories and models here")
    parser.add_argument("--trl-side", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parse_args(parser)
    if args.trl_side:
        trl_side(args)
        return
    from _trl import trl_version

    from raygent.policies.loading import resolve_model

    print(f"trl {trl_version()}, task {args.task}, {args.steps} steps of {args.prompts} x {args.group}", flush=True)
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench_learning_") as scratch:
        root = args.keep or Path(scratch)
        for seed in args.seeds:
            held = heldout_tasks(args.task, seed, args.eval_tasks)
            before = greedy_success(resolve_model(MODEL), args.task, held, args.completion_tokens)
            trl_model, trl_s = trl(seed, args, root / f"trl{seed}")
            trl_after = greedy_success(trl_model, args.task, held, args.completion_tokens)
            our_model, ours_s = ours(seed, args, root / f"ours{seed}")
            ours_after = greedy_success(our_model, args.task, held, args.completion_tokens)
            row = {
                "seed": seed,
                "before": before,
                "ours_after": ours_after,
                "trl_after": trl_after,
                "ours_gain": ours_after - before,
                "trl_gain": trl_after - before,
                "ours_s": ours_s,
                "trl_s": trl_s,
            }
            rows.append(row)
            print(" ".join(f"{k}={v:.3f}" if k != "seed" else f"seed={v}" for k, v in row.items()), flush=True)
            if args.keep:
                (root / f"seed{seed}.json").write_text(json.dumps(row, indent=2))
    ours_gain, trl_gain = mean(r["ours_gain"] for r in rows), mean(r["trl_gain"] for r in rows)
    ours_s, trl_s = mean(r["ours_s"] for r in rows), mean(r["trl_s"] for r in rows)
    ours_sd, trl_sd = pstdev(r["ours_gain"] for r in rows), pstdev(r["trl_gain"] for r in rows)
    print(f"ours_gain_sd={ours_sd:.3f} trl_gain_sd={trl_sd:.3f} time_ratio={ours_s / trl_s:.2f} seeds={len(rows)}")
    print(f"ours_gain={ours_gain:.3f} trl_gain={trl_gain:.3f} ours_s={ours_s:.1f} trl_s={trl_s:.1f}")


if __name__ == "__main__":
    main()
