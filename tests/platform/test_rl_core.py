"""The RL core's pieces in one process: batching, episodes, the learner's updates, checkpoints, task streams."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from pathlib import Path
from typing import Any

import gymnasium
import pytest
import torch

from raygent.environments.toolcalc import ToolCalcEnv, corpus
from raygent.jobs.grpo_toy.tasks import toolcalc_demonstrations, toolcalc_tasks
from raygent.platform.contracts import Observation, Step, Task, Trajectory
from raygent.platform.losses.config import LossConfig
from raygent.platform.rl.batch import (
    Sample,
    collate,
    denominator,
    pack,
    policy_samples,
    samples_from_demonstration,
    samples_from_trajectories,
)
from raygent.platform.rl.engine import InferenceEngine
from raygent.platform.rl.learner import Learner
from raygent.platform.rl.rollout import EpisodeRequest, EpisodeRunner
from raygent.platform.rl.settings import LearnerSettings, LoraSettings
from raygent.platform.rl.tasks import AdaptiveSource, StaticSource, batch_seed, template_of
from raygent.policies.backends.base import Completion, SamplingParams
from raygent.policies.backends.hf import HFBackend
from raygent.policies.presets import build_tiny_model
from raygent.policies.prompts import PromptFormat
from raygent.policies.tokenizer import build_tokenizer

torch.set_num_threads(1)  # two threads per process thrash when the machine is loaded
FORMAT = PromptFormat(system="Use calc(EXPR) or answer(N).")
SAMPLING = SamplingParams(temperature=1.0, max_new_tokens=8, seed=None)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("rl-core")
    tokenizer = build_tokenizer(corpus(n_tasks=300), directory, vocab_size=320)
    return build_tiny_model("tiny-qwen2", tokenizer, directory, seed=3)


@pytest.fixture(scope="module")
def backend(model_dir: Path) -> HFBackend:
    return HFBackend.from_pretrained(model_dir)


def test_collate_places_responses_after_their_prompts() -> None:
    samples = [Sample((1, 2, 3), (4, 5), (-0.1, -0.2), advantage=1.0), Sample((7,), (8, 9, 10), (-1.0, -1.0, -1.0))]
    batch = collate(samples, pad_id=0)
    # a row is the prompt but its last token, then its last token and the response but its last token: the logits
    # at index p score the next token, so the last response token is never an input
    assert batch.input_ids.tolist() == [[1, 2, 3, 4], [7, 8, 9, 0]]
    assert batch.position_ids.tolist() == [[0, 1, 2, 3], [0, 1, 2, 0]]
    assert batch.rows.tolist() == [0, 1]
    # the response of row 0 is scored from index 2 (token 3) on
    assert batch.positions.tolist() == [[2, 3, 0], [0, 1, 2]]
    assert batch.attention_mask[1, 0].tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [0, 0, 0, 1]]
    assert batch.loss_mask.tolist() == [[1, 1, 0], [1, 1, 1]]
    assert batch.behaviour[0, :2].tolist() == pytest.approx([-0.1, -0.2])
    assert batch.advantages.tolist() == [1.0, 0.0]


def test_samples_of_one_prompt_share_a_row_and_see_only_their_own_response() -> None:
    samples = [Sample((1, 2, 3), (4, 5)), Sample((9,), (8,)), Sample((1, 2, 3), (6, 7))]
    batch = collate(samples, pad_id=0)
    assert batch.input_ids.tolist() == [[1, 2, 3, 4, 3, 6], [9, 0, 0, 0, 0, 0]]
    assert batch.position_ids[0].tolist() == [0, 1, 2, 3, 2, 3]  # each segment at its own sequence's positions
    assert batch.rows.tolist() == [0, 1, 0]
    assert batch.positions.tolist() == [[2, 3], [0, 0], [4, 5]]
    seen = batch.attention_mask[0, 0].int().tolist()
    assert seen[4] == [1, 1, 0, 0, 1, 0]  # the second segment sees the prefix and itself, not the first segment
    assert seen[5] == [1, 1, 0, 0, 1, 1]


def test_the_shared_prefix_layout_scores_and_trains_as_separate_sequences(model_dir: Path) -> None:
    """Logits and gradients of a micro-batch whose samples share prompts equal those of each sample's own sequence
    run alone through the model (float32)."""
    learner = Learner(str(model_dir), LearnerSettings(lr=3e-3, micro_batch_tokens=4096))
    torch.manual_seed(0)
    prompts = [tuple(torch.randint(5, 300, (n,)).tolist()) for n in (7, 12, 1)]
    samples = [
        Sample(prompts[p], tuple(torch.randint(5, 300, (n,)).tolist()), advantage=a)
        for p, n, a in ((0, 4, 1.0), (1, 6, -0.5), (0, 2, -1.0), (0, 5, 0.5), (2, 3, 2.0), (1, 1, 0.25))
    ]
    batch = learner._collate(samples)
    assert batch.input_ids.shape[0] == 3  # one row per prompt
    shared = token_logprobs_of(learner, batch)
    objective = sum((row[: len(s.response_ids)] * s.advantage).sum() for row, s in zip(shared, samples, strict=True))
    objective.backward()
    packed_grads = {n: p.grad.clone() for n, p in learner.model.named_parameters() if p.grad is not None}
    learner.model.zero_grad(set_to_none=True)
    separate = []
    for s in samples:
        ids = torch.tensor([[*s.prompt_ids, *s.response_ids]])
        logits = learner.model(input_ids=ids).logits[0, len(s.prompt_ids) - 1 : -1].float()
        separate.append(torch.log_softmax(logits, -1).gather(-1, torch.tensor(s.response_ids)[:, None])[:, 0])
    for row, alone, s in zip(shared, separate, samples, strict=True):
        assert torch.allclose(row[: len(s.response_ids)], alone, atol=1e-5)
    sum((alone * s.advantage).sum() for alone, s in zip(separate, samples, strict=True)).backward()
    for name, param in learner.model.named_parameters():
        assert torch.allclose(packed_grads[name], param.grad, atol=1e-5, rtol=1e-4), name


def token_logprobs_of(learner: Learner, batch: Any) -> torch.Tensor:
    from raygent.platform.losses.logprobs import token_logprobs

    return token_logprobs(learner._response_logits(learner.model, batch), batch.response_ids, 1.0)


def test_pack_keeps_each_micro_batch_within_the_token_budget() -> None:
    samples = [Sample(tuple(range(n)), (1,)) for n in (3, 9, 4, 20, 5, 6)]
    groups = pack(samples, max_tokens=16)
    assert sorted(s.length for g in groups for s in g) == sorted(s.length for s in samples)
    for group in groups:
        assert len(group) == 1 or collate(group, 0).input_ids.numel() <= 16
    # a prompt's samples fill one row while it fits, then the next
    shared = [Sample((1, 2, 3, 4, 5), (6, 7, 8)) for _ in range(5)]
    rows = [collate(g, 0).input_ids.shape for g in pack(shared, max_tokens=10)]
    assert rows == [(1, 7), (1, 10), (1, 10)]
    assert denominator(samples, "token-mean") == 6.0
    assert denominator(samples, "seq-mean-token-mean") == 6.0


def _step(version: int = 0, reward: float = 0.0, failure: bool | None = None) -> Step:
    return Step(
        observation=Observation(text="x"),
        prompt_ids=[1, 2],
        response_ids=[3],
        logprobs=[-0.5],
        action="a",
        reward=reward,
        failure=failure,
        policy_version=version,
    )


def test_trajectories_become_one_sample_per_step_and_infra_failures_none() -> None:
    task = Task(id="t", env="e", instruction="i")
    failed = Trajectory(task=task, steps=[_step(), _step(1)], success=False, group_id="g")
    judged = Trajectory(task=task, steps=[_step(failure=False), _step(failure=True)], success=False, group_id="g")
    lost = Trajectory(task=task, steps=[], policy_version=0, group_id="g", infra_failure=True)
    samples = samples_from_trajectories([failed, judged, lost], [0.5, -1.0, 3.0])
    assert [s.advantage for s in samples] == [0.5, 0.5, -1.0, -1.0]
    assert [s.failure for s in samples] == [True, True, False, True]  # a judge's step verdict wins over the outcome
    assert [s.version for s in samples] == [0, 1, 0, 0]


def test_episodes_record_the_engines_tokens_and_the_learner_recomputes_them(model_dir: Path, backend: HFBackend):
    runner = EpisodeRunner(ToolCalcEnv, 4, backend.tokenizer, FORMAT, backend.generate, max_turns=3)
    tasks = toolcalc_tasks("train", 0, 3)
    trajectories = runner.run([EpisodeRequest(t, f"g{i}") for i, t in enumerate(tasks) for _ in range(2)], SAMPLING)
    assert len(trajectories) == 6 and [t.task for t in trajectories] == [t for t in tasks for _ in range(2)]
    learner = Learner(str(model_dir), LearnerSettings(), temperature=1.0)
    for trajectory in trajectories:
        assert 1 <= len(trajectory.steps) <= 3 and not trajectory.infra_failure
        first = trajectory.steps[0]
        for earlier, later in zip(trajectory.steps, trajectory.steps[1:], strict=False):
            # a later prompt extends the earlier prompt and response: the context is never re-tokenized
            assert len(later.prompt_ids) > len(earlier.prompt_ids)
        samples = samples_from_trajectories([trajectory], [0.0])
        recomputed = learner.evaluate_logprobs(samples)
        for step, values in zip(trajectory.steps, recomputed, strict=True):
            assert values == pytest.approx(step.logprobs, abs=1e-4)
        assert first.policy_version == 0
    assert runner.stats.episodes == 6 and runner.stats.infra_failures == 0


def test_a_seeded_episode_samples_the_same_tokens_on_any_runner_in_any_batch(backend: HFBackend) -> None:
    tasks = toolcalc_tasks("train", 0, 4)
    requests = [
        EpisodeRequest(t, f"g{i}", j, batch_seed(7, i, f"sample/{j}")) for i, t in enumerate(tasks) for j in range(2)
    ]

    def runner(slots: int) -> EpisodeRunner:
        return EpisodeRunner(ToolCalcEnv, slots, backend.tokenizer, FORMAT, backend.generate, max_turns=3)

    together = runner(8).run(requests, SAMPLING)
    split = {}
    for part in (requests[1::2], requests[::2][::-1]):  # other runners, other batch-mates, another order
        split.update({id(r): t for r, t in zip(part, runner(2).run(part, SAMPLING), strict=True)})
    for request, trajectory in zip(requests, together, strict=True):
        assert [s.response_ids for s in split[id(request)].steps] == [s.response_ids for s in trajectory.steps]
    reseeded = [EpisodeRequest(r.task, r.group_id, r.index, batch_seed(8, r.index)) for r in requests]
    assert [s.response_ids for t in runner(8).run(reseeded, SAMPLING) for s in t.steps] != [
        s.response_ids for t in together for s in t.steps
    ]
    assert len({batch_seed(7, i, f"sample/{j}") for i in range(50) for j in range(50)}) == 2500


def test_the_engine_batches_seeded_requests_and_each_keeps_its_tokens(model_dir: Path) -> None:
    engine = InferenceEngine("hf", str(model_dir))
    first, second = [[5, 6, 7, 8], [9, 10]], [[11, 12, 13]]
    a, b = (SAMPLING.model_copy(update={"seeds": seeds}) for seeds in ((1, 2), (3,)))

    async def concurrently() -> list[list[Completion]]:
        return list(
            await asyncio.gather(
                engine.generate(first, a), engine.generate(second, b), engine.generate(second, SAMPLING)
            )
        )

    # on a thread of its own: a test run earlier in this process may leave an event loop running on this one
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        merged, other, unseeded = pool.submit(asyncio.run, concurrently()).result()
    assert engine.stats.calls == 2, "the seeded requests shared one backend call, the unseeded one had its own"
    assert [c.response_ids for c in merged] == [c.response_ids for c in engine.backend.generate(first, a)]
    assert [c.response_ids for c in other] == [c.response_ids for c in engine.backend.generate(second, b)]
    assert len(unseeded) == 1


class FlakyEnv(ToolCalcEnv):
    """Fails the first `failures` calls of `step` across all instances (a crash, then a hang)."""

    failures = 0
    hang_s = 0.0
    lock = threading.Lock()

    def step(self, action: str) -> Any:
        with FlakyEnv.lock:
            fail = FlakyEnv.failures > 0
            FlakyEnv.failures -= 1
        if fail and FlakyEnv.hang_s:
            time.sleep(FlakyEnv.hang_s)
        elif fail:
            raise RuntimeError("environment crashed")
        return super().step(action)


def scripted_generate(tokenizer: Any, text: str) -> Any:
    """A policy that always answers `text` (the runner's generate seam, without a model)."""
    ids = tokenizer.encode(text, add_special_tokens=False)

    def generate(prompts: list[list[int]], params: SamplingParams) -> list[Completion]:
        return [
            Completion(
                prompt_ids=p,
                response_ids=ids,
                logprobs=[-0.1] * len(ids),
                text=text,
                finish_reason="stop",
                policy_version=0,
            )
            for p in prompts
        ]

    return generate


def test_a_crashed_or_hung_environment_is_rebuilt_and_its_episode_retried(backend: HFBackend) -> None:
    tasks = toolcalc_tasks("train", 1, 2)
    requests = [EpisodeRequest(t, f"g{i}") for i, t in enumerate(tasks)]
    generate = scripted_generate(backend.tokenizer, "answer(1)")
    FlakyEnv.failures, FlakyEnv.hang_s = 1, 0.0
    runner = EpisodeRunner(FlakyEnv, 2, backend.tokenizer, FORMAT, generate, max_turns=2, max_attempts=2)
    trajectories = runner.run(requests, SAMPLING)
    assert not any(t.infra_failure for t in trajectories)
    assert sorted(t.infra_retries for t in trajectories) == [0, 1]
    FlakyEnv.failures, FlakyEnv.hang_s = 100, 10.0
    runner = EpisodeRunner(
        FlakyEnv, 2, backend.tokenizer, FORMAT, generate, max_turns=2, max_attempts=2, episode_timeout_s=1.0
    )
    started = time.perf_counter()
    trajectories = runner.run(requests, SAMPLING)
    assert time.perf_counter() - started < 10.0  # the hung calls were abandoned, not waited out
    assert all(t.infra_failure and not t.steps and t.infra_retries == 1 for t in trajectories)
    assert runner.stats.infra_failures == 2 and runner.stats.env_restarts == 4
    FlakyEnv.failures, FlakyEnv.hang_s = 0, 0.0


class UncheckedEnv(ToolCalcEnv):
    """ToolCalc that says it has no checker (as a page nobody wrote a task for does): `info["checker"] = False`."""

    def step(self, action: str) -> Any:
        observation, reward, terminated, truncated, info = super().step(action)
        return observation, reward, terminated, truncated, {**info, "checker": False}


def test_an_environment_without_a_checker_leaves_success_to_a_judge(backend: HFBackend) -> None:
    task = toolcalc_tasks("train", 1, 1)[0]
    answer = scripted_generate(backend.tokenizer, f"answer({task.params['answer']})")
    for env_class, expected in ((ToolCalcEnv, True), (UncheckedEnv, None)):
        runner = EpisodeRunner(env_class, 1, backend.tokenizer, FORMAT, answer, max_turns=2)
        (trajectory,) = runner.run([EpisodeRequest(task, "g")], SAMPLING)
        assert trajectory.steps[-1].reward > 0 and trajectory.success is expected


def test_sft_lowers_the_loss_and_changes_the_weights(model_dir: Path) -> None:
    learner = Learner(str(model_dir), LearnerSettings(lr=3e-3, micro_batch_tokens=512))
    tasks = toolcalc_tasks("train", 2, 6)
    samples = [
        sample
        for task, turns in zip(tasks, toolcalc_demonstrations(tasks), strict=True)
        for sample in samples_from_demonstration(learner.tokenizer, FORMAT, task, turns)
    ]
    assert all(s.response_ids[-1] == learner.tokenizer.eos_token_id for s in samples)
    before = {k: v.clone() for k, v in learner.weights().items()}
    losses = [learner.sft(samples)["learner/sft/loss"] for _ in range(8)]
    assert losses[-1] < 0.7 * losses[0]
    assert any(not torch.equal(before[k], v) for k, v in learner.weights().items())
    assert learner.version == 8


def test_bf16_autocast_scores_close_to_float32_and_keeps_float32_weights(model_dir: Path) -> None:
    tasks = toolcalc_tasks("train", 2, 4)
    plain = Learner(str(model_dir), LearnerSettings(lr=3e-3, micro_batch_tokens=512))
    mixed = Learner(str(model_dir), LearnerSettings(lr=3e-3, micro_batch_tokens=512, autocast="bf16"))
    samples = [
        sample
        for task, turns in zip(tasks, toolcalc_demonstrations(tasks), strict=True)
        for sample in samples_from_demonstration(plain.tokenizer, FORMAT, task, turns)
    ]
    exact, rounded = plain.evaluate_logprobs(samples), mixed.evaluate_logprobs(samples)
    gaps = [abs(a - b) for row, other in zip(exact, rounded, strict=True) for a, b in zip(row, other, strict=True)]
    assert 0 < max(gaps) < 0.1  # bf16 rounding: not bit-identical, but the same distribution
    losses = [mixed.sft(samples)["learner/sft/loss"] for _ in range(6)]
    assert losses[-1] < 0.8 * losses[0]
    assert all(v.dtype == torch.float32 for v in mixed.weights().values())


def _trajectory(task: Task, group: str, prompt: list[int], response: list[int], reward: float) -> Trajectory:
    step = Step(
        observation=Observation(text="o"),
        prompt_ids=prompt,
        response_ids=response,
        logprobs=[-1.0] * len(response),
        action="a",
        reward=reward,
        policy_version=0,
    )
    return Trajectory(task=task, steps=[step], success=reward > 0, group_id=group)


def rl_update(learner: Learner, trajectories: list[Trajectory]) -> dict[str, float]:
    """The trainer's RL update without Ray: advantages on the "driver", then the learner's summed loss terms."""
    samples, stats = policy_samples(trajectories, learner.settings.loss)
    return stats | learner.policy_update(samples)


@pytest.mark.parametrize("aggregation", ["token-mean", "seq-mean-token-mean"])
def test_grpo_raises_the_rewarded_response_and_lowers_the_other(model_dir: Path, aggregation: str) -> None:
    settings = LearnerSettings(lr=1e-3, loss=LossConfig(aggregation=aggregation))  # type: ignore[arg-type]
    learner = Learner(str(model_dir), settings)
    task = Task(id="t", env="e", instruction="i")
    prompt, good, bad = [5, 6, 7, 8], [20, 21, 22], [30, 31]
    group = [_trajectory(task, "g", prompt, good, 1.0), _trajectory(task, "g", prompt, bad, 0.0)]
    flat = [_trajectory(task, "h", prompt, good, 1.0), _trajectory(task, "h", prompt, bad, 1.0)]

    def total(response: list[int]) -> float:
        return sum(learner.evaluate_logprobs([Sample(tuple(prompt), tuple(response))])[0])

    good0, bad0 = total(good), total(bad)
    for _ in range(3):
        stats = rl_update(learner, group + flat)
    assert total(good) > good0 + 0.1 and total(bad) < bad0 - 0.1
    assert stats["learner/kept_fraction"] == 1.0


def test_zero_variance_groups_are_filtered_when_asked(model_dir: Path) -> None:
    settings = LearnerSettings(loss=LossConfig(filter_zero_variance_groups=True))
    learner = Learner(str(model_dir), settings)
    task = Task(id="t", env="e", instruction="i")
    flat = [_trajectory(task, "h", [5, 6], [7], 1.0), _trajectory(task, "h", [5, 6], [8], 1.0)]
    before = learner.weights()
    stats = rl_update(learner, flat)
    assert stats["learner/kept_fraction"] == 0.0 and stats["learner/skipped"] == 1.0
    assert all(torch.equal(before[k], v) for k, v in learner.weights().items())


def test_kl_and_adversarial_imitation_load_a_reference_only_when_on(model_dir: Path) -> None:
    assert Learner(str(model_dir), LearnerSettings()).reference is None
    loss = LossConfig(terms=[{"name": "grpo"}, {"name": "kl", "coef": 0.05}, {"name": "adversarial_imitation"}])
    learner = Learner(str(model_dir), LearnerSettings(lr=1e-3, loss=loss))
    assert learner.reference is not None
    task = Task(id="t", env="e", instruction="i")
    group = [_trajectory(task, "g", [5, 6, 7], [20, 21], 1.0), _trajectory(task, "g", [5, 6, 7], [30, 31], 0.0)]
    rl_update(learner, group)
    stats = rl_update(learner, group)
    assert stats["learner/kl/kl_ref"] > 0  # the policy moved away from the reference
    assert stats["learner/grpo/entropy"] > 0  # logged from the real logits
    assert stats["learner/adversarial_imitation/loss"] > 0


def test_the_reference_becomes_a_saved_policy(model_dir: Path, tmp_path: Path) -> None:
    """What the trainer does when RL begins: the policy saved model-only becomes the reference, so the next
    update starts at KL 0 and adversarial imitation at ratio 1."""
    loss = LossConfig(terms=[{"name": "grpo"}, {"name": "kl", "coef": 0.05}, {"name": "adversarial_imitation"}])
    learner = Learner(str(model_dir), LearnerSettings(lr=1e-2, loss=loss))
    task = Task(id="t", env="e", instruction="i")
    group = [_trajectory(task, "g", [5, 6, 7], [20, 21], 1.0), _trajectory(task, "g", [5, 6, 7], [30, 31], 0.0)]
    rl_update(learner, group)
    assert rl_update(learner, group)["learner/kl/kl_ref"] > 1e-4  # moved away from the model it was built from
    learner.save(str(tmp_path / "reference"), model_only=True)
    assert sorted(p.name for p in (tmp_path / "reference").iterdir() if p.suffix == ".pt") == []  # no optimizer
    assert learner.set_reference(str(tmp_path / "reference"))
    stats = rl_update(learner, group)
    assert stats["learner/kl/kl_ref"] < 1e-6 and abs(stats["learner/adversarial_imitation/log_ratio_ref"]) < 1e-5
    assert not Learner(str(model_dir), LearnerSettings()).set_reference(str(tmp_path / "reference"))


def test_save_and_restore_round_trip_model_optimizer_and_rng(model_dir: Path, tmp_path: Path) -> None:
    learner = Learner(str(model_dir), LearnerSettings(lr=1e-3))
    task = Task(id="t", env="e", instruction="i")
    group = [_trajectory(task, "g", [5, 6, 7], [20, 21], 1.0), _trajectory(task, "g", [5, 6, 7], [30], 0.0)]
    rl_update(learner, group)
    learner.save(str(tmp_path / "ckpt"))
    expected_draw = torch.rand(3)
    rl_update(learner, group)
    expected = learner.weights()
    other = Learner(str(model_dir), LearnerSettings(lr=1e-3))
    assert other.restore(str(tmp_path / "ckpt")) == 1
    assert torch.equal(torch.rand(3), expected_draw)
    rl_update(other, group)
    for name, tensor in other.weights().items():
        assert torch.allclose(tensor, expected[name], atol=1e-6), name


def test_static_source_batches_are_a_pure_function_of_the_index() -> None:
    source = StaticSource(toolcalc_tasks, split="train", seed=5, batch_size=4)
    first = [source.next(i) for i in range(3)]
    resumed = StaticSource(toolcalc_tasks, split="train", seed=5, batch_size=4)
    resumed.load_state(source.state())
    assert resumed.next(1) == first[1]
    assert first[0] != first[1]
    assert StaticSource(toolcalc_tasks, split="train", seed=6, batch_size=4).next(0) != first[0]


def test_adaptive_source_favours_templates_neither_solved_nor_hopeless_and_round_trips() -> None:
    source = AdaptiveSource(toolcalc_tasks, split="train", seed=0, batch_size=8, candidates=4, floor=0.0)
    templates = sorted({template_of(t) for i in range(4) for t in source.next(i)})
    assert len(templates) >= 3
    solved, hopeless, *learning = templates
    task = {
        template: next(t for i in range(4) for t in source.next(i) if template_of(t) == template)
        for template in templates
    }
    outcomes = [(solved, True)] * 8 + [(hopeless, False)] * 8
    outcomes += [(tpl, k % 2 == 0) for tpl in learning for k in range(8)]
    source.observe(
        [
            Trajectory(
                task=task[tpl], steps=[_trajectory(task[tpl], "g", [1], [2], 0.0).steps[0]], success=ok, group_id="g"
            )
            for tpl, ok in outcomes
        ]
    )
    drawn = [template_of(t) for i in range(10, 20) for t in source.next(i)]
    assert solved not in drawn and hopeless not in drawn  # weight p(1 − p) = 0 with no floor
    restored = AdaptiveSource(toolcalc_tasks, split="train", seed=0, batch_size=8, candidates=4, floor=0.0)
    restored.load_state(source.state())
    assert restored.next(10) == source.next(10)


def test_gymnasium_registration_builds_the_environment_the_workers_use() -> None:
    from raygent.environments.toolcalc import register_envs

    register_envs()
    assert isinstance(gymnasium.make("raygent/ToolCalc-v0").unwrapped, ToolCalcEnv)


def test_metrics_log_keeps_what_a_resume_does_not_redo(tmp_path: Path) -> None:
    from raygent.platform.rl import metrics as m

    records = [("sft", 1), ("sft", 2), ("eval", 0), ("hooks", 0), ("grpo", 1), ("grpo", 2), ("eval", 2)]
    records += [("grpo", 3)]

    def kept_after(stage: str, step: int) -> list[tuple[str, int]]:
        log = m.MetricsLog(tmp_path, tensorboard=False)
        log.path.unlink(missing_ok=True)
        for name, at in records:
            log.write({m.STAGE: name, m.STEP: at})
        log.truncate_after(step, stage)
        return [(r[m.STAGE], r[m.STEP]) for r in log.read()]

    assert kept_after("sft", 1) == [("sft", 1)]
    # from the checkpoint after SFT the run evaluates and warms up again: those records go
    assert kept_after("grpo", 0) == [("sft", 1), ("sft", 2)]
    assert kept_after("grpo", 2) == records[:-1]


def test_a_report_reads_the_training_run_in_a_subdirectory(tmp_path: Path) -> None:
    from raygent.platform.rl import metrics as m
    from raygent.platform.rl.report import CURVE_FILE, write_report

    inner = tmp_path / "generalist"
    inner.mkdir()
    log = m.MetricsLog(inner, tensorboard=False)
    log.write({m.STAGE: "eval", m.STEP: 0, "eval/a/success": 0.0})  # extra sets only, no main held-out set
    log.write({m.STAGE: "grpo", m.STEP: 1, m.SUCCESS: 0.5, m.REWARD: 0.5, m.TIMING_GENERATE: 2.0})
    log.write({m.STAGE: "eval", m.STEP: 1, "eval/a/success": 0.5})
    summary = write_report(tmp_path, "job", "claim", before=0.0, after=0.5, min_gain=0.0, metrics_dir=inner)
    assert summary["steps"] == 1 and summary["timing_s"][m.TIMING_GENERATE] == 2.0
    assert (tmp_path / CURVE_FILE).stat().st_size > 0 and not (inner / CURVE_FILE).exists()


def test_the_object_store_sync_sends_views_of_the_weights_and_a_tied_tensor_once(model_dir: Path) -> None:
    import numpy as np

    from raygent.platform.rl.engine import as_tensors

    learner = Learner(str(model_dir), LearnerSettings(lr=3e-3))
    with torch.no_grad():
        for param in learner.model.parameters():
            param.add_(0.01)
    plain, shared = learner.plain_state(), learner.shared_weights()
    assert all(isinstance(v, np.ndarray) for v in shared.values())
    for name, array in shared.items():
        assert np.shares_memory(array, plain[name].detach().numpy()), f"{name} was copied"
    left_out = set(plain) - set(shared)
    assert left_out == ({"lm_head.weight"} if learner.model.config.tie_word_embeddings else set())
    backend = HFBackend.from_pretrained(model_dir)
    backend.load_weights(as_tensors(shared), 1)
    for name, tensor in backend.model.state_dict().items():
        assert torch.equal(tensor, plain[name]), name


# -- adapter-only sync (learner.lora) -------------------------------------------------------------------------

LORA = LoraSettings(rank=4, alpha=8.0, target_modules=["q_proj", "v_proj"])


def _adapted_learner(model_dir: Path) -> Learner:
    """A LoRA learner whose adapters moved off their zero start (3 SFT steps on the expert turns of 2 tasks)."""
    learner = Learner(str(model_dir), LearnerSettings(lr=5e-3, lora=LORA, micro_batch_tokens=512))
    tasks = toolcalc_tasks("train", 2, 2)
    demos = [
        s
        for task, turns in zip(tasks, toolcalc_demonstrations(tasks), strict=True)
        for s in samples_from_demonstration(learner.tokenizer, FORMAT, task, turns)
    ]
    for _ in range(3):
        learner.sft(demos)
    return learner


def test_adapter_only_sync_moves_only_the_adapters_and_the_engine_generates_with_them(model_dir: Path) -> None:
    """With `learner.lora` a sync is the adapters' tensors alone (count and bytes from the base model's shapes);
    an engine built with the same adapters holds the base unchanged, and its next greedy generation after a sync
    of a perturbed adapter changes and is scored as the learner's teacher-forced pass scores it."""
    from raygent.platform.rl.distributed import LORA_MARK, lora_spec

    learner = Learner(str(model_dir), LearnerSettings(lr=1e-3, lora=LORA))
    plain = learner.plain_state()
    shared = learner.shared_weights()  # what ObjectStoreSync puts in the object store
    adapted = [n.removesuffix(".weight") for n in plain if n.endswith(("q_proj.weight", "v_proj.weight"))]
    assert adapted and set(shared) == {f"{m}.lora_{ab}.default.weight" for m in adapted for ab in ("A", "B")}, (
        "only lora_A and lora_B of each target module"
    )
    expected_bytes = sum(4 * LORA.rank * sum(plain[f"{m}.weight"].shape) for m in adapted)  # A: r×in, B: out×r
    assert len(shared) == 2 * len(adapted) and sum(a.nbytes for a in shared.values()) == expected_bytes
    assert expected_bytes < sum(t.numel() * 4 for t in plain.values()) / 20
    assert [n for n, _, _ in learner.weight_spec()] == list(learner.sync_state()) == list(shared)
    assert all(LORA_MARK not in name for name in learner.weights()), "weights() stays the merged plain model"

    backend = HFBackend.from_pretrained(model_dir, lora=lora_spec(LORA))
    prompts = [[5, 6, 7, 8, 9], [10, 11, 12]]
    greedy = SamplingParams(temperature=0.0, max_new_tokens=10)
    before = backend.generate(prompts, greedy)
    with torch.no_grad():  # a perturbed adapter: B away from zero
        generator = torch.Generator().manual_seed(0)
        for name, param in learner.model.named_parameters():
            if ".lora_" in name:
                param.add_(torch.randn(param.shape, generator=generator) * 0.5)
    backend.load_weights(learner.sync_weights(), version=4)
    after = backend.generate(prompts, greedy)
    assert {c.policy_version for c in after} == {4}
    assert [c.response_ids for c in after] != [c.response_ids for c in before]
    held = {n.replace(".base_layer.", "."): t for n, t in backend.model.state_dict().items() if LORA_MARK not in n}
    assert held.keys() == plain.keys()
    for name, tensor in plain.items():  # the engine's base is the checkpoint's, untouched by the sync
        assert torch.equal(held[name], tensor), name
    recomputed = learner.evaluate_logprobs([Sample(tuple(c.prompt_ids), tuple(c.response_ids)) for c in after])
    for completion, values in zip(after, recomputed, strict=True):
        assert values == pytest.approx(completion.logprobs, abs=1e-4)
    with pytest.raises(KeyError, match="without lora"):
        HFBackend.from_pretrained(model_dir).load_weights(learner.sync_weights(), version=5)


def test_episodes_under_the_synced_adapters_record_the_learner_s_logprobs(model_dir: Path) -> None:
    """Sampled multi-turn episodes on an engine given only the trained adapters: every step's recorded logprobs
    equal the LoRA learner's teacher-forced pass (1e-3, float32), and differ from the base model's."""
    from raygent.platform.rl.distributed import lora_spec

    learner = _adapted_learner(model_dir)
    backend = HFBackend.from_pretrained(model_dir, lora=lora_spec(LORA))
    backend.load_weights(learner.sync_weights(), version=learner.version)
    runner = EpisodeRunner(ToolCalcEnv, 4, backend.tokenizer, FORMAT, backend.generate, max_turns=2)
    tasks = toolcalc_tasks("train", 2, 4)
    sampling = SamplingParams(temperature=1.0, max_new_tokens=8, seed=5)
    trajectories = runner.run([EpisodeRequest(t, f"g{i}") for i, t in enumerate(tasks)], sampling)
    steps = [s for t in trajectories for s in t.steps]
    assert steps and all(s.policy_version == learner.version for s in steps)
    samples = samples_from_trajectories(trajectories, [0.0] * len(trajectories))
    recomputed = learner.evaluate_logprobs(samples)
    for step, values in zip(steps, recomputed, strict=True):
        assert values == pytest.approx(step.logprobs, abs=1e-3)
    base = Learner(str(model_dir), LearnerSettings()).evaluate_logprobs(samples)
    assert max(abs(a - b) for x, y in zip(base, recomputed, strict=True) for a, b in zip(x, y, strict=True)) > 1e-2


def test_resume_restores_each_adapter_to_the_learner_and_the_engines(model_dir: Path, tmp_path: Path) -> None:
    """A LoRA learner saved and restored by a fresh one: every adapter tensor comes back bit for bit, the next
    update equals the uninterrupted one, and a fresh engine given the restored adapters generates as the engine
    given the saved ones."""
    from raygent.platform.rl.distributed import lora_spec

    learner = _adapted_learner(model_dir)
    learner.save(str(tmp_path / "ckpt"))
    saved = learner.sync_weights()
    task = Task(id="t", env="e", instruction="i")
    group = [_trajectory(task, "g", [5, 6, 7], [20, 21], 1.0), _trajectory(task, "g", [5, 6, 7], [30], 0.0)]
    rl_update(learner, group)
    continued = learner.sync_weights()

    other = Learner(str(model_dir), LearnerSettings(lr=5e-3, lora=LORA, micro_batch_tokens=512))
    assert other.restore(str(tmp_path / "ckpt")) == 3
    restored = other.sync_weights()
    assert list(restored) == list(saved) and len(saved) == 2 * sum(1 for _ in other.lora_scaling)
    for name, tensor in saved.items():
        assert torch.equal(restored[name], tensor), name
    prompts = [[5, 6, 7, 8, 9], [10, 11, 12]]
    greedy = SamplingParams(temperature=0.0, max_new_tokens=10)
    engines = [HFBackend.from_pretrained(model_dir, lora=lora_spec(LORA)) for _ in range(2)]
    engines[0].load_weights(saved, version=3)
    engines[1].load_weights(restored, version=3)
    first, second = (engine.generate(prompts, greedy) for engine in engines)
    assert [c.response_ids for c in first] == [c.response_ids for c in second]
    assert [c.logprobs for c in first] == [c.logprobs for c in second]
    rl_update(other, group)
    for name, tensor in other.sync_weights().items():
        assert torch.allclose(tensor, continued[name], atol=1e-6), name
