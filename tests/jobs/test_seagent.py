"""SEAgent's parts without a browser: captions, the WSM (both backends), its training data, the curriculum."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from raygent.environments.web.url_env import task_url, url_task
from raygent.jobs.seagent.curriculum import (
    CURRICULUM_KEY,
    Curricula,
    Curriculum,
    GeneratorFailed,
    controls,
    generator_prompt,
    parse_generator,
)
from raygent.jobs.seagent.hook import Distill, JudgedSuccesses
from raygent.jobs.seagent.recipe import SeagentConfig
from raygent.jobs.seagent.wsm_data import first_error, random_click
from raygent.jobs.seagent.wsm_train import agreement, finetune, samples, swapped, trajectory, within_task_auc
from raygent.platform.contracts import Judgement, Observation, Step, Task, Trajectory
from raygent.platform.rl.reward import apply_judgement
from raygent.rewards.seagent.prompt import Frame, MalformedAnswer, judge_messages, keyframes, parse_answer
from raygent.rewards.seagent.screens import NO_CHANGE, caption, screen_lines
from raygent.rewards.seagent.wsm import WorldStateModel, decide, infra_failed

BEFORE = '[1] button "Audio"\n[2] slider "Volume" value="80" box=(1,2,3,4)\n[3] button "Mute"\ntext "Playing"'
AFTER = (
    '[1] button "Audio" expanded\n[9] menu "Audio"\n[2] slider "Volume" value="0" box=(1,9,3,4)\n[4] button "Unmute"'
)


# ---------------------------------------------------------------- captions


def test_captions_name_changes_then_additions_then_removals() -> None:
    assert screen_lines(BEFORE)[1] == 'slider "Volume" value="80"'  # no id, no box
    lines = caption(BEFORE, AFTER).splitlines()
    assert lines[:2] == ['~ button "Audio": (plain) -> expanded', '~ slider "Volume": value="80" -> value="0"']
    assert lines[2:4] == ['+ menu "Audio"', '+ button "Unmute"']
    assert set(lines[4:]) == {'- button "Mute"', '- text "Playing"'}
    assert caption(BEFORE, BEFORE.replace("box=(1,2,3,4)", "box=(5,5,5,5)")) == NO_CHANGE  # boxes move, nothing changed
    short = caption(BEFORE, AFTER, limit=90)
    assert len(short) <= 90 and short.endswith("more)")


# ---------------------------------------------------------------- the VLM judge's prompt and parser


def test_the_judge_prompt_carries_frames_text_images_and_actions() -> None:
    frames = [Frame(text="screen 1", action="click(3)", image=b"\x89PNG..."), Frame(text="final")]
    content = judge_messages("Mute the sound.", frames)[0]["content"]
    assert "Mute the sound." in content[0]["text"] and "Correctness" in content[0]["text"]
    assert content[1]["type"] == "image_url" and content[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "Action taken: click(3)" in content[2]["text"] and "final screen" in content[3]["text"]
    picks = keyframes([Frame(text=str(i)) for i in range(40)])
    assert len(picks) == 15 and picks[0][0] == 0 and picks[-1][0] == 39


def test_answers_parse_one_indexed_and_malformed_ones_are_refused() -> None:
    answer = parse_answer(
        '<captions>\nFrame1: menu opened\nFrame2: nothing\n</captions>\n<res_dict>{"Correctness": false, '
        '"Redundant": [2], "First_Error_Step": 3, "Error_Type": "wrong item", "Correct_Action": "click(4)"}</res_dict>',
        steps=3,
    )
    assert not answer.success and answer.first_error_step == 2 and answer.redundant == [1]
    assert answer.captions == ["menu opened", "nothing"] and answer.correct_action == "click(4)"
    done = parse_answer('<res_dict>{"Correctness": "True", "First_Error_Step": 1}</res_dict>', steps=2)
    assert done.success and done.first_error_step is None  # a success has no error step
    bad = [
        "Correctness: true",  # no res_dict
        "<res_dict>{Correctness: true}</res_dict>",  # not JSON
        '<res_dict>{"Redundant": []}</res_dict>',  # no Correctness
        '<res_dict>{"Correctness": "maybe"}</res_dict>',
        '<res_dict>{"Correctness": false, "First_Error_Step": 5}</res_dict>',  # outside the episode
        '<res_dict>{"Correctness": false, "Redundant": [true]}</res_dict>',
    ]
    for text in bad:
        with pytest.raises(MalformedAnswer):
            parse_answer(text, steps=3)


def test_decide_takes_the_earlier_of_error_and_redundant_and_blames_stopping_short() -> None:
    assert decide(False, ["correct", "redundant", "error"]) == (["correct", "redundant", "error"], 1)
    assert decide(False, ["correct", "correct"]) == (["correct", "error"], 1)  # stopped short
    assert decide(True, ["error", "redundant", "correct"]) == (["correct", "redundant", "correct"], None)
    assert decide(False, ["correct", "correct", "correct"], redundant=[0]) == (["redundant", "correct", "correct"], 0)


# ---------------------------------------------------------------- the VLM backend against a loopback endpoint


def _episode(group: str = "g", final: str = AFTER) -> Trajectory:
    steps = [
        Step(observation=Observation(text=BEFORE), prompt_ids=[1], response_ids=[2], logprobs=[-0.1],
             action="click(1)", policy_version=0),
        Step(observation=Observation(text=BEFORE), prompt_ids=[1], response_ids=[2], logprobs=[-0.1],
             action="click(3)", info={"screen": final}, policy_version=0),
    ]  # fmt: skip
    task = Task(id="t/free/0", env="raygent/seagent-v0", instruction="Mute the sound.")
    return Trajectory(task=task, steps=steps, group_id=group)


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[str], list[dict[str, Any]]]]:
    """An OpenAI-compatible chat endpoint on loopback that answers from a queue (and records the requests)."""
    answers: list[str] = []
    requests: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append(body)
            text = answers.pop(0) if answers else "no answer"
            payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", answers, requests
    server.shutdown()


def test_the_vlm_judge_retries_a_malformed_answer(endpoint: tuple[str, list[str], list[dict[str, Any]]]) -> None:
    url, answers, requests = endpoint
    answers += ["I think it worked.", '<res_dict>{"Correctness": false, "First_Error_Step": 2}</res_dict>']
    wsm = WorldStateModel(backend="vlm", endpoint=url, model="judge", retries=1)
    (judgement,) = wsm.judge([_episode()])
    assert len(requests) == 2 and requests[0]["model"] == "judge"
    assert not judgement.success and judgement.first_error_step == 1 and judgement.step_labels == ["correct", "error"]
    assert judgement.info["captions"][1].startswith("~ button")  # the judge gave none: the computed ones
    assert not infra_failed(judgement) and wsm.failures == 0


def test_a_judge_that_stays_malformed_is_an_infrastructure_failure_the_platform_keeps_out(
    endpoint: tuple[str, list[str], list[dict[str, Any]]],
) -> None:
    url, answers, _ = endpoint
    answers += ['<res_dict>{"Correctness": true}</res_dict>', "garbage", "garbage"]
    wsm = WorldStateModel(backend="vlm", endpoint=url, model="judge", retries=1)
    good, failed = wsm.judge([_episode("g1"), _episode("g1")])
    assert good.success and good.score == 1.0
    assert infra_failed(failed) and "malformed" in failed.reason and wsm.failures == 1
    episode = apply_judgement(_episode("g1"), failed, "replace")
    assert episode.infra_failure and episode.judgement == failed  # not trained on, not an agent failure


def test_the_vlm_backend_needs_an_endpoint_and_bad_kwargs_are_refused() -> None:
    with pytest.raises(ValueError, match="endpoint"):
        WorldStateModel(backend="vlm", model="judge")
    with pytest.raises(ValidationError):
        WorldStateModel(model="x", thresold=0.3)


# ---------------------------------------------------------------- the judge's training data and the lm backend


def _record(kind: str, actions: list[str], screens: list[str], success: bool, error: int | None) -> dict[str, Any]:
    return {"task_id": f"app/{kind}/0", "app": "app", "instruction": "Mute the sound.", "kind": kind,
            "screens": screens, "actions": actions, "success": success, "first_error": error}  # fmt: skip


def test_first_error_is_where_the_path_leaves_the_expert() -> None:
    expert = ["click(1)", "click(3)"]
    assert first_error(["click(1)", "finished()"], expert) == 1  # stopped short
    assert first_error(["click(2)", "click(3)", "finished()"], expert) == 0
    assert first_error(["click(1)", "click(5)", "finished()"], expert) == 1
    import random

    assert random_click('[4] button "a"\n[5] button "b"', random.Random(0), avoid="click(4)") == "click(5)"
    assert random_click("text only", random.Random(0)) == "finished()"


def test_samples_label_steps_before_the_first_error_yes_at_it_no_and_skip_after() -> None:
    muted = BEFORE.replace('"Mute"', '"Unmute"')
    records = [
        _record("expert", ["click(3)", "finished()"], [BEFORE, muted, muted], True, None),
        _record("deviation", ["click(1)", "click(3)", "finished()"], [BEFORE, AFTER, muted, muted], False, 0),
    ]
    steps, done = samples(records)
    assert [label for _, label in steps] == [True, False]  # the finish is not asked; the step after the error skipped
    assert "Unmute" in steps[0][0] and [label for _, label in done] == [True, False]


def test_a_swapped_instruction_is_labelled_by_its_own_checker_on_the_trajectory_s_final_state() -> None:
    from raygent.environments.web.registry import make_task

    goals = {}
    for seed in range(40):
        instance = make_task(f"media_player/mute_audio/{seed}")
        goals.setdefault(instance.params["muted"], instance)
    mute, unmute = goals[True], goals[False]
    muted = BEFORE.replace('"Mute"', '"Unmute"')

    def record(instance: Any, kind: str, screens: list[str], success: bool, state: dict[str, Any] | None) -> Any:
        out = {"task_id": instance.full_id, "app": "media_player", "instruction": instance.goal, "kind": kind,
               "screens": screens, "actions": ["click(3)", "finished()"], "success": success,
               "first_error": None if success else 0}  # fmt: skip
        return {**out, "state": state} if state is not None else out

    records = [
        record(mute, "expert", [BEFORE, muted, muted], True, {"muted": True}),
        record(unmute, "random", [BEFORE, muted, muted], False, {"muted": True}),  # muted it: not what it was asked
        record(unmute, "prefix", [BEFORE, BEFORE, BEFORE], False, None),  # recorded before states were: not swapped
    ]
    swaps = swapped(records, per_record=3)
    assert [(r["instruction"], r["success"]) for r in swaps] == [(unmute.goal, False), (mute.goal, True)]
    assert all(r["kind"] == "swapped" and r["first_error"] is None for r in swaps)
    steps, done = samples(records, swap=1)
    assert len(steps) == 2 and [label for _, label in done] == [True, False, False, False, True]
    assert done[-1][0].startswith(f"Task: {mute.goal}") and "Unmute" in done[-1][0]


@pytest.fixture(scope="module")
def tiny_judge_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from raygent.policies.presets import build_tiny_model
    from raygent.policies.tokenizer import build_tokenizer

    directory = tmp_path_factory.mktemp("judge_base")
    corpus = [caption(BEFORE, AFTER), caption(BEFORE, BEFORE.replace('"Mute"', '"Unmute"')), " yes", " no"] * 50
    corpus += ["Task: Mute the sound. Did this action bring the task closer to done? Answer: yes no"] * 50
    tokenizer = build_tokenizer(corpus, directory, vocab_size=300)
    return build_tiny_model("tiny-qwen2", tokenizer, directory)


def test_a_long_prompt_keeps_its_task_and_its_question(tiny_judge_base: Path) -> None:
    from transformers import AutoTokenizer

    from raygent.rewards.seagent.lm_judge import done_prompt, fit

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_judge_base))
    long_caption = "\n".join([caption(BEFORE, AFTER)] * 12)
    prompt = done_prompt("Mute the sound.", long_caption)
    whole = tokenizer.encode(prompt, add_special_tokens=False)
    kept = fit(tokenizer, prompt, 60)
    assert len(whole) > 60 and len(kept) <= 60
    text = tokenizer.decode(kept)
    assert text.startswith("Task: Mute the sound.") and text.endswith("Is the task fully done now? Answer:")
    assert fit(tokenizer, "Task: Mute.\nAnswer:", 60) == tokenizer.encode(
        "Task: Mute.\nAnswer:", add_special_tokens=False
    )


def test_the_lm_judge_learns_its_labels_and_judges_through_the_reward_interface(
    tiny_judge_base: Path, tmp_path: Path
) -> None:
    muted = BEFORE.replace('"Mute"', '"Unmute"')
    records = [
        _record("expert", ["click(3)", "finished()"], [BEFORE, muted, muted], True, None),
        _record("random", ["click(1)", "finished()"], [BEFORE, AFTER, AFTER], False, 0),
    ] * 2
    steps, done = samples(records)
    data = [*steps, *done]
    finetune(tiny_judge_base, data, tmp_path / "judge", train_layers=2, epochs=15, lr=5e-3, threads=1, log=print)
    wsm = WorldStateModel(model=str(tmp_path / "judge"))
    result = agreement(wsm, records[:2])
    assert result["all"]["success_accuracy"] == 1.0 and result["all"]["first_error_accuracy"] == 1.0
    win, loss = wsm.judge([trajectory(records[0], 0), trajectory(records[1], 1)])
    assert win.success and win.score == 1.0 and win.first_error_step is None and win.info["p_done"] > 0.5
    assert not loss.success and loss.first_error_step == 0 and loss.step_labels == ["error", "correct"]
    assert loss.info["captions"][0].startswith("~ button")


def test_the_judge_s_ranking_compares_episodes_of_one_task_only() -> None:
    rows = [("a", True, 0.3), ("a", False, 0.1), ("a", False, 0.3), ("b", False, 0.9), ("c", True, 0.2)]
    assert within_task_auc(rows) == 0.75  # a: above 0.1, tied with 0.3; b's 0.9 is another task's failure
    assert within_task_auc([("c", True, 1.0), ("d", False, 0.0)]) is None


def test_seagent_s_kl_term_covers_every_sample_but_the_failure_steps() -> None:
    import torch

    from raygent.platform.losses.terms import build_term

    term = build_term({"name": "raygent.jobs.seagent.losses:GRPOBranchKL", "coef": 0.04})
    assert term.needs_reference and term.name == "kl" and term.coef == 0.04
    assert term.covers(torch.zeros(3), torch.tensor([False, True, False])).tolist() == [True, False, True]
    with pytest.raises(ValueError, match="estimator"):
        build_term({"name": "raygent.jobs.seagent.losses:GRPOBranchKL", "estimator": "k4"})


# ---------------------------------------------------------------- the curriculum


def fake_explorer(calls: list[str]) -> Callable[[str, int, int], list[dict[str, Any]]]:
    """Exploration's result for a two-menu app (the browser one is tested in test_seagent_browser.py)."""

    def explore(url: str, episodes: int, children: int) -> list[dict[str, Any]]:
        calls.append(url)
        from raygent.jobs.seagent.curriculum import _entry

        return [
            _entry(["Audio"], "button", '+ menu "Audio"'),
            _entry(["Audio", "Mute"], "menuitem", '~ button "Mute" -> "Unmute"'),
            _entry(["Playback", "Shuffle"], "menuitemcheckbox", "~ text shuffle on"),
            _entry(["Stop"], "button", NO_CHANGE),
        ]

    return explore


def _curriculum(calls: list[str], **kwargs: Any) -> Curriculum:
    return Curriculum(lambda *a, **k: [], split="train", seed=3, batch_size=6, url="http://127.0.0.1:9/app/",
                      explorer=fake_explorer(calls), min_tries=2, **kwargs)  # fmt: skip


def _judged(task: Task, success: bool, captions: list[str] | None = None, infra: bool = False) -> Trajectory:
    step = Step(observation=Observation(text='[7] button "Equalizer"'), prompt_ids=[1], response_ids=[2],
                logprobs=[-0.1], action="click(7)", policy_version=0)  # fmt: skip
    judgement = Judgement(score=float(success), success=success, info={"captions": captions or []}, infra_failure=infra)
    return Trajectory(task=task, steps=[step], group_id="g", success=success, judgement=judgement)


def test_the_curriculum_proposes_single_controls_first_and_is_a_function_of_state_and_index() -> None:
    calls: list[str] = []
    source = _curriculum(calls)
    batch = source.next(0)
    assert calls == ["http://127.0.0.1:9/app/"] and len(batch) == 6
    assert all(t.params[CURRICULUM_KEY]["level"] == 1 and len(t.params[CURRICULUM_KEY]["keys"]) == 1 for t in batch)
    assert {t.instruction for t in batch} <= {"Audio.", "Mute.", "Shuffle."}  # "Stop" changed nothing: no task
    assert [t.id for t in source.next(0)] == [t.id for t in batch] and calls == ["http://127.0.0.1:9/app/"]
    restored = _curriculum(calls)
    restored.load_state(json.loads(json.dumps(source.state())))
    assert [t.instruction for t in restored.next(5)] == [t.instruction for t in source.next(5)]
    assert len(calls) == 1  # a restored curriculum does not explore again


def test_judgements_update_the_guidebook_then_mastered_controls_are_composed() -> None:
    source = _curriculum([])
    mute = next(t for i in range(20) for t in source.next(i) if t.instruction == "Mute.")
    shuffle = next(t for i in range(20) for t in source.next(i) if t.instruction == "Shuffle.")
    source.observe([_judged(mute, True, ['~ button "Mute": (plain) -> pressed']), _judged(mute, True)])
    source.observe([_judged(shuffle, True), _judged(shuffle, True), _judged(shuffle, False, infra=True)])
    book = source.guidebook
    assert (book["Audio > Mute"]["tries"], book["Audio > Mute"]["successes"]) == (2, 2)
    assert book["Playback > Shuffle"]["tries"] == 2  # the WSM's infrastructure failure is not counted
    assert book["Audio > Mute"]["effect"] == '~ button "Mute": (plain) -> pressed'
    assert "Equalizer" in book and book["Equalizer"]["discovered"]  # seen on a judged screen
    composed = [t for i in range(10) for t in source.next(i) if t.params[CURRICULUM_KEY]["level"] == 2]
    assert composed and {t.instruction for t in composed} <= {"Mute. Then Shuffle.", "Shuffle. Then Mute."}
    assert composed[0].difficulty == 1
    assert "judged done 2/2" in source.guidebook_text()


def test_the_llm_generator_fills_the_buffer_and_a_bad_answer_falls_back(
    endpoint: tuple[str, list[str], list[dict[str, Any]]],
) -> None:
    url, answers, requests = endpoint
    answers.append(
        'Sure: {"software_document_new": "Audio menu mutes.", "exam_new": [["Mute.", "Unmute."], "Shuffle."]}'
    )
    source = _curriculum([], generator="llm", endpoint=url, model="gen", llm_every=1, llm_retries=0)
    batch = source.next(0)
    prompt = requests[0]["messages"][0]["content"]
    assert "Audio > Mute" in prompt and requests[0]["model"] == "gen"
    assert source.document == "Audio menu mutes." and source.llm_calls == 1
    proposed = {t.instruction for t in batch}
    assert ("Mute. Then Unmute." in proposed or "Shuffle." in proposed) and len(batch) == 6
    source.buffer = []
    answers.append("no JSON at all")
    source.next(1)
    assert source.llm_failures == 1 and source.document == "Audio menu mutes."
    with pytest.raises(GeneratorFailed):
        parse_generator('{"software_document_new": "x", "exam_new": [[""]]}')
    assert "EMPTY FOR YOU TO BUILD" in generator_prompt("", [], 30)


def test_curricula_share_the_batch_route_judgements_to_their_page_and_start_from_specialists() -> None:
    pages = ["http://127.0.0.1:9/one/", "http://127.0.0.1:9/two/"]
    calls: list[str] = []
    specialist = Curriculum(lambda *a, **k: [], split="train", seed=3, batch_size=4, url=pages[1],
                            explorer=fake_explorer(calls), min_tries=2)  # fmt: skip
    specialist.next(0)
    specialist.observe([_judged(t, True) for t in specialist.next(1) if t.instruction == "Mute."][:1])
    source = Curricula(lambda *a, **k: [], split="train", seed=3, batch_size=5, urls=pages,
                       explorer=fake_explorer(calls), min_tries=2)  # fmt: skip
    source.load_state({"pages": [{}, json.loads(json.dumps(specialist.state()))]})
    batch = source.next(0)
    assert [task_url(t) for t in batch] == [pages[0]] * 3 + [pages[1]] * 2
    assert calls == [pages[1], pages[0]]  # the specialist's page is not explored again
    assert source.parts[pages[1]].guidebook["Audio > Mute"]["successes"] == 1
    source.observe([_judged(t, True) for t in batch])
    for page in pages:
        tries = sum(e["tries"] for e in source.parts[page].guidebook.values())
        assert tries == sum(1 for t in batch if task_url(t) == page) + (page == pages[1])
    restored = Curricula(lambda *a, **k: [], split="train", seed=3, batch_size=5, urls=pages,
                         explorer=fake_explorer(calls), min_tries=2)  # fmt: skip
    restored.load_state(json.loads(json.dumps(source.state())))
    assert [t.id for t in restored.next(4)] == [t.id for t in source.next(4)] and len(calls) == 2
    with pytest.raises(ValueError, match="a state of 1 curricula for 2 pages"):
        restored.load_state({"pages": [{}]})
    with pytest.raises(ValueError, match="one task per url"):
        Curricula(lambda *a, **k: [], split="train", seed=3, batch_size=1, urls=pages)


def _success(url: str, instruction: str, actions: list[str], success: bool = True) -> Trajectory:
    steps = [
        Step(
            observation=Observation(text=f'[{i}] button "B{i}"'),
            prompt_ids=[1],
            response_ids=[2],
            logprobs=[-0.1],
            action=action,
            policy_version=0,
        )
        for i, action in enumerate(actions)
    ]
    return Trajectory(task=url_task(url, instruction), steps=steps, group_id="g", success=success)


def test_a_specialists_judged_successes_become_demonstrations_drawn_in_turn_over_apps(tmp_path: Path) -> None:
    from raygent.platform.rl.hooks import HookContext
    from raygent.platform.rl.learner import Learner
    from raygent.platform.rl.settings import LearnerSettings
    from raygent.policies.presets import build_tiny_model
    from raygent.policies.prompts import PromptFormat
    from raygent.policies.tokenizer import build_tokenizer

    one, two = "http://127.0.0.1:9/one/", "http://127.0.0.1:9/two/"
    kept = JudgedSuccesses(per_instruction=2)
    kept.on_trajectories(1, [
        _success(one, "Mute.", ["click(1)", "click(2)", "finished()"]),
        _success(one, "Mute.", ["click(2)", "finished()"]),
        _success(one, "Mute.", ["click(2)", "finished()"]),  # the same path again: kept once
        _success(one, "Mute.", ["click(3)", "click(2)", "click(2)", "finished()"]),  # longer than the two kept
        _success(one, "Shuffle.", ["click(4)"], success=False),
        _success(two, "Bold.", ["click(5)", "finished()"]),
    ])  # fmt: skip
    restored = JudgedSuccesses(per_instruction=2)
    restored.load_state(json.loads(json.dumps(kept.state())))
    demos = restored.demonstrations()
    assert [(t.instruction, [a for _, a in turns]) for t, turns in demos] == [
        ("Mute.", ["click(2)", "finished()"]),
        ("Mute.", ["click(1)", "click(2)", "finished()"]),
        ("Bold.", ["click(5)", "finished()"]),
    ]
    assert demos[0][1][0][0] == '[0] button "B0"'  # the screen the agent read, then its action
    distill = Distill({"one": demos[:2], "two": demos[2:]}, steps=1, batch=2)
    assert {task_url(t) for t, _ in distill.draw(0)} == {one, two}  # one app's and the other's, in turn

    texts = [f"{o} {a} {t.instruction}" for t, turns in demos for o, a in turns] * 40
    model = build_tiny_model("tiny-qwen2", build_tokenizer(texts, tmp_path, vocab_size=300), tmp_path, seed=1)
    learner = Learner(str(model), LearnerSettings(lr=3e-3, micro_batch_tokens=512))
    context = HookContext(learner, learner.tokenizer, PromptFormat(system="Operate the app."), seed=0)
    first = Distill({"both": demos}, steps=1, batch=3).on_start(context)
    last = Distill({"both": demos}, steps=12, batch=3).on_start(context)
    assert first["distill/demonstrations"] == 3.0 and learner.version == 13
    assert last["distill/loss"] < 0.5 * first["distill/loss"]
    assert Distill({"none": []}, steps=5, batch=3).on_start(context) == {} and learner.version == 13


def test_controls_are_the_named_clickable_elements() -> None:
    screen = '[1] button "File"\n[2] slider "Volume" value="3"\n[3] menuitem "Open…"\ntext "x"\n[4] button ""'
    assert controls(screen) == [("1", "button", "File"), ("3", "menuitem", "Open…")]


# ---------------------------------------------------------------- config


def test_bad_seagent_config_values_name_their_key() -> None:
    base = {"env": {"id": "raygent/seagent-v0", "registration": "raygent.jobs.seagent.env:register_envs",
                    "tasks": "raygent.environments.web.agent.tasks:web_tasks"}}  # fmt: skip
    SeagentConfig.model_validate(base)
    cases = {
        "url": {"env": {**base["env"], "url": "http://example.com/"}},
        "wsm_apps": {**base, "seagent": {"wsm_apps": ["media_player"]}},
        "kwargs.thresold": {
            **base,
            "reward": {"entry": "raygent.rewards.seagent.wsm:WorldStateModel", "kwargs": {"thresold": 0.2}},
        },
        "kwargs.model: the vlm backend": {
            **base,
            "reward": {
                "entry": "raygent.rewards.seagent.wsm:WorldStateModel",
                "kwargs": {"backend": "vlm", "endpoint": "http://127.0.0.1:1/v1"},
            },
        },
        "kwargs.endpoint: the vlm backend": {
            **base,
            "reward": {
                "entry": "raygent.rewards.seagent.wsm:WorldStateModel",
                "kwargs": {"backend": "vlm", "model": "judge"},
            },
        },
        "kwargs.explore": {
            **base,
            "tasks": {"entry": "raygent.jobs.seagent.curriculum:Curriculum", "kwargs": {"explore": 2}},
        },
        "generalist": {**base, "seagent": {"generalist": ["media_player"]}},
        "seagent.generalist: specialists": {
            **base,
            "seagent": {"generalist": ["media_player", "code_editor"], "variant": "checker"},
        },
        "groups_per_step": {
            **base,
            "seagent": {"generalist": ["media_player", "code_editor", "image_editor"]},
            "rollout": {"groups_per_step": 2},
        },
    }
    for key, config in cases.items():
        with pytest.raises(ValidationError, match=key.replace(".", r"\.")):
            SeagentConfig.model_validate(config)


def test_a_vlm_judge_is_the_endpoint_s_model_and_nothing_is_fine_tuned() -> None:
    """The cluster path (`reward.kwargs.backend=vlm`): the reward actor's WSM asks the endpoint for
    `reward.kwargs.model`, with the config's other kwargs; no judge is fine-tuned here (`seagent.wsm_model` is for
    the `lm` backend)."""
    from rich.console import Console

    from raygent.jobs.seagent.recipe import CURRICULUM, prepare_judge, self_evolving

    reward = {
        "entry": "raygent.rewards.seagent.wsm:WorldStateModel",
        "num_actors": 2,
        "kwargs": {"backend": "vlm", "endpoint": "http://127.0.0.1:1/v1", "model": "Zery/WSM", "retries": 1},
    }
    config = SeagentConfig.model_validate({
        "env": {"id": "raygent/seagent-v0", "registration": "raygent.jobs.seagent.env:register_envs",
                "tasks": "raygent.environments.web.agent.tasks:web_tasks"},
        "reward": reward, "seagent": {"wsm_eval_seeds": 0},
    })  # fmt: skip
    model, judge = prepare_judge(config, Console(quiet=True))
    assert model == "Zery/WSM" and judge == {}  # no "training": nothing fine-tuned
    evolving = self_evolving(config, model, CURRICULUM, {"url": "http://127.0.0.1:1/app/"})
    assert evolving.reward is not None and evolving.reward.num_actors == 2
    assert evolving.reward.kwargs == reward["kwargs"]
