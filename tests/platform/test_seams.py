"""The RL core's seams, each with a plugin defined here (outside `platform/`) that changes a run's behaviour: a
reward model that rewrites success, a task source that reacts to judged results, an agent loop with an agent-side
tool call, a trainer hook with checkpointed state, and a loss term. One small ToolCalc run on an embedded cluster
carries all five; bad plugin names exit 2 naming the key before Ray starts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
import ray
from torch import Tensor

from raygent.environments.toolcalc import corpus
from raygent.platform.contracts import Judgement, Task, Trajectory
from raygent.platform.losses.result import LossResult
from raygent.platform.losses.terms import TermInputs
from raygent.platform.rl.agent_loop import ChatLoop, EnvAction, ToolResult
from raygent.platform.rl.hooks import HookContext, TrainerHook
from raygent.platform.rl.settings import AgentRunConfig
from raygent.platform.rl.tasks import StaticSource
from raygent.platform.rl.trainer import AgentTrainer
from raygent.policies.presets import build_tiny_model
from raygent.policies.prompts import Turn
from raygent.policies.tokenizer import build_tokenizer

from conftest import init_ray_importing, raygent

HERE = Path(__file__).resolve().parent
HINT = "memory says: use calc"


class CalcJudge:
    """Success iff the episode's first environment action called the calculator (whatever the answer)."""

    def judge(self, trajectories: Sequence[Trajectory]) -> list[Judgement]:
        out = []
        for t in trajectories:
            acted = [s for s in t.steps if not s.tool_call]
            ok = bool(acted) and acted[0].action.startswith("calc(")
            out.append(Judgement(score=float(ok), success=ok, reason="calc-judge", first_error_step=None if ok else 0))
        return out


class ReactingSource(StaticSource):
    """`single` tasks until it has observed a judged batch, then `compare` tasks; counts what it observed."""

    def __init__(self, task_fn: Any, **kwargs: Any) -> None:
        super().__init__(task_fn, **kwargs)
        self.observed = 0

    def next(self, index: int) -> list[Task]:
        kind = "compare" if self.observed else "single"
        self.task_kwargs = {**self.task_kwargs, "task_types": [kind]}
        return self.draw(index, self.batch_size)

    def observe(self, trajectories: Sequence[Trajectory]) -> None:
        assert all(t.judgement is not None for t in trajectories)
        self.observed += len(trajectories)

    def state(self) -> dict[str, Any]:
        return {"observed": self.observed}

    def load_state(self, state: dict[str, Any]) -> None:
        self.observed = int(state.get("observed", 0))


class MemoryLoop(ChatLoop):
    """The episode's first policy call is answered from a memory (an agent-side tool), not by the environment."""

    def __init__(self, task: Task, observation: Any, context: Any) -> None:
        super().__init__(task, observation, context)
        self.consulted = False

    def act(self, text: str) -> EnvAction | ToolResult:
        if not self.consulted:
            self.consulted = True
            self.history.append(Turn(observation=self.current.text, action=text))
            self.current = self.current.model_copy(update={"text": f"{self.current.text}\n{HINT}"})
            return ToolResult("memory", HINT)
        return super().act(text)


class CountingHook(TrainerHook):
    """Counts updates (checkpointed) and checks what it is shown."""

    def __init__(self) -> None:
        self.updates = 0
        self.tool_first = True

    def on_trajectories(self, step: int, trajectories: list[Trajectory]) -> list[Trajectory]:
        for t in trajectories:
            if not t.infra_failure:
                assert t.judgement is not None and t.judgement.reason == "calc-judge"
                self.tool_first &= t.steps[0].tool_call
        return trajectories

    def after_update(self, step: int, trajectories: Sequence[Trajectory], context: HookContext) -> dict[str, float]:
        self.updates += 1
        return {"hook/updates": float(self.updates), "hook/tool_first": float(self.tool_first)}

    def state(self) -> Any:
        return {"updates": self.updates}

    def load_state(self, state: Any) -> None:
        self.updates = int(state["updates"])


class LengthPenalty:
    """A plugin loss term: coef · mean log-probability of the covered tokens (pushes them down); covers failures."""

    needs_reference: ClassVar[bool] = False

    def __init__(self, coef: float = 0.1) -> None:
        self.name, self.coef = "length_penalty", coef

    def covers(self, advantages: Tensor, failure: Tensor) -> Tensor:
        return failure.bool()

    def loss(self, inputs: TermInputs, mask: Tensor, denominator: float) -> LossResult:
        value = self.coef * (inputs.logprobs * mask).sum() / denominator
        return LossResult(value, {"loss": value.detach(), "covered": mask.sum().detach()})


TOOLCALC = {
    "id": "raygent/ToolCalc-v0",
    "registration": "raygent.environments.toolcalc:register_envs",
    "tasks": "raygent.jobs.grpo_toy.tasks:toolcalc_tasks",
    "task_kwargs": {"difficulty": 1},
}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("seams")
    tokenizer = build_tokenizer(corpus(n_tasks=300), directory, vocab_size=320)
    return build_tiny_model("tiny-qwen2", tokenizer, directory, seed=4)


@pytest.mark.ray
@pytest.mark.slow
def test_every_seam_changes_a_run(model_dir: Path, tmp_path: Path) -> None:
    config = AgentRunConfig.model_validate(
        {
            "env": TOOLCALC,
            "rollout": {
                "num_workers": 1,
                "envs_per_worker": 4,
                "group_size": 2,
                "groups_per_step": 2,
                "max_turns": 3,
                "engine_num_cpus": 0,
                "sampling": {"temperature": 1.0, "max_new_tokens": 8},
                "agent": "test_seams:MemoryLoop",
            },
            "learner": {
                "num_cpus": 0,
                "lr": 1e-3,
                "loss": {"terms": [{"name": "grpo"}, {"name": "test_seams:LengthPenalty", "coef": 0.5}]},
            },
            "trainer": {"steps": 3, "eval_tasks": 0, "tensorboard": False, "checkpoint_every": 1},
            "reward": {"entry": "test_seams:CalcJudge", "num_actors": 2},
            "tasks": {"entry": "test_seams:ReactingSource"},
        }
    )
    hook = CountingHook()
    init_ray_importing(HERE)  # the actors import this module (and the conftest it imports) by name
    try:
        trainer = AgentTrainer(config, tmp_path, str(model_dir), hooks=[hook])
        try:
            trainer.run()
        finally:
            trainer.shutdown()
    finally:
        ray.shutdown()
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    grpo = [r for r in records if r["stage"] == "grpo"]
    # the judge: its verdicts replace the checker's, are measured against the checker, and are kept per episode
    assert all("judge/agreement" in r and r["judge/success"] == r["rollout/success"] for r in grpo)
    judged = [j for r in records if r["stage"] == "judge" for j in r["judge/judgements"]]
    assert len(judged) == sum(r["rollout/samples"] for r in grpo) and {j["reason"] for j in judged} == {"calc-judge"}
    # the task source reacted to the first judged batch: single-step tasks first, comparisons after
    compare = ("larger", "smaller")
    assert not any(k in tid for tid in grpo[0]["data/task_ids"] for k in compare)
    assert all(any(k in tid for k in compare) for r in grpo[1:] for tid in r["data/task_ids"])
    # the agent loop: every episode's first call was the memory tool, and the hook saw it; the hook counted
    assert [r["hook/updates"] for r in grpo] == [1.0, 2.0, 3.0] and all(r["hook/tool_first"] == 1.0 for r in grpo)
    # the plugin loss term trained on the judged failure steps
    assert any(r.get("learner/length_penalty/covered", 0) > 0 for r in grpo)
    state = json.loads((tmp_path / "checkpoints" / "grpo_000003" / "trainer_state.json").read_text())
    assert state["hooks"] == {"0:CountingHook": {"updates": 3}}
    assert state["tasks"]["observed"] == sum(r["rollout/samples"] for r in grpo)


@pytest.mark.parametrize(
    ("override", "key"),
    [  # one in the edit loop; each is a fresh `raygent` process (~9 s of imports), so the rest run in `make test`
        ("reward.entry=no_such_module:Judge", "reward.entry"),
        pytest.param("rollout.agent=raygent.platform.rl.agent_loop:NoLoop", "rollout.agent", marks=pytest.mark.slow),
        pytest.param("tasks.entry=raygent.platform.rl.tasks:Nope", "tasks.entry", marks=pytest.mark.slow),
        pytest.param("learner.loss.terms=[{name: grpoo}]", "learner.loss.terms", marks=pytest.mark.slow),
        pytest.param("learner.loss.advantage=rlooo", "learner.loss.advantage", marks=pytest.mark.slow),
    ],
)
def test_a_bad_plugin_name_exits_2_naming_the_key(override: str, key: str, tmp_path: Path) -> None:
    result = raygent("run", "grpo_toy_tiny", override, "--out", str(tmp_path / "run"), timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert key in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists()


def test_judgement_application_replaces_or_adds() -> None:
    from raygent.platform.contracts import Observation, Step
    from raygent.platform.rl.batch import samples_from_trajectories
    from raygent.platform.rl.reward import apply_judgement, judge_metrics

    task = Task(id="t", env="e", instruction="i")
    steps = [
        Step(
            observation=Observation(text="o"),
            prompt_ids=[1],
            response_ids=[2],
            logprobs=[-0.1],
            action="a",
            reward=r,
            failure=f,
            policy_version=0,
        )
        for r, f in ((0.0, False), (1.0, True))
    ]
    trajectory = Trajectory(task=task, steps=steps, success=False, group_id="g")
    verdict = Judgement(score=0.25, success=True, first_error_step=0)
    replaced = apply_judgement(trajectory, verdict, "replace")
    assert replaced.success and replaced.reward == 0.25 and [s.failure for s in replaced.steps] == [True, False]
    added = apply_judgement(trajectory, verdict, "add")
    assert added.success is False and added.reward == 1.25
    stats = judge_metrics([trajectory], [replaced])
    assert stats["judge/agreement"] == 0.0 and stats["judge/first_error_accuracy"] == 0.0  # checker: step 1
    labels = Judgement(score=0, success=False, step_labels=["correct", "error"])
    labelled = apply_judgement(trajectory, labels, "replace")
    assert [s.failure for s in labelled.steps] == [False, True]
    assert judge_metrics([trajectory], [labelled])["judge/agreement"] == 1.0
    broken = Judgement(score=1.0, success=True, reason="endpoint failed", infra_failure=True)
    failed = apply_judgement(trajectory, broken, "replace")
    assert failed.infra_failure and failed.steps == trajectory.steps and failed.reward == trajectory.reward
    assert samples_from_trajectories([failed], [1.0]) == []  # not trained on
    stats = judge_metrics([trajectory, trajectory], [failed, replaced])
    assert stats["judge/infra_failures"] == 1.0 and stats["judge/success"] == 1.0 and stats["judge/agreement"] == 0.0


def _runner(model_dir: Path, generate: Any, agent: Any) -> Any:
    from raygent.environments.toolcalc import ToolCalcEnv
    from raygent.platform.rl.rollout import EpisodeRunner
    from raygent.policies.loading import load_tokenizer
    from raygent.policies.prompts import PromptFormat

    return EpisodeRunner(
        ToolCalcEnv, 2, load_tokenizer(model_dir), PromptFormat(system="s"), generate, max_turns=3, agent=agent
    )


def _scripted(model_dir: Path, answer: Any) -> Any:
    """A policy without a model: `answer(prompt ids)` is the text it replies."""
    from raygent.policies.backends.base import Completion
    from raygent.policies.loading import load_tokenizer

    tokenizer = load_tokenizer(model_dir)

    def generate(prompts: list[list[int]], params: Any) -> list[Completion]:
        out = []
        for prompt in prompts:
            text = answer(tokenizer.decode(prompt))
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

    return generate


def test_an_agent_side_tool_call_answers_into_the_context_without_an_environment_step(model_dir: Path) -> None:
    from raygent.jobs.grpo_toy.tasks import toolcalc_tasks
    from raygent.platform.rl.rollout import EpisodeRequest
    from raygent.policies.backends.base import SamplingParams

    prompts: list[str] = []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        return "answer(0)"

    runner = _runner(model_dir, _scripted(model_dir, answer), MemoryLoop)
    tasks = toolcalc_tasks("train", 3, 2, difficulty=1)
    trajectories = runner.run([EpisodeRequest(t, f"g{i}") for i, t in enumerate(tasks)], SamplingParams())
    for t in trajectories:
        assert [s.tool_call for s in t.steps] == [True, False]  # the tool call, then the answer that ends it
        assert t.steps[0].info["tool_result"] == HINT and t.steps[0].reward == 0.0
    assert sum(HINT in p for p in prompts) == 2 and not any(HINT in p for p in prompts[:2])


def test_a_rule_based_reward_model_agrees_with_the_environment_checker(model_dir: Path) -> None:
    from raygent.jobs.grpo_toy.tasks import toolcalc_tasks
    from raygent.platform.rl.reward import apply_judgement, judge_metrics
    from raygent.platform.rl.rollout import EpisodeRequest
    from raygent.policies.backends.base import SamplingParams
    from raygent.rewards.answer_match import AnswerMatch

    tasks = toolcalc_tasks("train", 5, 6, difficulty=1)
    answers = {t.instruction: t.params["answer"] for t in tasks}

    def answer(prompt: str) -> str:  # right on half the tasks
        instruction = next(i for i in answers if i in prompt)
        value = answers[instruction]
        return f"answer({value if list(answers).index(instruction) % 2 == 0 else value + 1})"

    runner = _runner(model_dir, _scripted(model_dir, answer), ChatLoop)
    trajectories = runner.run([EpisodeRequest(t, f"g{i}") for i, t in enumerate(tasks)], SamplingParams())
    assert [t.success for t in trajectories] == [True, False] * 3
    judged = [
        apply_judgement(t, j, "replace") for t, j in zip(trajectories, AnswerMatch().judge(trajectories), strict=True)
    ]
    assert judge_metrics(trajectories, judged)["judge/agreement"] == 1.0
    assert [t.reward for t in judged] == [1.0, 0.0] * 3
