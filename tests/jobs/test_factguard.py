"""FactGuard's building blocks, fast and without Ray: the item generator and splits, the tools (BM25 retrieval,
clip analysis, budgets), the environment, the oracle, the agent loop through `EpisodeRunner` (in-process tools),
the decision-aware reward and the evaluation metrics, and config errors."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from raygent.environments.factguard import (
    FactGuardEnv,
    LocalTools,
    Retriever,
    build_world,
    corpus,
    demonstrate,
    factguard_tasks,
    parse_action,
)
from raygent.environments.factguard.expert import query_of
from raygent.environments.factguard.tools import ActionError, ClipAnalyzer, EpisodeTools, ToolCall
from raygent.jobs.factguard.loop import FactGuardLoop
from raygent.jobs.factguard.metrics import decision_metrics, macro_f1
from raygent.platform.config import ConfigError, load_config
from raygent.platform.contracts import Observation, Step, Task, Trajectory
from raygent.platform.rl.agent_loop import EnvAction, LoopContext, ToolResult
from raygent.policies.prompts import PromptFormat
from raygent.rewards.factguard.decision_aware import DecisionAware, OutcomeOnly


def _one(kind: str, label: str | None = None, split: str = "train", tools: bool = True) -> Task:
    for seed in range(200):
        for task in factguard_tasks(split, seed, 20, mix={kind: 1.0}, tools=tools):
            if label is None or task.params["label"] == label:
                return task
    raise AssertionError("no such item")


def test_the_mix_sets_each_kinds_share_and_splits_are_disjoint_and_seeded() -> None:
    tasks = factguard_tasks("train", 0, 600, mix={"claim": 0.5, "clip": 0.25, "kb": 0.25})
    shares = {k: sum(t.params["kind"] == k for t in tasks) / len(tasks) for k in ("claim", "clip", "kb")}
    assert abs(shares["claim"] - 0.5) < 0.07 and abs(shares["clip"] - 0.25) < 0.06 and abs(shares["kb"] - 0.25) < 0.06
    assert 0.4 < sum(t.params["label"] == "fake" for t in tasks) / len(tasks) < 0.6
    assert all(t.params["kind"] == "clip" for t in factguard_tasks("train", 1, 50, mix={"clip": 1.0}))
    train = {t.params["key"] for s in range(3) for t in factguard_tasks("train", s, 400)}
    heldout = {t.params["key"] for s in range(3) for t in factguard_tasks("heldout", s, 400)}
    assert train and heldout and not train & heldout
    assert factguard_tasks("train", 5, 20) == factguard_tasks("train", 5, 20)
    assert factguard_tasks("train", 5, 20) != factguard_tasks("train", 6, 20)
    with pytest.raises(ValueError, match="unknown kind"):
        factguard_tasks("train", 0, 1, mix={"video": 1.0})
    with pytest.raises(ValueError, match="split"):
        factguard_tasks("test", 0, 1)


def test_only_the_tool_reveals_the_evidence_of_clip_and_kb_items() -> None:
    clip_fake, clip_real = _one("clip", "fake"), _one("clip", "real")
    for task in (clip_fake, clip_real):  # the first observation and the claim say nothing about the label
        observation = FactGuardEnv().reset(options={"task": task})[0]["text"]
        assert "spliced" not in observation + task.instruction and "intact" not in observation + task.instruction
    second = clip_fake.params["second"]
    assert "spliced" in ClipAnalyzer().analyze(clip_fake.params["frames"], second, second)
    assert "spliced" not in ClipAnalyzer().analyze(clip_real.params["frames"], 0, len(clip_real.params["frames"]) - 1)
    assert ClipAnalyzer().analyze(clip_fake.params["frames"], 0, 5).startswith("error: at most 3")
    assert ClipAnalyzer().analyze(clip_fake.params["frames"], 6, 9).startswith("error: the clip has seconds")
    retriever = Retriever(0)
    for label, rating in (("fake", ": false"), ("real", ": true")):
        task = _one("kb", label)
        found = retriever.retrieve(query_of(task.params["claim"]))
        assert found == f"retrieved: fact check: {task.params['claim']}{rating}"
    assert retriever.retrieve("zzz qqq") == "retrieved: nothing found"
    assert len(build_world(0).checked_claims()) == 100 and build_world(0) is build_world(0)


def test_the_grammar_and_the_budgets() -> None:
    assert parse_action(" analyze_clip(2,3) ") == ToolCall("analyze_clip", start=2, end=3)
    assert parse_action("retrieve(brela mayor)") == ToolCall("retrieve", query="brela mayor")
    for bad, message in [
        ("verdict(maybe, 0.5)", "real or fake"),
        ("verdict(fake, 1.5)", "between 0 and 1"),
        ("retrieve()", "1 to 64"),
        ("hello", "reply with"),
    ]:
        with pytest.raises(ActionError, match=message):
            parse_action(bad)
    task = _one("kb")
    tools = EpisodeTools(LocalTools(0), task.params["frames"], {"retrieve": 1, "analyze_clip": 0})
    assert tools.call(ToolCall("retrieve", query="brela mayor")).startswith("retrieved:")
    assert tools.call(ToolCall("retrieve", query="brela mayor")) == "error: retrieve budget used (1 calls)"
    assert tools.call(ToolCall("analyze_clip", start=0, end=0)) == "error: analyze_clip budget used (0 calls)"
    assert tools.total == 3 and tools.refused == 2
    off = EpisodeTools(LocalTools(0), task.params["frames"], enabled=False)
    assert off.call(ToolCall("retrieve", query="x")) == "error: no tools in this run"


def test_the_environment_scores_verdicts_counts_tools_and_truncates() -> None:
    env = FactGuardEnv(max_turns=3)
    task = _one("kb", "fake")
    env.reset(options={"task": task})
    observation, reward, terminated, _, info = env.step(f"retrieve({query_of(task.params['claim'])})")
    assert observation["text"].endswith(": false") and reward == 0.0 and not terminated and info["tool_calls"] == 1
    _, reward, terminated, _, info = env.step("verdict(fake, 0.9)")
    assert terminated and reward == 1.0 and info["success"] and info["confidence"] == 0.9
    env.reset(options={"task": task})
    _, _, _, _, info = env.step("look")
    assert not info["valid_action"] and info["invalid_actions"] == 1
    env.step("retrieve(a)")
    _, reward, terminated, truncated, info = env.step("analyze_clip(0, 0)")
    assert truncated and not terminated and reward == 0.0 and info["success"] is False and info["verdict"] is None
    with pytest.raises(RuntimeError):
        env.step("verdict(real, 0.5)")
    with pytest.raises(ValueError, match="not a FactGuard task"):
        env.reset(options={"task": Task(id="x", env="other", instruction="")})


def test_the_oracle_is_always_right_and_calls_a_tool_only_when_needed() -> None:
    for split in ("train", "heldout"):
        for task in factguard_tasks(split, 3, 150):
            demo = demonstrate(task)
            assert demo.success
            assert len(demo.actions) == (1 if task.params["kind"] == "claim" else 2)
    for task in factguard_tasks("train", 4, 60, tools=False):  # no tools: claim items right, the rest fake at 0.5
        demo = demonstrate(task)
        assert len(demo.actions) == 1
        if task.params["kind"] != "claim":
            assert demo.actions == ["verdict(fake, 0.5)"]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from raygent.policies.tokenizer import build_tokenizer

    return build_tokenizer(corpus(300), tmp_path_factory.mktemp("fg-tok"), vocab_size=320)


def test_the_loop_answers_tools_agent_side_into_the_same_context_as_the_demonstrations(tokenizer: Any) -> None:
    from raygent.platform.rl.batch import samples_from_demonstration

    task = _one("clip", "fake")
    prompt_format = PromptFormat(system="s")
    env = FactGuardEnv()
    first, _ = env.reset(options={"task": task})
    loop = FactGuardLoop(task, first, LoopContext(tokenizer, prompt_format), budgets={"analyze_clip": 1})
    demo = demonstrate(task)
    expected = samples_from_demonstration(tokenizer, prompt_format, task, demo.turns())
    assert loop.prompt().ids == list(expected[0].prompt_ids)
    move = loop.act(demo.actions[0])
    assert isinstance(move, ToolResult) and move.name == "analyze_clip" and "spliced" in move.result
    assert loop.prompt().ids == list(expected[1].prompt_ids)  # the tool's answer, exactly as the env shows it
    assert loop.act("analyze_clip(0, 0)") == ToolResult("analyze_clip", "error: analyze_clip budget used (1 calls)")
    assert loop.act("verdict(fake, 0.9)") == EnvAction("verdict(fake, 0.9)")
    assert loop.act("nonsense") == EnvAction("nonsense")
    with pytest.raises(ValueError, match="placement"):
        FactGuardLoop(task, first, LoopContext(tokenizer, prompt_format), placement="gpu")


def test_episodes_through_the_runner_call_tools_without_environment_steps(tokenizer: Any) -> None:
    from raygent.platform.rl.rollout import EpisodeRequest, EpisodeRunner
    from raygent.policies.backends.base import Completion, SamplingParams

    def policy(prompt: str) -> str:  # reads the evidence in its prompt, as the oracle does
        if "retrieved:" in prompt:
            return "verdict(fake, 0.9)" if ": false" in prompt.split("retrieved:")[-1] else "verdict(real, 0.9)"
        claim = prompt.split("claim: ")[-1].split("\n")[0].split("<")[0].strip()
        return f"retrieve({query_of(claim)})"

    def generate(prompts: list[list[int]], params: Any) -> list[Completion]:
        out = []
        for prompt in prompts:
            text = policy(tokenizer.decode(prompt))
            ids = tokenizer.encode(text, add_special_tokens=False)
            out.append(
                Completion(
                    prompt_ids=prompt,
                    response_ids=ids,
                    logprobs=[-0.1] * len(ids),
                    text=text,
                    finish_reason="stop",
                    policy_version=0,
                )
            )
        return out

    runner = EpisodeRunner(
        FactGuardEnv,
        3,
        tokenizer,
        PromptFormat(system="s"),
        generate,
        max_turns=4,
        agent=functools.partial(FactGuardLoop, placement="local"),
    )
    tasks = factguard_tasks("heldout", 2, 6, mix={"kb": 1.0})
    trajectories = runner.run([EpisodeRequest(t, f"g{i}") for i, t in enumerate(tasks)], SamplingParams())
    for trajectory in trajectories:
        assert [s.tool_call for s in trajectory.steps] == [True, False]
        assert trajectory.steps[0].info["tool"] == "retrieve"
        assert trajectory.steps[1].info["tool_calls"] == 0  # the environment never saw the tool call
        assert trajectory.success
    judged = DecisionAware().judge(trajectories)
    assert all(j.success and j.info["tool_calls"] == 1 for j in judged)
    assert all(j.step_labels == ["correct", "correct"] for j in judged)


def _trajectory(task: Task, actions: list[str], tool_results: dict[int, str] | None = None) -> Trajectory:
    steps = []
    for index, action in enumerate(actions):
        result = (tool_results or {}).get(index)
        info = {"tool_result": result} if result is not None else {}
        steps.append(
            Step(
                observation=Observation(text="o"),
                prompt_ids=[1],
                response_ids=[2],
                logprobs=[-0.1],
                action=action,
                tool_call=result is not None,
                info=info,
                policy_version=0,
            )
        )
    return Trajectory(task=task, steps=steps, policy_version=0, group_id="g")


def test_the_decision_aware_reward_weighs_errors_tools_and_confidence() -> None:
    model = DecisionAware(calibration=0.0)
    fake, real, plain = _one("kb", "fake"), _one("kb", "real"), _one("claim", "real")
    right = model.judge([_trajectory(fake, ["verdict(fake, 0.9)"])])[0]
    missed = model.judge([_trajectory(fake, ["verdict(real, 0.6)"])])[0]
    alarm = model.judge([_trajectory(real, ["verdict(fake, 0.6)"])])[0]
    assert right.success and right.score == 1.0 and not missed.success
    assert missed.score == -1.5 and alarm.score == -1.0  # missing misinformation costs more than a false alarm
    confident = model.judge([_trajectory(real, ["verdict(fake, 0.9)"])])[0]
    assert confident.score == pytest.approx(-1.5) and confident.first_error_step == 0
    tooled = model.judge([_trajectory(fake, ["retrieve(x)", "verdict(fake, 0.9)"], {0: "retrieved: y"})])[0]
    assert tooled.score == pytest.approx(0.9) and tooled.step_labels == ["correct", "correct"]
    wasted = model.judge([_trajectory(plain, ["retrieve(x)", "verdict(real, 0.9)"], {0: "retrieved: y"})])[0]
    assert wasted.step_labels == ["redundant", "correct"] and wasted.score == pytest.approx(0.9)
    none = model.judge([_trajectory(fake, ["retrieve(x)", "hmm"], {0: "retrieved: y"})])[0]
    assert not none.success and none.score == pytest.approx(-1.6) and none.first_error_step == 1
    brier = DecisionAware(calibration=1.0).judge([_trajectory(fake, ["verdict(fake, 0.5)"])])[0]
    assert brier.score == pytest.approx(0.75)
    outcome = OutcomeOnly(false_negative=3.0).judge(
        [_trajectory(fake, ["retrieve(x)", "verdict(fake, 0.9)"], {0: "r"}), _trajectory(fake, ["verdict(real, 1)"])]
    )
    assert [j.score for j in outcome] == [1.0, 0.0]
    with pytest.raises(ValueError):
        DecisionAware(false_negativ=2.0)


def test_evaluation_metrics() -> None:
    assert macro_f1(["fake", "real"], ["fake", "real"]) == 1.0
    assert macro_f1(["fake", "fake", "real", "real"], ["fake", "real", "real", None]) == pytest.approx(
        (2 / 3 + 1 / 2) / 2  # fake: tp 1, fn 1; real: tp 1, fp 1, fn 1 (the missing verdict)
    )
    fake, real, plain = _one("kb", "fake"), _one("kb", "real"), _one("claim", "real")
    out = decision_metrics(
        [
            _trajectory(fake, ["retrieve(x)", "verdict(fake, 0.9)"], {0: "r"}),
            _trajectory(real, ["verdict(fake, 0.9)"]),
            _trajectory(plain, ["retrieve(x)", "verdict(real, 0.9)"], {0: "r"}),
            _trajectory(fake, ["verdict(real, 0.9)"]),
        ]
    )
    assert out["accuracy"] == 0.5 and out["cost_error"] == pytest.approx((1.0 + 1.5) / 4)
    assert out["tool_calls/claim"] == 1.0 and out["tool_calls/kb"] == pytest.approx(1 / 3)
    assert out["missed_fake"] == 0.25 and out["false_alarm"] == 0.25 and decision_metrics([]) == {}


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("env.task_kwargs.mix={claim: 1, video: 1}", "env.task_kwargs"),
        ("env.task_kwargs.tool=false", "did you mean 'tools'"),
        ("env.task_kwargs.frames=0", "env.task_kwargs.frames: got 0"),
        ("env.task_kwargs.tools=1", "env.task_kwargs.tools: got 1"),
        ("env.kwargs.budgets={search: 1}", "env.kwargs"),
        ("rollout.agent.kwargs.budgets={retrieve: -1}", "rollout.agent.kwargs.budgets"),
        ("reward.kwargs.false_negativ=2", "did you mean 'false_negative'"),
        ("reward.kwargs.tool_call=-1", "kwargs.tool_call"),
    ],
)
def test_a_bad_factguard_config_names_the_key(override: str, key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config("factguard", [override])


def test_the_ablations_are_single_overrides(root: Path) -> None:
    from raygent.jobs.factguard.recipe import ablation_of
    from raygent.platform.rl.initial import agent_sections
    from raygent.platform.rl.settings import AgentRunConfig

    def variant(*overrides: str) -> str:
        return ablation_of(agent_sections(load_config("factguard", list(overrides)), AgentRunConfig))

    assert variant() == "decision_aware"
    assert variant("reward.entry=raygent.rewards.factguard.decision_aware:OutcomeOnly") == "outcome_only"
    assert variant("env.task_kwargs.tools=false") == "decision_aware+no_tools"
