"""Samples per second of the async trainer against the sync one on a rollout-heavy setting.

ToolCalc with a simulated tool latency (`env.kwargs.tool_latency_s`, as a remote tool or a browser would have)
makes rollout dominate the step. The sync trainer waits for each batch before training; the async trainer keeps
`max_staleness + 1` batches in flight, so one batch's tool waits overlap another's generation and the learner's
update. Both runs train the same tiny model for the same number of steps on the embedded cluster.

    python bench/async_vs_sync.py [--steps 6] [--latency 0.3]

Last line: `sync_samples_per_s=… async_samples_per_s=… ratio=…` (target ratio ≥ 1.5).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import ray

from raygent.environments.toolcalc import corpus
from raygent.platform.rl import metrics as m
from raygent.platform.rl.settings import AgentRunConfig
from raygent.platform.rl.trainer import AgentTrainer
from raygent.policies.presets import build_tiny_model
from raygent.policies.tokenizer import build_tokenizer


def config(mode: str, steps: int, latency: float, staleness: int) -> AgentRunConfig:
    return AgentRunConfig.model_validate(
        {
            "env": {"kwargs": {"tool_latency_s": latency}, "task_kwargs": {"difficulty": 1}},
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
                "checkpoint_every": steps,
                "tensorboard": False,
            },
        }
    )


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
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--staleness", type=int, default=2)
    args = parser.parse_args()
    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    with tempfile.TemporaryDirectory() as directory:
        tokenizer = build_tokenizer(corpus(n_tasks=500), directory, vocab_size=400)
        model_dir = build_tiny_model("tiny-qwen2", tokenizer, directory, seed=0)
        sync = samples_per_s(model_dir, "sync", args.steps, args.latency, args.staleness)
        asynchronous = samples_per_s(model_dir, "async", args.steps, args.latency, args.staleness)
    ray.shutdown()
    print(f"sync_samples_per_s={sync:.2f} async_samples_per_s={asynchronous:.2f} ratio={asynchronous / sync:.2f}")


if __name__ == "__main__":
    main()
