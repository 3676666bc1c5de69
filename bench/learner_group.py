"""The learner group's cost and memory: one learner against 2 workers with DDP, FSDP and DDP + LoRA.

Each setting starts a `LearnerGroup` on the embedded cluster, trains the same policy batch (ToolCalc expert
demonstrations with advantages of both signs; grpo + kl terms, so a reference model is loaded) for `--updates`
steps after one warm-up step, and reports the median update time, the time to fetch rank 0's weights (what
object-store weight sync does), and what one rank holds: parameters, gradients, AdamW state and the reference
model (FSDP shards all four; LoRA keeps gradients and optimizer state for the adapters only). Every learner runs
one torch thread, so two workers use two cores where one learner uses one; on a shared laptop the times are
noisy, the bytes are exact.

Measured 2026-12-02 (small-llama, 28.5 M parameters, 32 samples / 5811 tokens, 2 shared cores): one learner
18.7 s an update and 543.6 MiB; DDP×2 12.8 s, 543.6 MiB a rank; FSDP×2 12.9 s, 272.2 MiB a rank (0.501);
DDP×2 + LoRA r=8 9.5 s, 221.4 MiB a rank (0.407: frozen base and reference, adapters' gradients and moments).

    python bench/learner_group.py [--preset small-llama] [--updates 3] [--samples 32]

Last line: `one_s=… ddp2_s=… fsdp2_s=… lora2_s=… fsdp2_bytes_ratio=… lora2_bytes_ratio=…` (a rank's bytes over
one learner's).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import ray
import torch

from raygent.environments.toolcalc import corpus
from raygent.jobs.grpo_toy.tasks import toolcalc_demonstrations, toolcalc_tasks
from raygent.platform.losses.config import LossConfig
from raygent.platform.rl.batch import Sample, samples_from_demonstration
from raygent.platform.rl.learner_group import LearnerGroup
from raygent.platform.rl.settings import LearnerSettings, LoraSettings
from raygent.policies.loading import load_policy
from raygent.policies.presets import build_tiny_model
from raygent.policies.prompts import PromptFormat
from raygent.policies.tokenizer import build_tokenizer

SETTINGS: dict[str, dict[str, Any]] = {
    "one": {"num_workers": 1},
    "ddp2": {"num_workers": 2, "strategy": "ddp"},
    "fsdp2": {"num_workers": 2, "strategy": "fsdp"},
    "lora2": {"num_workers": 2, "strategy": "ddp", "lora": LoraSettings(rank=8)},
}


def policy_batch(model_dir: Path, count: int) -> list[Sample]:
    _, tokenizer = load_policy(model_dir)
    tasks = toolcalc_tasks("train", 3, count)
    samples = [
        s
        for task, turns in zip(tasks, toolcalc_demonstrations(tasks), strict=True)
        for s in samples_from_demonstration(tokenizer, PromptFormat(), task, turns)
    ][:count]
    return [
        Sample(s.prompt_ids, s.response_ids, tuple([-1.0] * len(s.response_ids)), (-1.0) ** i * (1 + i % 3))
        for i, s in enumerate(samples)
    ]


def measure(name: str, model_dir: Path, samples: list[Sample], updates: int) -> dict[str, float]:
    loss = LossConfig(terms=({"name": "grpo"}, {"name": "kl", "coef": 0.04}))
    settings = LearnerSettings(lr=1e-5, num_cpus=0, threads=1, loss=loss, **SETTINGS[name])
    start = time.perf_counter()
    group = LearnerGroup(str(model_dir), settings)
    started = time.perf_counter() - start
    try:
        group.policy_update(samples)  # warm-up
        times = []
        for _ in range(updates):
            start = time.perf_counter()
            group.policy_update(samples)
            times.append(time.perf_counter() - start)
        start = time.perf_counter()
        ray.get(group.rank0.weights.remote())
        fetch = time.perf_counter() - start
        held = ray.get(group.rank0.state_bytes.remote())
    finally:
        group.shutdown()
    total = float(sum(held.values()))
    print(
        f"{name:>6}: start {started:5.1f} s  update {statistics.median(times):6.2f} s  weights {fetch:5.2f} s  "
        + "  ".join(f"{key} {value / 2**20:6.1f} MiB" for key, value in held.items())
        + f"  total {total / 2**20:6.1f} MiB",
        flush=True,
    )
    return {"update_s": statistics.median(times), "bytes": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="small-llama")
    parser.add_argument("--updates", type=int, default=3)
    parser.add_argument("--samples", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(tmp) / "model"
        tokenizer = build_tokenizer(corpus(n_tasks=500), model_dir, vocab_size=512)
        build_tiny_model(args.preset, tokenizer, model_dir, seed=0)
        parameters = sum(p.numel() for p in load_policy(model_dir)[0].parameters())
        samples = policy_batch(model_dir, args.samples)
        tokens = sum(s.length for s in samples)
        print(f"{args.preset}: {parameters / 1e6:.1f} M parameters; batch {len(samples)} samples, {tokens} tokens")
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            results = {name: measure(name, model_dir, samples, args.updates) for name in SETTINGS}
        finally:
            ray.shutdown()
    one = results["one"]
    print(
        " ".join(f"{name}_s={r['update_s']:.2f}" for name, r in results.items())
        + f" fsdp2_bytes_ratio={results['fsdp2']['bytes'] / one['bytes']:.3f}"
        + f" lora2_bytes_ratio={results['lora2']['bytes'] / one['bytes']:.3f}"
    )


if __name__ == "__main__":
    main()
