"""Samples per second of the async trainer against the sync one on a rollout-heavy setting.

ToolCalc with a simulated tool latency (`env.kwargs.tool_latency_s`, as a remote tool or a browser would have)
makes rollout dominate the step. The sync trainer waits for each batch before training; the async trainer keeps
`max_staleness + 1` batches in flight, so one batch's tool waits overlap another's generation and the learner's
update. Both runs train the same tiny model, first fine-tuned on `--sft-steps` of expert demonstrations (so it
calls the calculator and its groups carry reward variance, as a trained agent's do), for the same number of steps
on the embedded cluster.

    python bench/async_vs_sync.py [--steps 10] [--latency 0.3] [--sft-steps 100] [--staleness 1]

Last line: `sync_samples_per_s=… async_samples_per_s=… ratio=…` (target ratio ≥ 1.5).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import ray

from raygent.environments.toolcalc import corpus
from raygent.platform.rl import checkpoint as ckpt
from raygent.platform.rl import metrics as m
from raygent.platform.rl.settings import AgentRunConfig
from raygent.platform.rl.trainer import AgentTrainer
from raygent.policies.presets import build_tiny_model
from raygent.policies.tokenizer import build_tokenizer


def config(mode: str, steps: int, latency: float, staleness: int, sft_steps: int = 0) -> AgentRunConfig:
    return AgentRunConfig.model_validate(
        {
            "env": {
                "id": "raygent/ToolCalc-v0",
                "registration": "raygent.environments.toolcalc:register_envs",
                "tasks": "raygent.jobs.grpo_toy.tasks:toolcalc_tasks",
                "kwargs": {"tool_latency_s": latency},
                "task_kwargs": {"difficulty": 1},
                "demonstrations": "raygent.jobs.grpo_toy.tasks:toolcalc_demonstrations",
            },
            "sft": {"steps": sft_steps, "batch_tasks": 16, "lr": 1e-3},
            "rollout": {
                "num_workers": 2,
                "envs_per_worker": 16,
                "group_size": 4,
                "groups_per_step": 4,
                "max_turns": 4,
                "engine_num_cpus": 0,
                "sampling": {"temperature": 1.0, "max_new_tokens": 12},
            },
            "learner": {"num_cpus": 0},
            "trainer": {
                "mode": mode,
                "steps": steps,
                "max_staleness": staleness,
                "eval_tasks": 0,
                "checkpoint_every": max(steps, 1),
                "tensorboard": False,
            },
        }
    )


def supervised(model_dir: Path, run_dir: Path, sft_steps: int, latency: float) -> Path:
    """The tiny model after `sft_steps` of expert demonstrations: it calls the (slow) calculator, as a trained
    agent does, and its groups have reward variance, so the learner has work to overlap."""
    run_dir.mkdir(parents=True, exist_ok=True)
    trainer = AgentTrainer(config("sync", 0, latency, 0, sft_steps), run_dir, str(model_dir))
    try:
        trainer.run()
    finally:
        trainer.shutdown()
    return run_dir / ckpt.CHECKPOINTS / ckpt.FINAL


def samples_per_s(model_dir: Path, mode: str, steps: int, latency: float, staleness: int) -> float:
    with tempfile.TemporaryDirectory() as run_dir:
        trainer = AgentTrainer(config(mode, steps, latency, staleness), Path(run_dir), str(model_dir))
        try:
            start = time.perf_counter()
            trainer.run()
            wall = time.perf_counter() - start
            records = [r for r in m.MetricsLog(Path(run_dir), tensorboard=False).read() if r[m.STAGE] == "grpo"]
        finally:
            trainer.shutdown()
    samples = sum(r[m.SAMPLES] for r in records)
    print(f"{mode}: {samples:.0f} samples in {wall:.1f} s", flush=True)
    return samples / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--staleness", type=int, default=1)
    parser.add_argument("--sft-steps", type=int, default=100)
    args = parser.parse_args()
    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    with tempfile.TemporaryDirectory() as directory:
        tokenizer = build_tokenizer(corpus(n_tasks=500), directory, vocab_size=400)
        model_dir = build_tiny_model("tiny-qwen2", tokenizer, directory, seed=0)
        model_dir = supervised(model_dir, Path(directory) / "sft", args.sft_steps, args.latency)
        sync = samples_per_s(model_dir, "sync", args.steps, args.latency, args.staleness)
        asynchronous = samples_per_s(model_dir, "async", args.steps, args.latency, args.staleness)
    ray.shutdown()
    print(f"sync_samples_per_s={sync:.2f} async_samples_per_s={asynchronous:.2f} ratio={asynchronous / sync:.2f}")


if __name__ == "__main__":
    main()
