"""DocOS's job pieces without a browser: the agent loop's tools and variants, demonstrations whose prompts are the
loop's, the episode metrics and claims, and config errors that exit before Ray starts."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

from raygent.environments.web.doc_tools import NO_CONTEXT, open_call, search_call
from raygent.environments.web.docs.urls import command_path
from raygent.environments.web.registry import make_task
from raygent.environments.web.server import ui_spec
from raygent.jobs.docos.demos import doc_turns
from raygent.jobs.docos.loop import EMPTY, REFUSED, UNAVAILABLE, DocLoop, oracle_context, render
from raygent.jobs.docos.metrics import EpisodeScore, claims, score, search_failure, summarize
from raygent.jobs.docos.recipe import write_html
from raygent.platform.config import ConfigError, load_config
from raygent.platform.contracts import Observation, Step, Task, Trajectory
from raygent.platform.rl.agent_loop import EnvAction, LoopContext, ToolResult
from raygent.policies.prompts import PromptFormat, Turn

APP, CMD = "media_player", "speed"


def _layout() -> int:
    default = ui_spec(APP, 0).commands[CMD]
    return next(s for s in range(1, 200) if ui_spec(APP, s).commands[CMD].label != default.label)


def _task(docs: str, ui_seed: int) -> Task:
    task = make_task(f"{APP}/set_speed/3", ui_seed=ui_seed).to_platform()
    extra = {"docs": docs, "doc_commands": [CMD], "doc_targets": [command_path(APP, CMD)]}
    return task.model_copy(update={"params": {**task.params, **extra}})


def _screens(ui_seed: int) -> tuple[str, str]:
    placed = ui_spec(APP, ui_seed).commands[CMD]
    closed = f'[1] button "Media"\n[2] button "{placed.menu}"\n[3] button "Subtitles"'
    return closed, closed + f'\nmenu "{placed.menu}"\n[9] menuitem "Decoy"\n[10] menuitem "{placed.label}"'


def _loop(task: Task, screen: str, **kwargs: Any) -> DocLoop:
    context = LoopContext(tokenizer=None, prompt_format=PromptFormat())
    return DocLoop(task, {"text": screen, "url": "http://127.0.0.1:1/media_player/index.html"}, context, **kwargs)


def test_tools_variant_answers_lookups_agent_side_and_acts_on_the_rest() -> None:
    seed = _layout()
    closed, _ = _screens(seed)
    loop = _loop(_task("tools", seed), closed)
    assert loop.current.text == render(EMPTY, closed)
    move = loop.act(search_call("Set the playback speed to 1.5×."))
    assert isinstance(move, ToolResult) and move.name == "search_docs" and move.result.startswith("[1] ")
    rank = next(n for n, h in enumerate(loop.session.last_hits, 1) if h.path == command_path(APP, CMD))
    page = loop.act(open_call(rank))
    label = ui_spec(APP, seed).commands[CMD].label
    assert isinstance(page, ToolResult) and f"Choose “{label}”" in page.result
    assert loop.current.text == render(page.result, closed)
    assert loop.current.info["doc_opened"] == command_path(APP, CMD) and loop.current.info["doc_searches"] == 1
    assert isinstance(loop.act("click(2)"), EnvAction)


def test_oracle_starts_with_the_page_and_none_refuses_the_tools() -> None:
    seed = _layout()
    closed, _ = _screens(seed)
    oracle = _loop(_task("oracle", seed), closed)
    assert f"Choose “{ui_spec(APP, seed).commands[CMD].label}”" in oracle.current.text
    none = _loop(_task("none", seed), closed)
    move = none.act(search_call("speed"))
    assert isinstance(move, ToolResult) and move.result == REFUSED
    assert none.current.text == render(UNAVAILABLE, closed) and none.session.searches == 0


class FailingIndex:
    def __init__(self, seed: int) -> None:
        self.seed = seed

    def search(self, query: str, app: str | None, k: int) -> list[object]:
        raise TimeoutError("retrieval service timed out")

    def page(self, path: str) -> object:
        raise TimeoutError("retrieval service timed out")


def test_a_failing_backend_degrades_to_no_context_and_the_episode_goes_on() -> None:
    closed, opened = _screens(0)
    loop = _loop(_task("tools", 0), closed, backend=f"{__name__}:FailingIndex", tool_budget=2)
    assert isinstance(loop.act(search_call("speed")), ToolResult)
    assert loop.current.text == render(NO_CONTEXT, closed) and loop.current.info["doc_failures"] == 1
    loop.act(open_call(1))
    assert loop.act(search_call("speed again")) == ToolResult("search_docs", "tool budget used")
    assert isinstance(loop.act("click(2)"), EnvAction)
    loop.observe({"text": opened}, 0.0, {"visited_urls": []})
    assert loop.current.info["screen"] == opened and loop.current.info["doc_calls"] == 3


def recording_index(seed: int, embedder: str = "wordllama") -> FailingIndex:
    """A backend factory that keeps what it was built with (`rollout.agent.kwargs.backend_kwargs` reach it)."""
    index = FailingIndex(seed)
    index.embedder = embedder  # type: ignore[attr-defined]
    return index


def test_backend_kwargs_reach_the_backend_factory() -> None:
    seed = _layout()
    closed, _ = _screens(seed)
    loop = _loop(_task("tools", seed), closed, backend=f"{__name__}:recording_index", backend_kwargs={"embedder": "m"})
    assert (loop.session.backend.seed, loop.session.backend.embedder) == (seed, "m")
    dense = "raygent.environments.web.doc_tools:dense_index"
    config = load_config(
        "docos", [f"rollout.agent.kwargs.backend={dense}", "rollout.agent.kwargs.backend_kwargs.embedder=/models/bge"]
    )
    assert config.rollout.agent.kwargs["backend_kwargs"] == {"embedder": "/models/bge"}


def test_a_demonstration_shows_exactly_the_prompts_the_loop_builds() -> None:
    seed = _layout()
    closed, opened = _screens(seed)
    task = _task("tools", seed)
    turns = doc_turns(task, [(closed, "click(2)"), (opened, "click(10)")])
    assert [a for _, a in turns][:1] == [search_call(task.instruction)] and turns[1][1].startswith("open_doc(")
    loop = _loop(task, closed)
    screens = iter([opened])
    for observation, action in turns:
        assert loop.current.text == observation
        if isinstance(loop.act(action), EnvAction):
            loop.observe({"text": next(screens, opened)}, 0.0, {})
    assert loop.session.opened == [command_path(APP, CMD)]
    none = doc_turns(_task("none", 0), [(closed, "click(2)")])
    assert none == [(render(UNAVAILABLE, closed), "click(2)")]


def test_with_the_last_action_line_the_demonstrations_prompts_are_still_the_loops() -> None:
    """`policy.prompt.last_action`: SFT builds each prompt from the demonstration's earlier turns
    (`samples_from_demonstration`), the loop from its history; both show the same `Last action:` line, tool calls
    included, and the loop's line carries the app's error."""
    seed = _layout()
    closed, opened = _screens(seed)
    task = _task("tools", seed)
    fmt = PromptFormat(max_history=0, task_position="last", last_action=True)
    turns = doc_turns(task, [(closed, "click(2)"), (opened, "click(10)")])
    context = LoopContext(tokenizer=None, prompt_format=fmt)
    loop = DocLoop(task, {"text": closed, "url": "http://127.0.0.1:1/media_player/index.html"}, context)
    seen: list[Turn] = []
    for observation, action in turns:
        assert loop.messages() == fmt.messages(task.instruction, observation, seen)
        if isinstance(loop.act(action), EnvAction):
            loop.observe({"text": opened}, 0.0, {})
        seen.append(Turn(observation=observation, action=action))
    loop.act('click_label("Nope")')
    loop.observe({"text": opened, "last_action_error": "no element named 'Nope'"}, 0.0, {})
    assert loop.messages()[-1].content.startswith("Last action: click_label(\"Nope\") (error: no element named 'Nope')")


def test_label_grounding_writes_the_clicks_by_the_names_the_page_prints() -> None:
    seed = _layout()
    placed = ui_spec(APP, seed).commands[CMD]
    closed, opened = _screens(seed)
    task = _task("oracle", seed)
    labelled = task.model_copy(update={"params": {**task.params, "grounding": "label"}})
    expert = [(closed, "click(2)"), (opened, "click(10)"), (opened, 'select(4, "1.5×")')]
    assert [a for _, a in doc_turns(task, expert)] == ["click(2)", "click(10)", 'select(4, "1.5×")']
    actions = [a for _, a in doc_turns(labelled, expert)]
    assert actions == [f'click_label("{placed.menu}")', f'click_label("{placed.label}")', 'select(4, "1.5×")']
    assert placed.menu in oracle_context(seed, [command_path(APP, CMD)])  # the words to copy are on the page


def _step(text: str, action: str, info: dict[str, Any], tool: bool = False) -> Step:
    return Step(
        observation=Observation(text=text, info=info),
        prompt_ids=[1],
        response_ids=[2],
        logprobs=[-0.1],
        action=action,
        tool_call=tool,
        policy_version=0,
    )


def test_score_reads_tcr_and_both_tui_halves_from_the_episode() -> None:
    seed = _layout()
    closed, opened = _screens(seed)
    task = _task("tools", seed)
    before = {"screen": closed, "doc_opened": "", "doc_searches": 0, "doc_failures": 0, "doc_calls": 0}
    after = {**before, "doc_opened": command_path(APP, CMD), "doc_searches": 1, "doc_calls": 2}
    steps = [
        _step("x", search_call("speed"), before, tool=True),
        _step("x", "open_doc(1)", {**before, "doc_searches": 1, "doc_calls": 1}, tool=True),
        _step("x", "click(2)", after),
        _step("x", "click(10)", {**after, "screen": opened}),
    ]
    result = score(Trajectory(task=task, steps=steps, success=True, group_id="g"))
    assert (result.success, result.found, result.followed, result.searches, result.calls) == (True, True, 1.0, 1, 2)
    assert (result.variant, result.layout) == ("tools", "random")
    lost = score(Trajectory(task=task, steps=[_step("x", "click(9)", before)], success=False, group_id="g"))
    assert (lost.found, lost.followed) == (False, 0.0)


def test_a_tool_cost_judge_ranks_a_success_with_fewer_lookups_higher() -> None:
    from raygent.platform.rl.reward import apply_judgement
    from raygent.rewards.tool_cost import ToolCost

    seed = _layout()
    task = _task("tools", seed)
    info = {"screen": "x", "doc_opened": "", "doc_searches": 0, "doc_failures": 0, "doc_calls": 0}

    def episode(lookups: int, success: bool) -> Trajectory:
        steps = [_step("x", search_call("speed"), info, tool=True) for _ in range(lookups)]
        steps.append(_step("x", "click(2)", info).model_copy(update={"reward": float(success)}))
        return Trajectory(task=task, steps=steps, success=success, group_id="g")

    judge = ToolCost(cost=0.1, free=2)
    group = [episode(2, True), episode(4, True), episode(5, False)]
    judged = [apply_judgement(t, j, "add") for t, j in zip(group, judge.judge(group), strict=True)]
    assert [round(t.reward, 3) for t in judged] == [1.0, 0.8, -0.3]
    assert [t.success for t in judged] == [True, True, False]  # the environment's verdict stands
    assert judged[1].judgement is not None and judged[1].judgement.info == {"tool_calls": 4}
    with pytest.raises(ValueError, match="cost"):
        ToolCost(cost=-1)


def _scores(variant: str, layout: str, successes: list[bool], found: bool = True) -> list[EpisodeScore]:
    return [
        EpisodeScore(f"t{i}", APP, "set_speed", variant, layout, s, found, 1.0 * s) for i, s in enumerate(successes)
    ]


def test_summary_claims_and_the_search_failure_share() -> None:
    stage = (
        _scores("oracle", "random", [True, True, True, False])
        + _scores("tools", "random", [True, False, False, False], found=False)
        + _scores("none", "random", [False] * 4, found=False)
        + _scores("tools", "default", [True, True, False, False])
        + _scores("none", "default", [True, True, False, False])
    )
    summary = summarize(stage)
    assert summary["all/tools/random"]["tcr"] == 0.25 and summary[f"{APP}/oracle/random"]["tcr"] == 0.75
    assert summary["all/tools/random"]["failed_not_found"] == 1.0
    sf = search_failure(summary)
    assert sf["gap"] == pytest.approx(0.5) and sf["share"] == pytest.approx(0.5 / 0.75)
    verdict = claims(summary, before=summarize(_scores("tools", "random", [False] * 4, found=False)))
    assert verdict["oracle_ge_tools_gt_none_random"] and verdict["gap_shrinks_on_default"]
    assert verdict["grpo_raises_tcr"] and not verdict["grpo_raises_tui"]
    # the same gap on both layouts (3/12 - 1/12 and 4/12 - 2/12, unequal in the last bit) has not shrunk
    same_gap = (
        _scores("tools", "random", [True] * 3 + [False] * 9)
        + _scores("none", "random", [True] + [False] * 11)
        + _scores("tools", "default", [True] * 4 + [False] * 8)
        + _scores("none", "default", [True] * 2 + [False] * 10)
    )
    assert not claims(summarize(same_gap))["gap_shrinks_on_default"]


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("rollout.agent.kwargs.hitz=3", "rollout.agent.kwargs.hitz: unknown key (did you mean 'hits'?)"),
        ("rollout.agent.kwargs.backend=raygent.environments.web.doc_tools:no_index", "rollout.agent.kwargs.backend"),
        ("env.task_kwargs.docs=manual", "task_kwargs.docs"),
        ("env.task_kwargs.none_share=1.5", "task_kwargs.none_share"),
        ("env.task_kwargs.grounding=pixels", "task_kwargs.grounding"),
        ("docos.demo_workers=0", "docos.demo_workers"),
    ],
)
def test_a_bad_config_is_refused_naming_the_key(override: str, named: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)):
        load_config("docos", [override])
    assert load_config("docos").job == "docos"
    dense = "raygent.environments.web.doc_tools:hybrid_index"
    assert load_config("docos", [f"rollout.agent.kwargs.backend={dense}"]).rollout.agent.kwargs["backend"] == dense


def test_the_html_report_shows_the_doc_read_beside_each_screen(tmp_path: Path) -> None:
    seed = _layout()
    closed, _ = _screens(seed)
    task = _task("tools", seed)
    page = "Playback Speed…\n1. In the menu bar, open the “Tools” menu."
    info = {"screen": closed, "doc_opened": command_path(APP, CMD)}
    trajectory = Trajectory(
        task=task, steps=[_step(render(page, closed), "click(2)", info)], success=False, group_id="g"
    )
    summary = summarize(_scores("tools", "random", [False, True]))
    write_html(tmp_path / "docos.html", {"sft": summary, "grpo": summary}, {}, {"grpo, tools/random": [trajectory]})
    text = (tmp_path / "docos.html").read_text()
    assert "<h2>media_player</h2>" in text and "open the “Tools” menu" in text and "click(2)" in text
    assert html.escape('[2] button "') in text and command_path(APP, CMD) in text
