"""The RL core's actors on an embedded Ray cluster: engine batching and weight updates, both weight-sync paths,
a rollout worker killed mid-batch, and the async trainer's bounded staleness."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
import torch

from raygent.environments.toolcalc import corpus
from raygent.jobs.grpo_toy.tasks import toolcalc_tasks
from raygent.platform.rl import metrics as m
from raygent.platform.rl.batch import Sample
from raygent.platform.rl.distributed import lora_spec
from raygent.platform.rl.engine import start_engines
from raygent.platform.rl.learner import Learner
from raygent.platform.rl.settings import AgentRunConfig
from raygent.platform.rl.trainer import AgentTrainer
from raygent.platform.rl.weight_sync import CollectiveSync, ObjectStoreSync
from raygent.policies.backends.base import SamplingParams
from raygent.policies.loading import load_policy
from raygent.policies.presets import build_tiny_model
from raygent.policies.tokenizer import build_tokenizer

pytestmark = [pytest.mark.slow, pytest.mark.ray]

GREEDY = SamplingParams(temperature=0.0, max_new_tokens=12)


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


TOOLCALC = {
    "id": "raygent/ToolCalc-v0",
    "registration": "raygent.environments.toolcalc:register_envs",
    "tasks": "raygent.jobs.grpo_toy.tasks:toolcalc_tasks",
    "task_kwargs": {"difficulty": 1},
}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("rl-ray")
    tokenizer = build_tokenizer(corpus(n_tasks=300), directory, vocab_size=320)
    return build_tiny_model("tiny-qwen2", tokenizer, directory, seed=4)


def small_config(**sections: dict) -> AgentRunConfig:
    base: dict = {
        "env": TOOLCALC,
        "rollout": {
            "num_workers": 2,
            "envs_per_worker": 4,
            "group_size": 2,
            "groups_per_step": 2,
            "max_turns": 2,
            "engine_num_cpus": 0,
            "sampling": {"temperature": 1.0, "max_new_tokens": 8},
            "eval_sampling": {"temperature": 0.0, "max_new_tokens": 8},
        },
        "learner": {"num_cpus": 0, "lr": 1e-3},
        "trainer": {"steps": 3, "eval_tasks": 0, "tensorboard": False},
    }
    for name, values in sections.items():
        base[name] = {**base.get(name, {}), **values}
    return AgentRunConfig.model_validate(base)


def test_engine_batches_concurrent_requests_and_takes_new_weights(cluster: None, model_dir: Path) -> None:
    (engine,) = start_engines(1, "hf", str(model_dir), num_cpus=0)
    prompts = [[5, 6, 7, 8], [9, 10, 11]]
    before = ray.get([engine.generate.remote(prompts, GREEDY) for _ in range(8)])
    stats = ray.get(engine.get_stats.remote())
    assert stats["requests"] == 8 and stats["prompts"] == 16
    assert stats["calls"] < 8, "requests that arrived while the backend was busy were served in one batch"
    for batch in before:  # batching with other requests does not change greedy outputs (up to float noise)
        assert [c.response_ids for c in batch] == [c.response_ids for c in before[0]]
        for completion, first in zip(batch, before[0], strict=True):
            assert completion.logprobs == pytest.approx(first.logprobs, abs=1e-4)
    assert {c.policy_version for c in before[0]} == {0}

    learner = Learner(str(model_dir), small_config().learner)
    learner.reset_optimizer(5e-2)
    learner.sft(_samples(before[0]))
    assert ray.get(engine.load_weights.remote(learner.weights(), 7)) == 7
    after = ray.get(engine.generate.remote(prompts, GREEDY))
    assert {c.policy_version for c in after} == {7}
    assert [c.response_ids for c in after] != [c.response_ids for c in before[0]]
    ray.kill(engine)


def _samples(completions: list) -> list[Sample]:
    """Training samples that teach the reversed responses (any change of weights will do)."""
    return [Sample(tuple(c.prompt_ids), tuple(reversed(c.response_ids)) or (1,)) for c in completions]


@pytest.mark.parametrize("sync", [ObjectStoreSync(), CollectiveSync(backend="gloo", group_name="test-weights")])
def test_weight_sync_delivers_the_learners_weights(cluster: None, model_dir: Path, sync: object) -> None:
    engines = start_engines(2, "hf", str(model_dir), num_cpus=0)
    learner = ray.remote(Learner).options(num_cpus=0).remote(str(model_dir), small_config().learner)
    ray.get(learner.reset_optimizer.remote(5e-2))
    prompt = [[5, 6, 7, 8, 9]]
    (old,) = ray.get(engines[0].generate.remote(prompt, GREEDY))
    ray.get(learner.sft.remote(_samples([old])))
    (moved,) = ray.get(learner.evaluate_logprobs.remote([Sample(tuple(old.prompt_ids), tuple(old.response_ids))]))
    assert moved != pytest.approx(old.logprobs, abs=1e-3), "the update changed the learner's weights"
    assert sync.push(learner, engines, version=3) > 0  # type: ignore[attr-defined]
    for engine in engines:
        (new,) = ray.get(engine.generate.remote(prompt, GREEDY))
        assert new.policy_version == 3
        sample = Sample(tuple(new.prompt_ids), tuple(new.response_ids))
        (expected,) = ray.get(learner.evaluate_logprobs.remote([sample]))
        assert new.logprobs == pytest.approx(expected, abs=1e-4), "the engine scores tokens as the learner does"
    for actor in [*engines, learner]:
        ray.kill(actor)


LORA = {"rank": 4, "alpha": 8.0, "target_modules": ["q_proj", "v_proj"]}


@pytest.mark.parametrize(
    "sync",
    [ObjectStoreSync(), CollectiveSync(backend="gloo", group_name="test-adapters")],
    ids=["object_store", "gloo"],
)
def test_adapter_only_sync_sends_the_adapters_and_the_engines_generate_with_them(
    cluster: None, model_dir: Path, sync: object
) -> None:
    """With `learner.lora` each engine actor receives lora_A and lora_B of every target module and nothing else
    (count and bytes, as the engine counted them), and its next generation is scored as the learner scores it."""
    settings = small_config(learner={"lora": LORA}).learner
    assert settings.lora is not None
    engines = start_engines(2, "hf", str(model_dir), {"lora": lora_spec(settings.lora).model_dump()}, num_cpus=0)
    learner = ray.remote(Learner).options(num_cpus=0).remote(str(model_dir), settings)
    ray.get(learner.reset_optimizer.remote(5e-2))
    prompt = [[5, 6, 7, 8, 9]]
    (old,) = ray.get(engines[0].generate.remote(prompt, GREEDY))
    for _ in range(2):
        ray.get(learner.sft.remote(_samples([old])))
    plain = load_policy(model_dir)[0].state_dict()
    targets = [n.removesuffix(".weight") for n in plain if n.endswith(("q_proj.weight", "v_proj.weight"))]
    expected = {f"{m}.lora_{ab}.default.weight" for m in targets for ab in "AB"}
    expected_bytes = sum(4 * 4 * sum(plain[f"{m}.weight"].shape) for m in targets)  # float32, rank 4: r·(in+out)
    assert {name for name, _, _ in ray.get(learner.weight_spec.remote())} == expected
    assert sync.push(learner, engines, version=3) > 0  # type: ignore[attr-defined]
    for engine in engines:
        stats = ray.get(engine.get_stats.remote())
        assert stats["load_tensors"] == len(expected) == 2 * len(targets)
        assert stats["load_bytes"] == expected_bytes < sum(t.numel() * 4 for t in plain.values()) / 10
        (new,) = ray.get(engine.generate.remote(prompt, GREEDY))
        assert new.policy_version == 3
        sample = Sample(tuple(new.prompt_ids), tuple(new.response_ids))
        (expected_logprobs,) = ray.get(learner.evaluate_logprobs.remote([sample]))
        assert new.logprobs == pytest.approx(expected_logprobs, abs=1e-4), "the engine scores as the learner does"
        assert new.response_ids != old.response_ids or new.logprobs != pytest.approx(old.logprobs, abs=1e-3)
    for actor in [*engines, learner]:
        ray.kill(actor)


def test_a_lora_run_syncs_adapters_only_and_its_resume_restores_each_one(
    cluster: None, model_dir: Path, tmp_path: Path
) -> None:
    """A LoRA run: the trainer starts the engines with the learner's adapters and every push carries only them; a
    resumed run restores each adapter into the learner and pushes it to its fresh engines, which then generate
    what the first run's engines generated."""
    config = small_config(
        env={"demonstrations": "raygent.jobs.grpo_toy.tasks:toolcalc_demonstrations"},
        learner={"lora": LORA, "lr": 5e-2},
        sft={"steps": 1, "batch_tasks": 2, "lr": 5e-2},  # the adapters move off zero whatever the rewards
        trainer={"steps": 2, "checkpoint_every": 1, "eval_tasks": 0},
    )
    prompt = [[5, 6, 7, 8, 9], [10, 11, 12]]
    trainer = AgentTrainer(config, tmp_path, str(model_dir))
    try:
        trainer.run()
        spec = ray.get(trainer.learner.rank0.weight_spec.remote())
        stats = ray.get(trainer.engines[0].get_stats.remote())
        trained = ray.get(trainer.learner.rank0.sync_weights.remote())
        generated = ray.get(trainer.engines[0].generate.remote(prompt, GREEDY))
        version = trainer.version
    finally:
        trainer.shutdown()
    assert spec and all(".lora_" in name for name, _, _ in spec)
    assert stats["load_tensors"] == len(spec) and stats["version"] == version > 0
    assert any(bool(t.abs().sum() > 0) for n, t in trained.items() if ".lora_B." in n), "the adapters trained"
    resumed = AgentTrainer(config, tmp_path, str(model_dir))
    try:
        resumed.run(resume=True)
        restored = ray.get(resumed.learner.rank0.sync_weights.remote())
        again = ray.get(resumed.engines[0].generate.remote(prompt, GREEDY))
        stats = ray.get(resumed.engines[0].get_stats.remote())
    finally:
        resumed.shutdown()
    assert list(restored) == list(trained)
    for name, tensor in trained.items():
        assert torch.equal(restored[name], tensor), name
    assert stats["versions"][0] == version and stats["load_tensors"] == len(spec)
    assert [c.response_ids for c in again] == [c.response_ids for c in generated]
    for first, second in zip(generated, again, strict=True):
        assert second.logprobs == pytest.approx(first.logprobs, abs=1e-5)


def test_a_killed_rollout_worker_is_restarted_and_its_batch_resubmitted(
    cluster: None, model_dir: Path, tmp_path: Path
) -> None:
    trainer = AgentTrainer(small_config(), tmp_path, str(model_dir))
    try:
        tasks = toolcalc_tasks("train", 0, 2, difficulty=1)
        batch = trainer._dispatch(0, tasks)
        ray.kill(trainer.workers[0], no_restart=False)
        trajectories, _ = trainer._collect(batch)
        assert trainer.worker_restarts >= 1
        assert len(trajectories) == 4 and not any(t.infra_failure for t in trajectories)
        assert sorted(t.group_id for t in trajectories) == ["b0-0", "b0-0", "b0-1", "b0-1"]
    finally:
        trainer.shutdown()


def test_a_restarted_engine_gets_the_trained_weights_back_before_it_serves(
    cluster: None, model_dir: Path, tmp_path: Path
) -> None:
    config = small_config(trainer={"steps": 1, "eval_tasks": 2})
    trainer = AgentTrainer(config, tmp_path, str(model_dir))
    try:
        trainer.version = 5
        trainer._push_weights()  # as after training: the engine holds version 5
        ray.kill(trainer.engines[0], no_restart=False)  # Ray restarts it from the initial model (version 0)
        loads = -1
        for _ in range(600):  # until the restarted engine answers (ray.kill is asynchronous: the old one may first)
            try:
                loads = ray.get(trainer.engines[0].loads.remote(), timeout=1)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError, ray.exceptions.GetTimeoutError):
                continue
            if loads == 0:
                break
        assert loads == 0
        trainer._evaluate(1)
        assert trainer.engine_resyncs == 1 and ray.get(trainer.engines[0].version.remote()) == 5
        assert trainer.last_eval and {t.policy_version for t in trainer.last_eval} == {5}
        record = [r for r in trainer.log.read() if r[m.STAGE] == "eval"][-1]
        assert record[m.ENGINE_RESYNCS] == 1
    finally:
        trainer.shutdown()


def test_async_training_overlaps_rollouts_with_bounded_staleness(
    cluster: None, model_dir: Path, tmp_path: Path
) -> None:
    config = small_config(trainer={"mode": "async", "max_staleness": 1, "steps": 3})
    trainer = AgentTrainer(config, tmp_path, str(model_dir))
    try:
        trainer.run()
    finally:
        trainer.shutdown()
    records = [r for r in m.MetricsLog(tmp_path, tensorboard=False).read() if r[m.STAGE] == "grpo"]
    assert [r[m.STEP] for r in records] == [1, 2, 3]
    assert [r[m.BATCH_INDEX] for r in records] == [0, 1, 2]
    assert records[0][m.STALENESS] == 0
    assert records[1][m.STALENESS] > 0, "batch 1 was generated while the learner trained on batch 0"
    assert all(r[m.STALENESS] <= 1 and r[m.DROPPED_STALE] == 0 for r in records)
    assert [r[m.VERSION] for r in records] == [1, 2, 3]
    for key in (m.TIMING_GENERATE, m.TIMING_LEARN, m.TIMING_SYNC, m.TOKENS_PER_S, m.INVALID_ACTION_RATE):
        assert all(key in r for r in records)
    assert (tmp_path / "checkpoints" / "final" / "model.safetensors").is_file()
