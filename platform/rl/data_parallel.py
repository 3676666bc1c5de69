"""Data-parallel learner updates on Ray Train's `TorchTrainer`: the same `Learner` code on W workers, its model
wrapped in DDP by `ray.train.torch.prepare_model` (gloo on CPU, NCCL on GPUs).

The batch is prepared once on the driver — for GRPO, advantages are group statistics, so they are computed
before sharding — and each worker trains on every W-th sample with the whole batch's loss denominator divided
by W: DDP averages the W gradients, so the update equals one worker's update on the whole batch (the test checks
this to 1e-5). Rank 0 saves the updated checkpoint to `output_dir`, a loadable model directory.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from raygent.platform.rl.batch import Sample, denominator
from raygent.platform.rl.settings import LearnerSettings

STATS_FILE = "update_stats.json"


def _train_loop(config: dict[str, Any]) -> None:
    import ray.train
    import ray.train.torch
    import torch

    from raygent.platform.rl.learner import Learner

    torch.set_num_threads(1)
    context = ray.train.get_context()
    rank, world = context.get_world_rank(), context.get_world_size()
    learner = Learner(config["model_path"], config["settings"], seed=config["seed"])
    learner.wrapped = ray.train.torch.prepare_model(learner.model, move_to_device=False)
    shard = config["samples"][rank::world]
    if config["kind"] == "sft":
        stats = learner.sft(shard, total=config["total"] / world)
    else:
        failure_total = config["failure_total"] / world
        stats = learner.policy_update(shard, total=config["total"] / world, failure_total=failure_total)
    if rank == 0:
        learner.save(config["output_dir"])
        (Path(config["output_dir"]) / STATS_FILE).write_text(json.dumps({"world_size": world, **stats}))
    ray.train.report({"rank": rank})


def data_parallel_update(
    kind: Literal["sft", "grpo"],
    model_path: str,
    samples: Sequence[Sample],
    settings: LearnerSettings,
    output_dir: str | Path,
    num_workers: int = 2,
    seed: int = 0,
    use_gpu: bool = False,
) -> dict[str, Any]:
    """One learner update of `kind` on `samples` over `num_workers` Ray Train workers; returns rank 0's stats
    (also saved as `output_dir/update_stats.json`, with `world_size`).

    `grpo` samples carry their advantages (`batch.samples_from_trajectories`).
    """
    from ray.train import RunConfig, ScalingConfig
    from ray.train.torch import TorchConfig, TorchTrainer

    aggregation = "token-mean" if kind == "sft" else settings.loss.aggregation
    failures = [s for s in samples if s.failure]
    trainer = TorchTrainer(
        _train_loop,
        train_loop_config={
            "kind": kind,
            "model_path": model_path,
            "settings": settings,
            "samples": list(samples),
            "seed": seed,
            "total": denominator(samples, aggregation),
            "failure_total": denominator(failures, aggregation) if failures else 1.0,
            "output_dir": str(output_dir),
        },
        torch_config=TorchConfig(backend="nccl" if use_gpu else "gloo"),
        scaling_config=ScalingConfig(num_workers=num_workers, use_gpu=use_gpu),
        run_config=RunConfig(storage_path=str(Path(output_dir).parent / "ray_train"), name="update"),
    )
    trainer.fit()
    return dict(json.loads((Path(output_dir) / STATS_FILE).read_text()))
