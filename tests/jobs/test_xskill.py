"""XSkill's memory without Ray: the knowledge operations, consolidation, retrieval, the adapted context, snapshots
(a corrupt one names its file), the programmatic summarizer on real ToolCalc episodes, the LM summarizer's parser,
the loop's context and its degradation, and SFT demonstrations that show exactly the loop's context."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from raygent.environments.toolcalc import ToolCalcEnv, demonstrate, make_task
from raygent.jobs.xskill.hook import XSkillHook
from raygent.jobs.xskill.loop import LOCAL_BANKS, MemoryLoop, with_context
from raygent.jobs.xskill.memory import (
    KnowledgeOp,
    MemoryBank,
    MemorySettings,
    SnapshotError,
    instantiate,
    situation_of,
)
from raygent.jobs.xskill.summarize import (
    Group,
    LMSummarizer,
    ProgrammaticSummarizer,
    Rollout,
    abstract_procedure,
    parse_ops,
    strip_context,
)
from raygent.jobs.xskill.tasks import _episode, memory_demonstrations, xskill_tasks
from raygent.platform.config import ConfigError, load_config
from raygent.platform.rl.agent_loop import LoopContext
from raygent.policies.prompts import PromptFormat

CHAIN = "What is A*B+C?"


def add(situation: str, advice: str, kind: str = "tip") -> KnowledgeOp:
    return KnowledgeOp(option="add", situation=situation, advice=advice, kind=kind)


def test_situations_abstract_numbers_and_skills_are_filled_back() -> None:
    assert situation_of("What is 37*12+5?") == (CHAIN, [37, 12, 5])
    assert situation_of("Which is larger, 4 or 90?")[0] == "Which is larger, A or B?"
    assert instantiate("calc(A*B) ; calc(R+C) ; answer(R)", [37, 12, 5]) == "calc(37*12) ; calc(R+5) ; answer(R)"


def test_knowledge_operations_add_modify_merge_delete() -> None:
    bank = MemoryBank()
    assert bank.apply([add(CHAIN, "use calc 2 times, then answer.", "count")]) == {"add": 1}
    # the same kind and situation, cosine >= 0.70: merged into one item with the support of both
    assert bank.apply([add(CHAIN, "use calc 2 times, then answer.", "count")]) == {"merge": 1}
    (item,) = bank.experiences.values()
    assert item.support == 2
    bank.apply([add(CHAIN, "start with calc(A*B).", "first"), add("What is A+B?", "use calc 1 time.", "count")])
    assert len(bank.experiences) == 3
    first = next(e for e in bank.experiences.values() if e.kind == "first")
    assert bank.apply([KnowledgeOp(option="modify", ids=[first.id], advice="start with calc(B*A).")]) == {"modify": 1}
    assert bank.experiences[first.id].advice == "start with calc(B*A)."
    ids = list(bank.experiences)[:2]
    assert bank.apply([KnowledgeOp(option="merge", ids=ids, advice="merged tip.")]) == {"merge": 1}
    assert len(bank.experiences) == 2 and any(e.advice == "merged tip." for e in bank.experiences.values())
    doomed = next(iter(bank.experiences))
    ops = [KnowledgeOp(option="delete", ids=[doomed]), KnowledgeOp(option="modify", ids=["E999"], advice="x")]
    assert bank.apply(ops) == {"delete": 1, "rejected": 1}
    assert doomed not in bank.experiences


def test_consolidation_bounds_the_library() -> None:
    bank = MemoryBank(MemorySettings(max_experiences=10, target_experiences=6))
    bank.apply([add(f"What is A+B+{i}?", f"distinct advice number {i} zz{i}", f"kind{i}") for i in range(14)])
    assert len(bank.experiences) == 14  # apply alone never drops anything
    done = bank.consolidate()
    assert len(bank.experiences) == 6 and done["deleted"] + done["merged"] == 8
    assert bank.consolidate() == {}  # under the limit: nothing happens


def test_retrieval_and_context_tell_similar_situations_apart() -> None:
    bank = MemoryBank()
    bank.apply(
        [
            add(CHAIN, "start with calc(A*B).", "first"),
            add("What is A+B*C?", "start with calc(B*C).", "first"),
            add("Which is larger, A or B?", "answer at once.", "count"),
            KnowledgeOp(
                option="add", target="skill", situation=CHAIN, variants={"calc(A*B) ; calc(R+C) ; answer(R)": 3}
            ),
            KnowledgeOp(
                option="add", target="skill", situation="What is A+B*C?", variants={"calc(B*C) ; answer(R)": 1}
            ),
        ]
    )
    top = bank.retrieve(CHAIN, k=1)
    assert [e.situation for e in top] == [CHAIN]
    assert all(e.situation != "Which is larger, A or B?" for e in bank.retrieve(CHAIN))
    both = bank.context("What is 37*12+5?", "both")
    assert both.text.splitlines()[:2] == ["memory:", "skill: calc(37*12) ; calc(R+5) ; answer(R)"]
    assert "tip: start with calc(37*12)." in both.text and both.skill_id is not None  # its own situation: filled
    assert "skill:" not in bank.context("What is 37*12+5?", "experiences").text
    assert "tip:" not in bank.context("What is 37*12+5?", "skills").text
    assert bank.context("What is 37*12+5?", "none").text == ""
    # the other chain's skill has one success: below skill_min_support, so no workflow is shown
    assert "skill:" not in bank.context("What is 3+12*5?", "both").text


def test_snapshot_round_trip_and_corrupt_snapshots_name_the_file(tmp_path: Path) -> None:
    bank = MemoryBank()
    bank.apply(
        [
            add(CHAIN, "use calc 2 times.", "count"),
            KnowledgeOp(option="add", target="skill", situation=CHAIN, variants={"calc(A*B)": 2}),
        ]
    )
    path = tmp_path / "memory.json"
    sha = bank.save(path)
    again = MemoryBank.load(path, sha)
    assert again.snapshot() == bank.snapshot()
    assert again.context("What is 1*2+3?").text == bank.context("What is 1*2+3?").text
    path.write_text(path.read_text()[:-20])
    with pytest.raises(SnapshotError, match=re.escape(str(path))):
        MemoryBank.load(path)
    with pytest.raises(SnapshotError, match="SHA-256"):
        MemoryBank.load(path, sha)
    path.write_text(json.dumps({"version": 1, "settings": {}, "experiences": [{"id": 3}], "skills": []}))
    with pytest.raises(SnapshotError, match=re.escape(str(path))):
        MemoryBank.load(path)
    with pytest.raises(SnapshotError, match=r"missing\.json"):
        MemoryBank.load(tmp_path / "missing.json")
    hook = XSkillHook(actor=None, summarizer=ProgrammaticSummarizer(), run_dir=tmp_path)
    with pytest.raises(SnapshotError, match=r"memory\.json"):
        hook.load_state({"file": "memory.json", "sha256": sha})


def test_programmatic_summarizer_contrasts_real_episodes() -> None:
    env = ToolCalcEnv()
    task = make_task("a*b+c", [37, 12, 5], 1)
    demo = demonstrate(task, env)
    expert = Rollout(tuple(demo.observations), tuple(demo.actions), demo.success, (True,) * 3)
    rushed = _episode(env, task, ["answer(37)"])
    early = _episode(env, task, ["calc(37*12)", "answer(444)"])
    assert expert.success and not rushed.success and not early.success
    assert abstract_procedure(task.instruction, expert) == ["calc(A*B)", "calc(R+C)", "answer(R)"]
    group = Group(task.instruction, [expert, expert, rushed, early])
    ops = ProgrammaticSummarizer().summarize([group], {"experiences": [], "skills": []})
    tips = {op.kind: op.advice for op in ops if op.target == "experience"}
    assert tips["count"] == "use calc 2 times, then answer."
    skill = next(op for op in ops if op.target == "skill")
    assert skill.variants == {"calc(A*B) ; calc(R+C) ; answer(R)": 2}
    assert skill.watch_out and skill.watch_out[0].startswith("answer(A)")
    # no contrast (every rollout failed): no tips, and no skill to add
    assert ProgrammaticSummarizer().summarize([Group(task.instruction, [rushed, early])], {}) == []
    bank = MemoryBank()
    bank.apply(ops)
    assert bank.context("What is 20*30+4?").text.startswith("memory:\nskill: calc(20*30) ; calc(R+4) ; answer(R)")


def test_lm_summarizer_parses_critique_ops_and_survives_a_failing_endpoint() -> None:
    text = (
        'ok\n{"option": "add", "experience": "When A*B+C: call calc twice."}\n{"option": "modify", '
        '"experience": "When x: better.", "modified_from": "E3"}\n{"option": "explode"}\n{broken\n'
        '{"option": "add", "experience": "When ...: <tip, at most 64 words>"}'  # the format's example, copied
        '{"option": "add", "experience": "When [tip] is added to [tip]."}'  # a stand-in, not a tip
    )
    ops, failed = parse_ops(text, CHAIN)
    assert [(o.option, o.advice, o.ids) for o in ops] == [
        ("add", "call calc twice.", []),
        ("modify", "better.", ["E3"]),
    ]
    assert failed == 3
    env = ToolCalcEnv()
    task = make_task("a+b", [20, 30], 1)
    demo = demonstrate(task, env)
    win = Rollout(tuple(demo.observations), tuple(demo.actions), True, (True, True))
    loss = _episode(env, task, ["answer(20)"])

    def down(prompt: str) -> str:
        assert "SUCCESS: calc(A+B) ; answer(R)" in prompt and "FAILURE: answer(A)" in prompt
        raise ConnectionError("endpoint down")

    summarizer = LMSummarizer(down)
    ops = summarizer.summarize([Group(task.instruction, [win, loss])], {"experiences": [], "skills": []})
    assert [op.target for op in ops] == ["skill"] and summarizer.stats["lm_failures"] == 1


def test_memory_loop_prepends_context_and_degrades_to_none(tokenizer_context: LoopContext) -> None:
    bank = MemoryBank()
    bank.apply(
        [KnowledgeOp(option="add", target="skill", situation=CHAIN, variants={"calc(A*B) ; calc(R+C) ; answer(R)": 2})]
    )
    LOCAL_BANKS["test-bank"] = bank
    task = make_task("a*b+c", [37, 12, 5], 1)
    observation = {"text": task.instruction, "turn": 0, "last_action_error": ""}
    loop = MemoryLoop(task, observation, tokenizer_context, actor="test-bank")
    assert loop.observation().text == with_context(bank.context(task.instruction).text, task.instruction)
    assert loop.observation().info["xskill"] == "ok"
    assert strip_context(loop.observation().text) == task.instruction
    missing = MemoryLoop(task, observation, tokenizer_context, actor="nope")
    assert missing.observation().text == task.instruction and missing.observation().info["xskill"] == "failed"
    off_task = task.model_copy(update={"params": {**task.params, "xskill_mode": "none"}})
    off = MemoryLoop(off_task, observation, tokenizer_context, actor="test-bank")
    assert off.observation().text == task.instruction and off.observation().info["xskill"] == "off"
    del LOCAL_BANKS["test-bank"]


def test_sft_demonstrations_carry_the_context_the_loop_shows() -> None:
    tasks = xskill_tasks("train", 0, 12, ["a*b+c", "a+b"], 1, {"both": 1.0})
    assert all(t.params["xskill_mode"] == "both" and t.params["split"] == "train" for t in tasks)
    episodes = memory_demonstrations(tasks)
    for task, turns in zip(tasks, episodes, strict=True):
        first = turns[0][0]
        assert first.startswith("memory:\nskill: ") and strip_context(first) == task.instruction
        assert turns[-1][1].startswith("answer(")
    plain = memory_demonstrations(xskill_tasks("train", 0, 3, ["a+b"], 1, {"none": 1.0}))
    assert all(not turns[0][0].startswith("memory:") for turns in plain)


@pytest.fixture
def tokenizer_context() -> LoopContext:
    return LoopContext(tokenizer=None, prompt_format=PromptFormat())  # type: ignore[arg-type]


def test_lm_summarizer_prompts_the_in_tree_engine(tmp_path: Path) -> None:
    """The `policy` endpoint: the critique prompt goes through an `InferenceEngine` (hf backend, a tiny model) and
    whatever it writes is parsed; a tiny untrained model writes no operations, which is counted, not fatal."""
    from raygent.environments.toolcalc import corpus
    from raygent.jobs.xskill.summarize import PolicyChat
    from raygent.platform.rl.engine import InferenceEngine
    from raygent.policies.presets import build_tiny_model
    from raygent.policies.tokenizer import build_tokenizer

    tokenizer = build_tokenizer(corpus(n_tasks=100), tmp_path, vocab_size=300)
    build_tiny_model("tiny-qwen2", tokenizer, tmp_path)
    chat = PolicyChat(InferenceEngine("hf", str(tmp_path)), tokenizer, max_new_tokens=12)
    assert isinstance(chat("Compare the rollouts."), str)
    env = ToolCalcEnv()
    task = make_task("a+b", [20, 30], 1)
    demo = demonstrate(task, env)
    win = Rollout(tuple(demo.observations), tuple(demo.actions), True, (True, True))
    summarizer = LMSummarizer(chat)
    ops = summarizer.summarize([Group(task.instruction, [win, _episode(env, task, ["answer(20)"])])], {})
    assert summarizer.stats["lm_calls"] == 1 and summarizer.stats["lm_failures"] == 0
    assert [op.target for op in ops if op.kind != "lm"] == ["skill"]


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("env.task_kwargs.templates=[nope]", "env.task_kwargs.templates: got ['nope']; unknown ['nope']"),
        ("env.task_kwargs.difficulty=3", "env.task_kwargs.difficulty: got 3"),
        ("sft.task_kwargs.modes={maybe: 1}", "sft.task_kwargs.modes"),
        ("sft.task_kwargs.template=[compare]", "did you mean 'templates'"),
    ],
)
def test_a_bad_xskill_task_kwarg_names_the_key(override: str, key: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(key)):
        load_config("xskill", [override])


def test_initial_memory_is_a_snapshot_checked_before_the_run(tmp_path: Path) -> None:
    """`xskill.initial_memory` starts a run from a saved bank; a missing or malformed file is refused at load time,
    naming the key and the file."""
    bank = MemoryBank()
    bank.apply([add(CHAIN, "start with calc(A*B).", "first")])
    good = tmp_path / "memory.json"
    bank.save(good)
    assert load_config("xskill", [f"xskill.initial_memory={good}"]).xskill.initial_memory == good  # type: ignore[attr-defined]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for path in (bad, tmp_path / "missing.json"):
        with pytest.raises(ConfigError, match=re.escape(f"xskill.initial_memory: corrupt memory snapshot {path}")):
            load_config("xskill", [f"xskill.initial_memory={path}"])
