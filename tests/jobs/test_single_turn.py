"""The `single_turn` job: a task function (or a list of prompts) and a reward function by `module:attr`.

The chat framing renders exactly the user's message (no system message of raygent's, no `Task:`/`Observation:`);
the one-step environment gives the reward function's value; a bad `single_turn` entry exits 2 naming the key before
Ray starts; and one tiny run on the embedded cluster trains GRPO only and reports that it did.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from raygent.environments.single_turn import SingleTurnEnv, prompt_tasks, register_envs, score
from raygent.platform.contracts import Task
from raygent.policies.prompts import DEFAULT_SYSTEM, PromptFormat, Turn, encode_prompt, render_prompt

from conftest import PLUGINS, raygent, records

sys.path.insert(0, str(PLUGINS))  # the plugin module the configs below name, importable in this process too

TASKS = "single_turn_task:letter_tasks"
CONSTANT = "single_turn_task:constant_reward"


@pytest.fixture(scope="module")
def chat_tokenizer(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from raygent.policies.tokenizer import build_tokenizer

    return build_tokenizer(["Say a 1.", "What is 2+3?"] * 20, tmp_path_factory.mktemp("tok"), vocab_size=300)


def test_chat_framing_renders_exactly_the_users_message(chat_tokenizer) -> None:  # type: ignore[no-untyped-def]
    chat = PromptFormat(framing="chat")
    assert chat.messages("What is 2+3?", "") == [chat.messages("What is 2+3?", "")[0]]
    (message,) = chat.messages("What is 2+3?", "")
    assert (message.role, message.content) == ("user", "What is 2+3?")
    text = render_prompt(chat_tokenizer, chat.messages("What is 2+3?", ""))
    expected = chat_tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is 2+3?"}], tokenize=False, add_generation_prompt=True
    )
    assert text == expected
    assert "Task:" not in text and "Observation:" not in text and DEFAULT_SYSTEM not in text
    assert encode_prompt(chat_tokenizer, chat.messages("What is 2+3?", "")) == chat_tokenizer.encode(
        expected, add_special_tokens=False
    )
    # a later turn: the observation as it is; a system message only when one is given
    later = PromptFormat(framing="chat", system="Be brief.").messages("Q", "more", [Turn(observation="", action="A")])
    assert [(m.role, m.content) for m in later] == [
        ("system", "Be brief."),
        ("user", "Q"),
        ("assistant", "A"),
        ("user", "more"),
    ]
    # the agent framing is unchanged: raygent's system message and the prefixes
    agent = PromptFormat().messages("Q", "screen")
    assert [(m.role, m.content) for m in agent] == [
        ("system", DEFAULT_SYSTEM),
        ("user", "Task: Q\n\nObservation:\nscreen"),
    ]


def test_the_job_renders_the_task_instruction_through_the_chat_loop(chat_tokenizer) -> None:  # type: ignore[no-untyped-def]
    from raygent.jobs.single_turn.recipe import SingleTurnConfig
    from raygent.platform.rl.agent_loop import ChatLoop, LoopContext

    config = SingleTurnConfig.model_validate({"single_turn": {"tasks": TASKS, "reward": CONSTANT}})
    task = Task(id="t", env="single_turn", instruction="Say a 1.")
    env = SingleTurnEnv(config.env.kwargs["reward"])
    observation, _ = env.reset(options={"task": task})
    loop = ChatLoop(task, observation, LoopContext(chat_tokenizer, config.policy.prompt))
    user = [{"role": "user", "content": "Say a 1."}]
    expected = chat_tokenizer.apply_chat_template(user, tokenize=False, add_generation_prompt=True)
    assert loop.prompt().ids == chat_tokenizer.encode(expected, add_special_tokens=False)


def test_the_environment_gives_the_reward_functions_value() -> None:
    register_envs()
    task = Task(id="t", env="single_turn", instruction="Say a 1.", params={"letter": "a"})
    env = SingleTurnEnv("single_turn_task:length_reward", success_threshold=3.0)
    observation, _ = env.reset(options={"task": task})
    assert observation == {"text": ""}
    _, reward, terminated, truncated, info = env.step("abcd")
    assert (reward, terminated, truncated, info["success"]) == (4.0, True, False, True)
    env.reset(options={"task": task.model_dump()})  # a task's dict, as over JSON
    _, reward, _, _, info = env.step("ab")
    assert (reward, info["success"]) == (2.0, False)  # below the threshold
    verdict = SingleTurnEnv("single_turn_task:verdict_reward")
    verdict.reset(options={"task": task})
    assert verdict.step("a")[1:] == (0.5, True, False, {"success": True, "valid_action": True})
    with pytest.raises(RuntimeError, match="before reset"):
        verdict.step("a")  # one step per episode
    with pytest.raises(ValueError, match="needs options"):
        env.reset()
    with pytest.raises(TypeError, match="expected a float or"):
        score(lambda c, t: "1", "x", task)
    with pytest.raises(ValueError, match="finite"):
        score(lambda c, t: float("nan"), "x", task)


def test_a_list_of_prompts_is_a_task_function() -> None:
    prompts = ["Say hi.", {"prompt": "What is 2+3?", "answer": 5}]
    train = prompt_tasks("train", 3, 6, prompts)
    assert len(train) == 6 and {t.instruction for t in train} <= {"Say hi.", "What is 2+3?"}
    assert train == prompt_tasks("train", 3, 6, prompts)  # a pure function of the seed
    held = prompt_tasks("heldout", 0, 10, prompts, eval_prompts=[{"prompt": "What is 1+1?", "answer": 2}])
    assert [(t.instruction, t.params) for t in held] == [("What is 1+1?", {"answer": 2})]
    assert [t.instruction for t in prompt_tasks("heldout", 0, 10, prompts)] == ["Say hi.", "What is 2+3?"]


BAD = [
    (["single_turn.reward=single_turn_task:nope"], "single_turn.reward: 'single_turn_task:nope': module"),
    (["single_turn.reward=raygent.nowhere:f"], "single_turn.reward: 'raygent.nowhere:f': no module named"),
    (["single_turn.reward=os:getcwd"], "single_turn.reward: 'os:getcwd' cannot be called with 2 positional"),
    (["single_turn.reward=collections:OrderedDict"], "single_turn.reward: 'collections:OrderedDict' is a class"),
    (["single_turn.tasks=os.path:exists"], "single_turn.tasks: 'os.path:exists' cannot be called with 3"),
    (["single_turn.prompts=[hi]", f"single_turn.tasks={TASKS}"], "give exactly one of tasks"),
    (["single_turn.success_threshold=.inf"], "single_turn.success_threshold: got inf"),
    (["single_turn.rewrd=x"], "single_turn.rewrd: unknown key (did you mean 'reward'?)"),
    (["env.tasks=single_turn_task:letter_tasks"], "env.tasks: set by the single_turn section"),
    (["sft.steps=2"], "sft.steps: 2 SFT steps need env.demonstrations"),
    ([f"single_turn.tasks={TASKS}", "single_turn.prompts=null", "env.task_kwargs={lettr: b}"], "env.task_kwargs.lettr"),
]


@pytest.mark.parametrize(("overrides", "expected"), BAD, ids=[" ".join(o)[:50] for o, _ in BAD])
def test_a_bad_single_turn_entry_exits_2_naming_the_key(
    overrides: list[str],
    expected: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from raygent.platform.cli import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "single_turn", *overrides, "--out", str(tmp_path / "run")])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 2, (out, err)
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert expected in err, err
    assert "Traceback" not in err and not (tmp_path / "run").exists()


def test_a_task_functions_keyword_arguments_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    from raygent.jobs.single_turn.recipe import SingleTurnConfig
    from raygent.platform.config import load_config
    from raygent.platform.rl.initial import agent_sections

    config = load_config(
        "single_turn", [f"single_turn.tasks={TASKS}", "single_turn.prompts=null", "env.task_kwargs={letter: b}"]
    )
    agent = agent_sections(config, SingleTurnConfig)
    assert agent.env.tasks == TASKS and agent.env.task_kwargs == {"letter": "b"}
    assert agent.env.kwargs["reward"] == config.single_turn.reward  # type: ignore[attr-defined]
    again = SingleTurnConfig.model_validate(agent.model_dump())  # a derived config validates again (resume)
    assert again.env == agent.env


@pytest.mark.ray
def test_a_tiny_run_trains_grpo_only_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = raygent(
        "run", "single_turn",
        "policy.model=null", "policy.vocab_size=320",
        f"single_turn.tasks={TASKS}", "single_turn.prompts=null", f"single_turn.reward={CONSTANT}",
        "trainer.steps=2", "trainer.eval_every=0", "trainer.eval_tasks=4", "trainer.checkpoint_every=2",
        "trainer.tensorboard=false", "rollout.num_workers=1", "rollout.envs_per_worker=4",
        "rollout.groups_per_step=2", "rollout.group_size=2", "rollout.sampling.max_new_tokens=4",
        "rollout.eval_sampling.max_new_tokens=4", "rollout.engine_num_cpus=0", "learner.num_cpus=0",
        "--out", str(out),
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "GRPO only (2 steps), no SFT: held-out greedy success" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"] == "GRPO only (2 steps), no SFT" and summary["sft_steps"] == 0
    assert summary["reward"] == CONSTANT and summary["tasks"] == TASKS and summary["framing"] == "chat"
    assert summary["before_success"] == summary["after_success"] == 0.0  # 0.25 < the threshold 1.0
    assert "GRPO only" in summary["claim"] and "SFT →" not in (out / "report.html").read_text()
    grpo = [r for r in records(out) if r["stage"] == "grpo"]
    assert [r["step"] for r in grpo] == [1, 2]
    assert all(r["rollout/reward"] == pytest.approx(0.25) for r in grpo)  # the reward function's value
    evals = [r for r in records(out) if r["stage"] == "eval"]
    assert [r["eval/reward"] for r in evals] == pytest.approx([0.25, 0.25])


def test_the_example_task_holds_out_pairs_never_trained_on() -> None:
    from raygent.environments.single_turn.examples import last_number_is_answer, one_digit_sum

    train = {t.id for t in one_digit_sum("train", 0, 2000)}
    held = {t.id for t in one_digit_sum("heldout", 0, 2000)}
    assert len(train) == 64 and len(held) == 17 and not train & held
    task = one_digit_sum("heldout", 1, 1)[0]
    answer = task.params["answer"]
    assert last_number_is_answer(f"{task.instruction[8:-1]} = {answer}", task) == 1.0
    assert last_number_is_answer("To add them, you simply add them together: 8", task) == float(answer == 8)
    assert last_number_is_answer("no number", task) == 0.0
