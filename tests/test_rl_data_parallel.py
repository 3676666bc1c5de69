"""Data-parallel learner updates over Ray Train's TorchTrainer: 2 gloo workers give one worker's update."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
import torch

from raygent.environments.toolcalc import corpus
from raygent.jobs.grpo_toy.tasks import toolcalc_demonstrations, toolcalc_tasks
from raygent.platform.losses.config import LossConfig
from raygent.platform.rl.batch import Sample, samples_from_demonstration
from raygent.platform.rl.data_parallel import data_parallel_update
from raygent.platform.rl.learner import Learner
from raygent.platform.rl.settings import LearnerSettings
from raygent.policies.loading import load_policy
from raygent.policies.presets import build_tiny_model
from raygent.policies.prompts import PromptFormat
from raygent.policies.tokenizer import build_tokenizer

pytestmark = pytest.mark.slow
torch.set_num_threads(1)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    directory = tmp_path_factory.mktemp("ddp")
    tokenizer = build_tokenizer(corpus(n_tasks=200), directory, vocab_size=300)
    build_tiny_model("tiny-llama", tokenizer, directory, seed=5)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield directory
    ray.shutdown()


def demonstration_samples(model_dir: Path) -> list[Sample]:
    _, tokenizer = load_policy(model_dir)
    tasks = toolcalc_tasks("train", 3, 5)
    return [
        s
        for task, turns in zip(tasks, toolcalc_demonstrations(tasks), strict=True)
        for s in samples_from_demonstration(tokenizer, PromptFormat(), task, turns)
    ]


@pytest.mark.parametrize("kind", ["sft", "grpo"])
def test_two_gloo_workers_make_the_same_update_as_one(model_dir: Path, tmp_path: Path, kind: str) -> None:
    samples = demonstration_samples(model_dir)
    if kind == "grpo":  # advantages of both signs, a few failure actions, uneven lengths across the shards
        samples = [
            Sample(
                s.prompt_ids,
                s.response_ids,
                tuple([-1.0] * len(s.response_ids)),
                (-1.0) ** i * (1 + i % 3),
                False,
                i % 4 == 0,
            )
            for i, s in enumerate(samples)
        ]
    loss = LossConfig(aggregation="seq-mean-token-mean", adversarial_imitation_coef=0.2)
    # Adam's first step is nearly lr·sign(g), which turns float noise in near-zero gradients into lr-sized
    # differences; a large eps makes the step proportional to the gradient, so the comparison is about gradients.
    settings = LearnerSettings(lr=1.0, adam_eps=1.0, grad_clip=None, micro_batch_tokens=400, loss=loss)
    single = Learner(str(model_dir), settings, seed=0)
    if kind == "sft":
        single.sft(samples)
    else:
        single.policy_update(samples)
    stats = data_parallel_update(kind, str(model_dir), samples, settings, tmp_path / "out", num_workers=2)  # type: ignore[arg-type]
    assert stats["world_size"] == 2
    parallel, _ = load_policy(tmp_path / "out")
    initial, _ = load_policy(model_dir)
    expected = single.model.state_dict()
    moved = 0
    for name, tensor in parallel.state_dict().items():
        torch.testing.assert_close(tensor, expected[name], atol=2e-5, rtol=1e-4, msg=name)
        moved += not torch.equal(tensor, initial.state_dict()[name])
    assert moved > 0, "the update changed the weights"
