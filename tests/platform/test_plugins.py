"""The one component model (`platform/plugins.py`): every shipped plugin's kwargs are checked against its `Settings`
before Ray starts (exit 2 naming `<section>.kwargs.<key>`, with a "did you mean"), old spellings are refused with
their new one, a `module:attr` advantage estimator is used, and `build` refuses a class that is not the seam's."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from torch import Tensor

from raygent.platform.config import ConfigError, load_config
from raygent.platform.contracts import Observation, Step, Task, Trajectory
from raygent.platform.losses.config import LossConfig
from raygent.platform.plugins import Component, build, settings_model
from raygent.platform.rl.batch import policy_samples
from raygent.platform.rl.reward import RewardModel

ROOT = Path(__file__).resolve().parents[2]

# Every shipped class that declares a `Settings`: (entry, the job config it is set in, the override that puts it
# there with kwargs KWARGS, the key its kwargs are reported under). `test_the_table_covers_every_shipped_settings`
# keeps this list complete.
KWARGS = "{KWARGS}"
PLUGINS = [
    *[
        (f"raygent.rewards.{name}", "grpo_toy", f"reward={{entry: raygent.rewards.{name}, kwargs: {KWARGS}}}", "reward")
        for name in (
            "factguard.decision_aware:DecisionAware",
            "factguard.decision_aware:OutcomeOnly",
            "reasonaug.magr:MAGR",
            "seagent.wsm:WorldStateModel",
            "tool_cost:ToolCost",
            "answer_match:AnswerMatch",
        )
    ],
    *[
        (entry, "grpo_toy", f"tasks={{entry: {entry}, kwargs: {KWARGS}}}", "tasks")
        for entry in (
            "raygent.platform.rl.tasks:AdaptiveSource",
            "raygent.platform.rl.tasks:AdmissionGate",
            "raygent.jobs.seagent.curriculum:Curriculum",
            "raygent.jobs.seagent.curriculum:Curricula",
        )
    ],
    *[
        (entry, "grpo_toy", f"rollout.agent={{entry: {entry}, kwargs: {KWARGS}}}", "rollout.agent")
        for entry in (
            "raygent.jobs.docos.loop:DocLoop",
            "raygent.jobs.factguard.loop:FactGuardLoop",
            "raygent.jobs.xskill.loop:MemoryLoop",
        )
    ],
    ("raygent.environments.factguard.env:FactGuardEnv", "factguard", f"env.kwargs={KWARGS}", "env"),
    ("raygent.environments.reasonaug.env:AugmentationEnv", "reasonaug", f"env.kwargs={KWARGS}", "env"),
]
CHAT_LOOP = "raygent.platform.rl.agent_loop:ChatLoop"
TAKES_NONE = [  # a `Settings` without fields: any kwarg is refused
    ("raygent.platform.rl.tasks:StaticSource", f"tasks.kwargs={KWARGS}", "tasks"),
    (CHAT_LOOP, f"rollout.agent={{entry: {CHAT_LOOP}, kwargs: {KWARGS}}}", "rollout.agent"),
]
TERMS = [  # loss-term plugins: pydantic models, their knobs inline
    "raygent.jobs.reasonaug.entropy:SelectiveEntropy",
    "raygent.jobs.seagent.losses:GRPOBranchKL",
]


def _exit_2(argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """`raygent ARGV` in this process: exit 2 with one `error:` line (returned), nothing on stdout."""
    from raygent.platform.cli import main

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    assert exit_info.value.code == 2, (out, err)
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and not out, err
    return err.strip()


def _first_field(entry: str) -> str:
    from raygent.platform.config import load_entry

    model = settings_model(load_entry(entry))
    assert model is not None and model.model_fields, entry
    return next(iter(model.model_fields))


@pytest.mark.parametrize(("entry", "job", "override", "section"), PLUGINS, ids=[p[0].split(":")[1] for p in PLUGINS])
def test_a_misspelt_kwarg_of_a_shipped_plugin_exits_2_naming_it_with_a_suggestion(
    entry: str, job: str, override: str, section: str, capsys: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    field = _first_field(entry)
    typo = f"{field}x"
    err = _exit_2(["run", job, override.replace(KWARGS, f"{{{typo}: 1}}"), "--out", str(tmp_path / "r")], capsys,
                  monkeypatch)  # fmt: skip
    assert f"error: {section}.kwargs.{typo}: unknown key (did you mean '{field}'?)" in err, err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("entry", "override", "section"), TAKES_NONE, ids=[e.split(":")[1] for e, _, _ in TAKES_NONE])
def test_a_kwarg_of_a_plugin_that_takes_none_exits_2(
    entry: str, override: str, section: str, capsys: Any, monkeypatch: Any
) -> None:
    err = _exit_2(["run", "grpo_toy", override.replace(KWARGS, "{window: 4}")], capsys, monkeypatch)
    assert f"error: {section}.kwargs.window: unknown key; {entry} takes no kwargs" in err, err


@pytest.mark.parametrize("entry", TERMS)
def test_a_misspelt_knob_of_a_loss_term_plugin_exits_2_naming_it(entry: str, capsys: Any, monkeypatch: Any) -> None:
    field = "coef"
    err = _exit_2(["run", "grpo_toy", f"learner.loss.terms=[{{name: grpo}}, {{name: '{entry}', coefx: 1}}]"], capsys,
                  monkeypatch)  # fmt: skip
    assert f"learner.loss.terms: loss term '{entry}': coefx: unknown key (did you mean '{field}'?)" in err, err


def test_a_bad_value_names_the_key_below_the_section() -> None:
    gate, adaptive = "raygent.platform.rl.tasks:AdmissionGate", "raygent.platform.rl.tasks:AdaptiveSource"
    cases = {
        "reward={entry: raygent.rewards.tool_cost:ToolCost, kwargs: {cost: -1}}": "reward.kwargs.cost: got -1",
        "reward={entry: raygent.rewards.tool_cost:ToolCost, kwargs: {free: true}}": "reward.kwargs.free: got True",
        f"tasks={{entry: {gate}, kwargs: {{low: 0.9, high: 0.1}}}}": "tasks.kwargs: the band",
        f"tasks={{entry: {gate}, kwargs: {{source: {{entry: {adaptive}, kwargs: {{florr: 0}}}}}}}}": (
            "tasks.kwargs.source.kwargs.florr: unknown key (did you mean 'floor'?)"
        ),
        "reward={entry: raygent.rewards.seagent.wsm:WorldStateModel, kwargs: {backend: vlm, model: m}}": (
            "reward.kwargs.endpoint: the vlm backend needs"
        ),
        "trainer.hooks=[{entry: raygent.jobs.factguard.recipe:DecisionCurve, kwargs: {}}]": "trainer.hooks",
    }
    for override, message in cases.items():
        if "DecisionCurve" in override:  # a hook without Settings passes validation; `build` checks it when built
            load_config("grpo_toy", [override])
            continue
        with pytest.raises(ConfigError) as info:
            load_config("grpo_toy", [override])
        assert str(info.value).startswith(message), str(info.value)
    with pytest.raises(ConfigError, match=r"^env\.kwargs\.budgets: unknown tool\(s\) \['search'\]"):
        load_config("factguard", ["env.kwargs.budgets={search: 1}"])


def test_the_old_spellings_say_how_they_are_now_spelled(capsys: Any, monkeypatch: Any) -> None:
    err = _exit_2(["run", "grpo_toy", "tasks.source=raygent.platform.rl.tasks:AdaptiveSource"], capsys, monkeypatch)
    assert err == "error: tasks.source is now spelled tasks.entry"
    err = _exit_2(["run", "docos", "rollout.agent_kwargs={hits: 2}"], capsys, monkeypatch)
    assert err == "error: rollout.agent_kwargs is now spelled rollout.agent.kwargs"


def test_an_agent_loop_may_be_named_by_its_entry_alone() -> None:
    config: Any = load_config("grpo_toy", ["rollout.agent=raygent.jobs.docos.loop:DocLoop"])
    assert config.rollout.agent == Component(entry="raygent.jobs.docos.loop:DocLoop")
    config = load_config("docos", ["rollout.agent.kwargs.hits=5"])
    assert config.rollout.agent.kwargs == {"hits": 5, "tool_budget": 3, "timeout_s": 2.0}


def reversed_advantages(rewards: Tensor, group_index: Tensor, *, eps: float = 1e-6) -> Tensor:
    """A plugin estimator for the test: minus the reward, whatever the group."""
    return -rewards


def test_a_module_attr_advantage_estimator_is_used() -> None:
    def trajectory(group: str, reward: float) -> Trajectory:
        step = Step(observation=Observation(text="o"), prompt_ids=[1, 2], response_ids=[3], logprobs=[-1.0],
                    action="a", reward=reward, policy_version=0)  # fmt: skip
        return Trajectory(task=Task(id="t", env="e", instruction="i"), steps=[step], success=reward > 0, group_id=group)

    batch = [trajectory("g", 1.0), trajectory("g", 0.0), trajectory("h", 3.0)]
    loss = LossConfig(advantage="test_plugins:reversed_advantages")
    samples, _ = policy_samples(batch, loss)
    assert [s.advantage for s in samples] == [-1.0, 0.0, -3.0]
    builtin, _ = policy_samples(batch, LossConfig(advantage="rloo"))
    assert [s.advantage for s in builtin] == [1.0, -1.0, 0.0]
    with pytest.raises(ValueError, match="cannot be called with 2 positional argument"):
        LossConfig(advantage="os:getcwd")


def test_build_refuses_a_class_that_is_not_the_seams() -> None:
    with pytest.raises(TypeError, match=r"'collections:OrderedDict' built a OrderedDict, which does not implement "
                       r"RewardModel \(judge\)"):  # fmt: skip
        build(Component(entry="collections:OrderedDict"), RewardModel)
    judge = build(Component(entry="raygent.rewards.tool_cost:ToolCost", kwargs={"free": 1}), RewardModel)
    assert judge.free == 1 and judge.cost == 0.1  # type: ignore[attr-defined]


def test_the_table_covers_every_shipped_settings() -> None:
    """Every class in the shipped packages that declares a `Settings` (nested or assigned) is in a table above."""
    declared = set()
    for package in ("platform", "rewards", "environments", "jobs"):
        for path in (ROOT / package).rglob("*.py"):
            module = ".".join(("raygent", *path.relative_to(ROOT).with_suffix("").parts))
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef) and any(_declares_settings(item) for item in node.body):
                    declared.add(f"{module}:{node.name}")
    covered = {p[0] for p in PLUGINS} | {e for e, _, _ in TAKES_NONE}
    assert declared - covered == set()


def _declares_settings(item: ast.stmt) -> bool:
    if isinstance(item, ast.ClassDef):
        return item.name == "Settings"
    targets = item.targets if isinstance(item, ast.Assign) else [item.target] if isinstance(item, ast.AnnAssign) else []
    return any(isinstance(t, ast.Name) and t.id == "Settings" for t in targets)
