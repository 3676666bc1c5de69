"""ToolCalc, the RL core's proof environment: env contract, expert, degenerate policies, calculator safety, splits."""

from __future__ import annotations

import doctest
import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from raygent.environments.toolcalc import calculator, checker, grammar, tasks
from raygent.environments.toolcalc.calculator import CalcError, evaluate
from raygent.environments.toolcalc.corpus import ERROR_TEXTS, corpus
from raygent.environments.toolcalc.env import ToolCalcEnv, register_envs
from raygent.environments.toolcalc.expert import demonstrate
from raygent.environments.toolcalc.grammar import CHARSET, Answer, ToolCall, parse_action, parse_result
from raygent.environments.toolcalc.tasks import (
    DIFFICULTY_RANGES,
    ENV_ID,
    SPLITS,
    TASK_TYPES,
    TEMPLATES,
    generate_tasks,
    make_task,
    split_of,
)

DIFFICULTIES = sorted(DIFFICULTY_RANGES)


def _success_rate(env: ToolCalcEnv, policy, task_list) -> float:
    """Run `policy(observation, rng) -> action` on each task; the fraction of episodes the checker accepted."""
    rng = np.random.default_rng(0)
    successes = 0
    for task in task_list:
        observation, _ = env.reset(options={"task": task})
        done = False
        while not done:
            observation, _, terminated, truncated, info = env.step(policy(observation, rng))
            done = terminated or truncated
        successes += bool(info["success"])
    return successes / len(task_list)


def test_passes_gymnasium_env_checker():
    register_envs()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(gymnasium.make(ENV_ID).unwrapped)
        check_env(ToolCalcEnv(split="heldout", task_types=("chain",), difficulty=(0, 2), max_turns=3))
    assert not [w for w in caught if "spec" not in str(w.message)], [str(w.message) for w in caught]


def test_register_envs_is_explicit_and_idempotent():
    assert register_envs() == [ENV_ID]
    assert register_envs() == [ENV_ID]
    env = gymnasium.make(ENV_ID, split="heldout", difficulty=2, max_turns=5)
    assert isinstance(env.unwrapped, ToolCalcEnv)
    assert env.unwrapped.split == "heldout" and env.unwrapped.max_turns == 5
    observation, info = env.reset(seed=3)
    assert info["split"] == "heldout" and info["difficulty"] == 2 and observation["turn"] == 0


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("difficulty", DIFFICULTIES)
@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_scripted_expert_solves_every_task(task_type, difficulty, split):
    env = ToolCalcEnv()
    task_list = generate_tasks(40, seed=difficulty, split=split, task_types=[task_type], difficulty=difficulty)
    for task in task_list:
        demo = demonstrate(task, env)
        assert demo.success and demo.reward == 1.0, demo.turns()
        assert len(demo.actions) == task.params["tool_calls"] + 1
        assert all(isinstance(parse_action(action), ToolCall) for action in demo.actions[:-1])
        assert parse_action(demo.actions[-1]) == Answer(task.params["answer"])


def test_every_template_is_reachable_and_solved():
    env = ToolCalcEnv()
    for name, spec in TEMPLATES.items():
        operands = {2: [9, 4], 3: [9, 4, 7]}[spec.arity]
        demo = demonstrate(make_task(name, operands), env)
        assert demo.success, (name, demo.turns())


def test_degenerate_policies_rarely_succeed():
    env = ToolCalcEnv(difficulty=(0, 1, 2))
    task_list = generate_tasks(300, seed=7, difficulty=(0, 1, 2))
    assert _success_rate(env, lambda obs, rng: "answer(0)", task_list) == 0.0
    assert _success_rate(env, lambda obs, rng: env.action_space.sample(), task_list) <= 0.01
    guess = _success_rate(env, lambda obs, rng: f"answer({rng.integers(2, 1000)})", task_list)
    assert guess <= 0.05
    calc_then_guess = _success_rate(
        env, lambda obs, rng: "calc(1+1)" if obs["turn"] < 3 else f"answer({rng.integers(2, 100)})", task_list
    )
    assert calc_then_guess <= 0.05


def test_invalid_actions_are_counted_and_do_not_end_the_episode():
    env = ToolCalcEnv(max_turns=4)
    env.reset(options={"task": make_task("a*b+c", [37, 12, 5])})
    script = [
        ("hello", grammar.PARSE_ERROR, False),
        ("lookup(x)", "error: unknown tool lookup, use calc(EXPR) or answer(N)", False),
        ("answer(four)", grammar.ANSWER_ERROR, False),
    ]
    for turn, (action, text, valid) in enumerate(script, start=1):
        observation, reward, terminated, truncated, info = env.step(action)
        assert observation == {"text": text, "turn": turn, "last_action_error": text}
        assert env.observation_space.contains(observation)
        assert (reward, terminated, truncated, info["valid_action"]) == (0.0, False, False, valid)
        assert info["invalid_actions"] == turn
    observation, reward, terminated, truncated, info = env.step("calc(37*12+5)")
    assert observation["text"] == "error: calc: too many operations (max 1)"
    assert info["valid_action"] and info["tool_errors"] == 1 and info["tool_calls"] == 1
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["success"] is False and info["answer"] is None and info["invalid_actions"] == 3
    with pytest.raises(RuntimeError):
        env.step("answer(449)")


def test_odd_inputs_stay_inside_the_observation_space():
    env = ToolCalcEnv(max_turns=8)
    env.reset(seed=0)
    for action in ["", "calc(é+1)", "x" * 500, "calc(" + "(" * 50 + ")", "answer(1" + "0" * 40 + ")", 17]:
        observation, *_ = env.step(action)
        assert env.observation_space.contains(observation), observation


def test_answer_ends_the_episode_with_the_checker_verdict():
    env = ToolCalcEnv()
    task = make_task("a*b", [6, 7])
    env.reset(options={"task": task.model_dump()})
    _, reward, terminated, truncated, info = env.step(" answer( 42 ) ")
    assert (reward, terminated, truncated, info["success"], info["answer"]) == (1.0, True, False, True, 42)
    env.reset(options={"task": task})
    assert env.step("answer(41)")[1:3] == (0.0, True)
    assert checker.check(task, 42).success and not checker.check(task, "x").success
    with pytest.raises(ValueError, match="not a ToolCalc task"):
        env.reset(options={"task": {"id": "t", "env": "other/Env-v0", "instruction": "hi"}})


@pytest.mark.parametrize(
    "unsafe",
    [
        "__import__('os').system('ls')",
        "open('/etc/passwd')",
        "2**64",
        "7/2",
        "1e9",
        "1.5+1",
        "a+b",
        "9" * 13,
        "(" * 20 + "1" + ")" * 20,
        "1+" * 40 + "1",
        "999999999*999999999",
        "٣+1",
        "",
        "1+",
        "(1+2",
        "1 2",
    ],
)
def test_calculator_rejects_unsafe_or_malformed_input(unsafe):
    with pytest.raises(CalcError):
        evaluate(unsafe, max_ops=None)


def test_calculator_evaluates_and_limits_operations():
    assert evaluate("37*12") == 444
    assert evaluate(" ( 3 + 4 ) * 5 ") == 35
    assert evaluate("-5*3+20") == 5
    assert evaluate("2*3+4*5") == 26
    assert evaluate("444+5", max_ops=1) == 449
    with pytest.raises(CalcError, match="too many operations"):
        evaluate("37*12+5", max_ops=1)


def test_heldout_tasks_never_overlap_training_tasks():
    train = generate_tasks(3000, seed=0, split="train", difficulty=DIFFICULTIES)
    heldout = generate_tasks(3000, seed=0, split="heldout", difficulty=DIFFICULTIES)
    assert {t.id for t in train}.isdisjoint({t.id for t in heldout})
    assert {t.instruction for t in train}.isdisjoint({t.instruction for t in heldout})
    for task in train + heldout:
        assert split_of(task.params["template"], task.params["operands"]) == task.params["split"]
    assert {t.params["split"] for t in train} == {"train"} and {t.params["split"] for t in heldout} == {"heldout"}
    low, high = DIFFICULTY_RANGES[0]
    pairs = [(a, b) for a in range(low, high + 1) for b in range(low, high + 1)]
    heldout_share = np.mean([split_of("a*b", pair) == "heldout" for pair in pairs])
    assert 0.1 < heldout_share < 0.3
    for task_type in TASK_TYPES:
        assert any(t.params["task_type"] == task_type for t in heldout)


def test_generation_and_episodes_are_deterministic_by_seed():
    kwargs = {"split": "train", "difficulty": (0, 1, 2)}
    assert generate_tasks(50, seed=11, **kwargs) == generate_tasks(50, seed=11, **kwargs)
    assert generate_tasks(50, seed=11, **kwargs) != generate_tasks(50, seed=12, **kwargs)
    unique = generate_tasks(40, seed=1, task_types=["compare"], difficulty=0, unique=True)
    assert len({t.id for t in unique}) == 40
    first, second = ToolCalcEnv(difficulty=(0, 1, 2)), ToolCalcEnv(difficulty=(0, 1, 2))
    for seed in range(5):
        assert first.reset(seed=seed) == second.reset(seed=seed)
        assert first.task == second.task
        assert first.step("calc(1+1)") == second.step("calc(1+1)")


def test_templates_limit_the_draw_to_the_templates_named():
    tasks = generate_tasks(200, seed=3, task_types=["compare", "single"], templates=["larger", "a+b"])
    assert {t.params["template"] for t in tasks} == {"larger", "a+b"}
    # a type none of whose templates is named is not drawn
    assert {t.params["task_type"] for t in generate_tasks(20, seed=3, templates=["a*b"])} == {"single"}
    with pytest.raises(ValueError, match="unknown templates"):
        generate_tasks(5, seed=0, templates=["a/b"])
    with pytest.raises(ValueError, match="none of the task types"):
        generate_tasks(5, seed=0, task_types=["compare"], templates=["a*b"])


def test_make_task_validates_operands():
    with pytest.raises(ValueError):
        make_task("a-b", [3, 5])
    with pytest.raises(ValueError):
        make_task("larger", [4, 4])
    with pytest.raises(ValueError):
        make_task("nope", [1, 2])
    task = make_task("(a+b)*c", [3, 4, 5], difficulty=0)
    assert (task.instruction, task.params["answer"], task.env) == ("What is (3+4)*5?", 35, ENV_ID)


def test_observations_and_actions_are_short():
    env = ToolCalcEnv()
    for task in generate_tasks(200, seed=5, difficulty=2, split="heldout"):
        demo = demonstrate(task, env)
        assert max(len(text) for text in demo.observations) <= 40
        assert max(len(action) for action in demo.actions) <= 20
    assert max(len(text) for text in ERROR_TEXTS) <= 60


def test_corpus_covers_the_strings_a_policy_reads_and_writes():
    lines = corpus(n_tasks=300, seed=0)
    text = "\n".join(lines)
    assert set(text) <= set(CHARSET) | {"\n"}
    assert set(CHARSET) <= set(text)
    for fragment in ["What is", "Which is larger", "Which is smaller", "calc(", "result: ", "answer(", "error: "]:
        assert fragment in text
    heldout = {t.instruction for t in generate_tasks(300, seed=0, split="heldout", difficulty=DIFFICULTIES)}
    assert not heldout & {line.split("\n", 1)[0] for line in lines}


def test_grammar_round_trips():
    assert parse_action(grammar.format_call("12*3")) == ToolCall("calc", "12*3")
    assert parse_action(grammar.format_answer(-7)) == Answer(-7)
    assert parse_result(grammar.render_result(5047)) == 5047
    assert parse_result(grammar.PARSE_ERROR) is None


def test_doctests():
    for module in (calculator, checker, grammar, tasks):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def test_imports_neither_ray_nor_torch():
    code = (
        "import sys, raygent.environments.toolcalc as t; t.register_envs(); t.corpus(5);"
        "bad = [m for m in ('ray', 'torch') if m in sys.modules]; assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
