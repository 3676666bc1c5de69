"""The small-model recipe's platform parts: dynamic sampling, the admission gate, the learning-rate schedule.

Unit tests need no cluster; one small ToolCalc run on an embedded cluster (a judge defined here gives reward
variance to the groups of one template only) checks that dynamic sampling trains on varied groups only, stops at
its draw cap, and that a resumed run draws every batch of the task stream exactly once."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from raygent.environments.toolcalc import corpus
from raygent.jobs.grpo_toy.tasks import toolcalc_tasks
from raygent.platform.contracts import Judgement, Step, Task, Trajectory
from raygent.platform.rl.batch import varied_groups
from raygent.platform.rl.schedule import LRSchedule, ScheduleSettings, lr_factor
from raygent.platform.rl.tasks import AdmissionGate, TaskSettings, make_source, template_of

from conftest import init_ray_importing

HERE = Path(__file__).resolve().parent
TYPES = {"difficulty": 1, "task_types": ["compare", "single"]}
"""ToolCalc's five templates of these types: larger, smaller, a+b, a-b, a*b."""
VARIED = "a+b"
"""The one template whose groups `FirstOfGroupJudge` gives reward variance."""


class FirstOfGroupJudge:
    """Success for the first episode of each group of a `VARIED` task in a call, failure for every other episode:
    groups of `VARIED` tasks always vary, all others never do (whatever the policy does)."""

    def judge(self, trajectories: Sequence[Trajectory]) -> list[Judgement]:
        seen: set[str] = set()
        out = []
        for t in trajectories:
            ok = template_of(t.task) == VARIED and t.group_id not in seen
            seen.add(t.group_id)
            out.append(Judgement(score=float(ok), success=ok, reason="first-of-group"))
        return out


def _episode(task: Task, group: str, success: bool, reward: float | None = None) -> Trajectory:
    step = Step(
        observation={"text": "o"}, prompt_ids=[1], response_ids=[2], logprobs=[-0.5], action="a", policy_version=0
    )
    return Trajectory(task=task, steps=[step], success=success, policy_version=0, group_id=group, score=reward)


def test_the_schedule_warms_up_then_decays_to_its_floor() -> None:
    cosine = ScheduleSettings(warmup_steps=2, decay="cosine", min_lr_ratio=0.1)
    factors = [lr_factor(step, cosine, 10) for step in range(10)]
    assert factors[:3] == [0.5, 1.0, 1.0]
    assert all(a >= b for a, b in itertools.pairwise(factors[2:])) and factors[-1] > 0.1
    linear = ScheduleSettings(decay="linear")
    assert [lr_factor(s, linear, 4) for s in range(4)] == [1.0, 0.75, 0.5, 0.25]
    assert lr_factor(7, linear, None) == 1.0  # no stage length: nothing to decay over
    assert lr_factor(3, ScheduleSettings(), 4) == 1.0


def test_a_restored_schedule_goes_on_at_the_rate_it_stopped_at() -> None:
    settings = ScheduleSettings(warmup_steps=1, decay="linear")
    first = LRSchedule(1e-3, settings, 5)
    rates = [first.next_lr() for _ in range(2)]
    second = LRSchedule(5.0, settings)
    second.load_state(json.loads(json.dumps(first.state())))
    assert rates == [1e-3, 1e-3] and second.next_lr() == first.next_lr() == pytest.approx(1e-3 * 0.75)


def test_varied_groups_leave_out_constant_groups_and_infrastructure_failures() -> None:
    task = toolcalc_tasks("train", 0, 1)[0]
    episodes = [
        _episode(task, "g0", True, 1.0),
        _episode(task, "g0", False, 0.0),
        _episode(task, "g1", False, 0.0),
        _episode(task, "g1", False, 0.0),
        _episode(task, "g2", True, 1.0),
        _episode(task, "g2", False, 0.0).model_copy(update={"infra_failure": True}),
    ]
    assert varied_groups(episodes, atol=1e-6) == {"g0"}


def _gate(**kwargs: object) -> AdmissionGate:
    settings = TaskSettings(entry="raygent.platform.rl.tasks:AdmissionGate", kwargs=kwargs)
    gate = make_source(settings, toolcalc_tasks, split="train", seed=0, batch_size=8, task_kwargs=TYPES)
    assert isinstance(gate, AdmissionGate)
    return gate


def _observe(gate: AdmissionGate, template: str, successes: Sequence[bool]) -> None:
    task = next(t for t in toolcalc_tasks("train", 3, 200, **TYPES) if template_of(t) == template)
    gate.observe([_episode(task, f"{template}-{i}", s) for i, s in enumerate(successes)])


def test_the_gate_evicts_templates_outside_its_band_and_admits_them_again() -> None:
    gate = _gate(low=0.2, high=0.8, window=8, min_outcomes=4, candidates=4)
    assert gate.metrics() == {}
    _observe(gate, "larger", [True] * 4)  # always solved: evicted
    _observe(gate, "a*b", [False] * 4)  # never solved: evicted
    _observe(gate, "a+b", [True, False, True, False])  # in the band
    _observe(gate, "a-b", [True] * 3)  # too few outcomes yet: admitted
    for index in range(5):
        batch = gate.next(index)
        assert len(batch) == 8
        assert not {template_of(t) for t in batch} & {"larger", "a*b"}
    assert gate.metrics()["tasks/admitted_fraction"] == 1.0 and gate.metrics()["tasks/evicted_templates"] == 2.0
    assert (gate.metrics()["tasks/band_low"], gate.metrics()["tasks/band_high"]) == (0.2, 0.8)
    _observe(gate, "larger", [False] * 4)  # the window moved back into the band: admitted again
    assert any(template_of(t) == "larger" for i in range(5) for t in gate.next(i))


def test_the_gate_keeps_a_template_the_policy_is_forgetting() -> None:
    gate = _gate(low=0.2, high=0.8, window=4, min_outcomes=4)
    _observe(gate, "smaller", [True, False, True, False])  # in the band
    _observe(gate, "smaller", [False] * 4)  # then below it: forgotten, not too hard
    _observe(gate, "a*b", [False] * 4)  # never in the band: too hard
    assert gate.success_rate("smaller") == gate.success_rate("a*b") == 0.0
    templates = {template_of(t) for i in range(5) for t in gate.next(i)}
    assert "smaller" in templates and "a*b" not in templates
    resumed = _gate(low=0.2, high=0.8, window=4, min_outcomes=4)
    resumed.load_state(json.loads(json.dumps(gate.state())))
    assert resumed.distance("smaller") == 0.0 < resumed.distance("a*b")


def test_the_gate_fills_a_batch_with_the_templates_closest_to_its_band() -> None:
    gate = _gate(low=0.4, high=0.6, window=8, min_outcomes=2, candidates=1)
    for template in ("larger", "smaller", "a+b", "a-b"):
        _observe(gate, template, [True, True])
    _observe(gate, "a*b", [True, False, False, False, False, False, False, False])  # 0.125: closer than 1.0
    batch = gate.next(0)
    assert len(batch) == 8 and gate.metrics()["tasks/admitted_fraction"] == 0.0
    templates = [template_of(t) for t in batch]
    first_other = next(i for i, t in enumerate(templates) if t != "a*b")
    assert all(t != "a*b" for t in templates[first_other:])  # a*b ones first


def test_the_gate_resumes_with_its_state_and_its_inner_source_s() -> None:
    inner = {"entry": "raygent.platform.rl.tasks:AdaptiveSource", "kwargs": {"candidates": 2}}
    gate = _gate(source=inner, min_outcomes=2)
    _observe(gate, "larger", [True, True])
    _observe(gate, "a+b", [True, False])
    state = json.loads(json.dumps(gate.state()))
    resumed = _gate(source=inner, min_outcomes=2)
    resumed.load_state(state)
    assert resumed.state() == gate.state() and state["inner"]["outcomes"]
    assert [t.id for t in resumed.next(3)] == [t.id for t in gate.next(3)]


def test_the_gate_refuses_a_band_that_is_not_one() -> None:
    with pytest.raises(ValueError, match="low <= high"):
        _gate(low=0.9, high=0.1)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from raygent.policies.presets import build_tiny_model
    from raygent.policies.tokenizer import build_tokenizer

    directory = tmp_path_factory.mktemp("recipe")
    tokenizer = build_tokenizer(corpus(n_tasks=300), directory, vocab_size=320)
    return build_tiny_model("tiny-qwen2", tokenizer, directory, seed=4)


def _dynamic_config(steps: int) -> object:
    from raygent.platform.rl.settings import AgentRunConfig

    return AgentRunConfig.model_validate(
        {
            "env": {
                "id": "raygent/ToolCalc-v0",
                "registration": "raygent.environments.toolcalc:register_envs",
                "tasks": "raygent.jobs.grpo_toy.tasks:toolcalc_tasks",
                "task_kwargs": {"difficulty": 1, "task_types": ["compare", "single"]},
            },
            "rollout": {
                "num_workers": 1,
                "envs_per_worker": 4,
                "group_size": 2,
                "groups_per_step": 2,
                "max_turns": 2,
                "engine_num_cpus": 0,
                "sampling": {"temperature": 1.0, "max_new_tokens": 6},
                "dynamic_sampling": {"max_draws": 3},
            },
            "learner": {"num_cpus": 0, "lr": 1e-3},
            "trainer": {"steps": steps, "eval_tasks": 0, "tensorboard": False, "checkpoint_every": 1},
            "reward": {"entry": "test_recipe_parts:FirstOfGroupJudge", "num_actors": 1},
        }
    )


@pytest.mark.ray
@pytest.mark.slow
def test_dynamic_sampling_trains_on_varied_groups_only_and_resumes_on_the_next_draw(
    model_dir: Path, tmp_path: Path
) -> None:
    import ray

    from raygent.platform.rl.trainer import AgentTrainer

    init_ray_importing(HERE)  # the actors import this module (and the conftest it imports) by name
    try:
        for steps, resume in ((2, False), (4, True)):  # 2 steps, then resumed from their checkpoint to 4
            trainer = AgentTrainer(_dynamic_config(steps), tmp_path, str(model_dir))  # type: ignore[arg-type]
            try:
                trainer.run(resume=resume)
            finally:
                trainer.shutdown()
    finally:
        ray.shutdown()
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    grpo = [r for r in records if r["stage"] == "grpo"]
    assert [r["step"] for r in grpo] == [1, 2, 3, 4]
    drawn = [i for r in grpo for i in r["data/batch_indices"]]
    assert drawn == list(range(len(drawn))), "every batch of the task stream drawn once, in order"
    for r in grpo:
        tasks = [t for i in r["data/batch_indices"] for t in _stream(i)]
        assert r["data/task_ids"] == [t.id for t in tasks]
        varied = sum(template_of(t) == VARIED for t in tasks)  # the groups the judge made vary
        assert r["rollout/groups_drawn"] == len(tasks) and r["rollout/groups_kept"] == varied
        assert r["rollout/draws"] == len(r["data/batch_indices"]) <= 3
        if r["rollout/draws"] < 3:
            assert varied >= 2, "a step stops drawing once it holds groups_per_step varied groups"
        # only the varied groups' episodes reach the learner
        assert r["learner/kept_fraction"] == pytest.approx(varied / len(tasks))
        assert ("learner/skipped" in r) == (varied == 0)
    assert any(r["rollout/draws"] == 3 for r in grpo) or any(r["rollout/draws"] > 1 for r in grpo)


def _stream(index: int) -> list[Task]:
    """Batch `index` of the run's task stream (`StaticSource` at seed 0)."""
    from raygent.platform.rl.tasks import StaticSource

    source = StaticSource(
        toolcalc_tasks,
        split="train",
        seed=0,
        batch_size=2,
        task_kwargs={"difficulty": 1, "task_types": ["compare", "single"]},
    )
    return source.next(index)


def test_the_engine_s_logprobs_under_lora_match_the_learner_s_teacher_forced_pass(model_dir: Path) -> None:
    """A LoRA learner after an update: a plain engine, given the merged weights (`weights()`, what a checkpoint
    holds; weight sync sends the adapters alone, tests/platform/test_rl_core.py), samples episodes whose recorded
    logprobs equal the learner's teacher-forced pass through its adapters (1e-3, float32)."""
    from raygent.environments.toolcalc import ToolCalcEnv
    from raygent.jobs.grpo_toy.tasks import toolcalc_demonstrations
    from raygent.platform.rl.batch import samples_from_demonstration, samples_from_trajectories
    from raygent.platform.rl.learner import Learner
    from raygent.platform.rl.rollout import EpisodeRequest, EpisodeRunner
    from raygent.platform.rl.settings import LearnerSettings, LoraSettings
    from raygent.policies.backends.base import SamplingParams
    from raygent.policies.backends.hf import HFBackend
    from raygent.policies.prompts import PromptFormat

    prompt = PromptFormat(system="Use calc(EXPR) or answer(N).")
    settings = LearnerSettings(lr=5e-3, lora=LoraSettings(rank=4, alpha=8.0), micro_batch_tokens=512)
    learner = Learner(str(model_dir), settings, temperature=1.0)
    tasks = toolcalc_tasks("train", 2, 4, **TYPES)
    demos = [
        s
        for task, turns in zip(tasks, toolcalc_demonstrations(tasks), strict=True)
        for s in samples_from_demonstration(learner.tokenizer, prompt, task, turns)
    ]
    for _ in range(3):
        learner.sft(demos)  # the adapters move off their zero start
    backend = HFBackend.from_pretrained(model_dir)
    backend.load_weights(learner.weights(), version=learner.version)
    runner = EpisodeRunner(ToolCalcEnv, 4, backend.tokenizer, prompt, backend.generate, max_turns=2)
    sampling = SamplingParams(temperature=1.0, max_new_tokens=8, seed=5)
    trajectories = runner.run([EpisodeRequest(t, f"g{i}") for i, t in enumerate(tasks)], sampling)
    steps = [s for t in trajectories for s in t.steps]
    assert steps and all(s.policy_version == learner.version for s in steps)
    recomputed = learner.evaluate_logprobs(samples_from_trajectories(trajectories, [0.0] * len(trajectories)))
    for step, values in zip(steps, recomputed, strict=True):
        assert values == pytest.approx(step.logprobs, abs=1e-3)
    base = Learner(str(model_dir), LearnerSettings()).evaluate_logprobs(
        samples_from_trajectories(trajectories, [0.0] * len(trajectories))
    )
    assert max(abs(a - b) for x, y in zip(base, recomputed, strict=True) for a, b in zip(x, y, strict=True)) > 1e-2
