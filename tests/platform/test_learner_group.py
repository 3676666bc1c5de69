"""The learner group on CPU (gloo): 2 workers make one worker's update (DDP and FSDP, SFT and a policy update with
several loss terms, an empty shard), LoRA trains only its adapters and sends merged weights, and a checkpoint
written by 2 workers resumes the same training. Replaces the Ray Train `data_parallel` test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
import torch
from torch import Tensor

from raygent.environments.toolcalc import corpus
from raygent.jobs.grpo_toy.tasks import toolcalc_demonstrations, toolcalc_tasks
from raygent.platform.losses.config import LossConfig
from raygent.platform.rl.batch import Sample, samples_from_demonstration
from raygent.platform.rl.distributed import LORA_MARK, merged_state
from raygent.platform.rl.learner import Learner, term_denominators
from raygent.platform.rl.learner_group import LearnerGroup
from raygent.platform.rl.settings import LearnerSettings, LoraSettings
from raygent.policies.loading import load_policy
from raygent.policies.presets import build_tiny_model
from raygent.policies.prompts import PromptFormat
from raygent.policies.tokenizer import build_tokenizer

pytestmark = [pytest.mark.ray, pytest.mark.slow]
torch.set_num_threads(1)

TERMS = [{"name": "grpo"}, {"name": "kl", "coef": 0.1}, {"name": "adversarial_imitation", "coef": 0.2}]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    directory = tmp_path_factory.mktemp("group")
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


def policy_samples(model_dir: Path) -> list[Sample]:
    """Advantages of both signs, some failure actions (adversarial imitation), uneven lengths across shards."""
    return [
        Sample(
            s.prompt_ids,
            s.response_ids,
            tuple([-1.0] * len(s.response_ids)),
            (-1.0) ** i * (1 + i % 3),
            False,
            i % 4 == 0,
        )
        for i, s in enumerate(demonstration_samples(model_dir))
    ]


def make_settings(**changes: object) -> LearnerSettings:
    # Adam's first step is nearly lr·sign(g), which turns float noise in near-zero gradients into lr-sized
    # differences; a large eps makes the step proportional to the gradient, so the comparison is about gradients.
    # A micro-batch budget that gives each rank several micro-batches, and a different count on each rank.
    base: dict[str, object] = dict(
        lr=1.0,
        adam_eps=1.0,
        grad_clip=5.0,
        micro_batch_tokens=300,
        num_cpus=0.0,
        threads=1,
        loss=LossConfig(aggregation="seq-mean-token-mean", terms=TERMS),
    )
    return LearnerSettings(**{**base, **changes})


def single_update(model_dir: Path, settings: LearnerSettings, kind: str, samples: list[Sample]) -> Learner:
    learner = Learner(str(model_dir), settings, seed=0)
    if kind == "sft":
        learner.sft(samples)
    else:
        counts = term_denominators(samples, learner.terms, settings.loss.aggregation)
        learner.policy_update(samples, counts)
    return learner


def group_update(group: LearnerGroup, kind: str, samples: list[Sample]) -> dict[str, float]:
    return group.sft(samples) if kind == "sft" else group.policy_update(samples)


def assert_same_weights(actual: dict[str, Tensor], expected: dict[str, Tensor], initial: dict[str, Tensor]) -> None:
    assert list(actual) == list(expected)
    moved = 0
    for name, tensor in actual.items():
        torch.testing.assert_close(tensor, expected[name], atol=1e-5, rtol=1e-5, msg=name)
        moved += not torch.equal(tensor, initial[name])
    assert moved > 0, "the update changed the weights"


@pytest.mark.parametrize("strategy", ["ddp", "fsdp"])
@pytest.mark.parametrize("kind", ["sft", "policy"])
def test_two_workers_make_the_same_update_as_one(model_dir: Path, strategy: str, kind: str) -> None:
    samples = demonstration_samples(model_dir) if kind == "sft" else policy_samples(model_dir)
    settings = make_settings(num_workers=2, strategy=strategy)
    single = single_update(model_dir, settings, kind, samples)
    initial = load_policy(model_dir)[0].state_dict()
    group = LearnerGroup(str(model_dir), settings)
    try:
        stats = group_update(group, kind, samples)
        assert_same_weights(ray.get(group.rank0.weights.remote()), single.weights(), initial)
        if kind == "policy":  # a second step: the optimizer's moments and the proximal pass agree too
            single.policy_update(samples, term_denominators(samples, single.terms, settings.loss.aggregation))
            group.policy_update(samples)
            assert_same_weights(ray.get(group.rank0.weights.remote()), single.weights(), initial)
            assert stats["learner/grad_norm"] > 0
        assert group.get_version() == single.version
        expected = single.evaluate_logprobs(samples[:3])
        for got, want in zip(group.evaluate_logprobs(samples[:3]), expected, strict=True):
            torch.testing.assert_close(torch.tensor(got), torch.tensor(want), atol=1e-5, rtol=1e-5)
    finally:
        group.shutdown()


@pytest.mark.parametrize("strategy", ["ddp", "fsdp"])
def test_an_empty_shard_does_not_deadlock(model_dir: Path, strategy: str) -> None:
    """One sample for two workers: rank 1 trains on nothing, yet joins every collective and steps in sync."""
    sample = policy_samples(model_dir)[1:2]
    settings = make_settings(num_workers=2, strategy=strategy)
    initial = load_policy(model_dir)[0].state_dict()
    single = single_update(model_dir, settings, "sft", sample)
    expected_stats = single.policy_update(sample, term_denominators(sample, single.terms, "seq-mean-token-mean"))
    group = LearnerGroup(str(model_dir), settings)
    try:
        group.sft(sample)
        stats = group.policy_update(sample)
        assert_same_weights(ray.get(group.rank0.weights.remote()), single.weights(), initial)
        assert stats.keys() == expected_stats.keys()
    finally:
        group.shutdown()


def test_lora_trains_only_the_adapters_and_syncs_only_them(model_dir: Path, tmp_path: Path) -> None:
    samples = policy_samples(model_dir)
    lora = LoraSettings(rank=4, alpha=8.0, target_modules=["q_proj", "v_proj"])
    settings = make_settings(num_workers=2, lora=lora)
    single = single_update(model_dir, settings, "policy", samples)
    plain = load_policy(model_dir)[0].state_dict()
    group = LearnerGroup(str(model_dir), settings)
    try:
        group.policy_update(samples)
        weights = ray.get(group.rank0.weights.remote())
        spec = ray.get(group.rank0.weight_spec.remote())
        checkpoint = Path(group.save(str(tmp_path / "ckpt")))
    finally:
        group.shutdown()
    # weight sync sends the adapters alone (adapter-only sync): lora_A (r×in) and lora_B (out×r) of each target
    assert list(weights) == list(plain)  # weights() is the merged plain model
    targets = [name.removesuffix(".weight") for name in plain if name.endswith(("q_proj.weight", "v_proj.weight"))]
    expected = [(f"{m}.lora_{ab}.default.weight", ab, plain[f"{m}.weight"].shape) for m in targets for ab in "AB"]
    assert sorted(name for name, _, _ in spec) == sorted(name for name, _, _ in expected)
    shapes = {name: tuple(shape) for name, shape, _ in spec}
    for name, ab, (out, inp) in expected:
        assert shapes[name] == ((4, inp) if ab == "A" else (out, 4)), name
    assert all(dtype == "float32" for _, _, dtype in spec)
    # only the adapted projections moved: every other weight is the base model's, bit for bit
    adapted = [name for name in plain if name.endswith(("q_proj.weight", "v_proj.weight"))]
    assert adapted
    for name, tensor in weights.items():
        if name in adapted:
            assert not torch.equal(tensor, plain[name]), name
        else:
            assert torch.equal(tensor, plain[name]), name
    # merged = base + (alpha / rank)·B·A, from the trained adapters; and 2 workers equal one
    state = single.model.state_dict()
    assert all(not p.requires_grad for n, p in single.model.named_parameters() if LORA_MARK not in n)
    for name in adapted:
        prefix = name.removesuffix(".weight")
        a, b = state[f"{prefix}.lora_A.default.weight"], state[f"{prefix}.lora_B.default.weight"]
        assert b.abs().sum() > 0, "B starts at zero and was trained"
        torch.testing.assert_close(weights[name], plain[name] + (8.0 / 4) * b @ a, atol=1e-6, rtol=1e-5)
    assert_same_weights(weights, merged_state(state, single.lora_scaling), plain)
    # the checkpoint is a loadable model directory with the merged weights
    loaded = load_policy(checkpoint)[0].state_dict()
    for name, tensor in weights.items():
        torch.testing.assert_close(loaded[name], tensor, atol=0, rtol=0, msg=name)


@pytest.mark.parametrize(
    ("strategy", "lora"),
    [("ddp", None), ("fsdp", None), ("ddp", LoraSettings(rank=4)), ("fsdp", LoraSettings(rank=4))],
    ids=["ddp", "fsdp", "ddp-lora", "fsdp-lora"],
)
def test_two_workers_resume_from_their_checkpoint(
    model_dir: Path, tmp_path: Path, strategy: str, lora: LoraSettings | None
) -> None:
    """Save after one update, restore into a fresh group (and into one learner): the next update is the
    uninterrupted run's."""
    samples = policy_samples(model_dir)
    settings = make_settings(num_workers=2, strategy=strategy, lora=lora, lr=0.05, adam_eps=1e-3)
    first = LearnerGroup(str(model_dir), settings, seed=3)
    try:
        first.policy_update(samples)
        first.save(str(tmp_path / "ckpt"))
        first.policy_update(samples)
        uninterrupted = ray.get(first.rank0.weights.remote())
    finally:
        first.shutdown()
    resumed = LearnerGroup(str(model_dir), settings, seed=11)
    try:
        assert resumed.restore(str(tmp_path / "ckpt")) == 1
        resumed.policy_update(samples)
        assert resumed.get_version() == 2
        initial = load_policy(model_dir)[0].state_dict()
        assert_same_weights(ray.get(resumed.rank0.weights.remote()), uninterrupted, initial)
    finally:
        resumed.shutdown()
    # the checkpoint does not depend on the world size: one learner resumes it too
    alone = Learner(str(model_dir), settings, seed=5)
    assert alone.restore(str(tmp_path / "ckpt")) == 1
    alone.policy_update(samples, term_denominators(samples, alone.terms, settings.loss.aggregation))
    assert_same_weights(alone.weights(), uninterrupted, initial)


def test_a_group_s_reference_becomes_the_saved_policy(model_dir: Path, tmp_path: Path) -> None:
    """When RL begins the trainer saves the policy model-only and makes it every rank's reference (rank 0 reads
    and broadcasts): the next update then starts at KL 0 on every rank."""
    samples = policy_samples(model_dir)
    group = LearnerGroup(str(model_dir), make_settings(num_workers=2, strategy="fsdp", lr=0.05), seed=3)
    try:
        assert group.policy_update(samples)["learner/kl/kl_ref"] == 0.0
        assert group.policy_update(samples)["learner/kl/kl_ref"] > 1e-4
        group.save(str(tmp_path / "reference"), model_only=True)
        assert not (tmp_path / "reference" / "optimizer.pt").exists()
        assert group.set_reference(str(tmp_path / "reference"))
        assert group.policy_update(samples)["learner/kl/kl_ref"] < 1e-6
    finally:
        group.shutdown()
