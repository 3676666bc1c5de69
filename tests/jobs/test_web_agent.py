"""The web agent (`jobs/web_agent/`, `raygent run web_agent`).

Fast tests: the compact observation, the task source's splits (held-out parameters never drawn in training),
the demonstration cache. Browser tests: `CompactWebEnv` passes gymnasium's checker and keeps element ids; a
recorded demonstration replays to success. The end-to-end test (slow): a reduced run on the embedded cluster
is killed mid-GRPO and resumed (each task batch trained exactly once), writes `report.html` with replayed
screenshots and the never-trained-templates row, and `raygent serve` on it answers `/v1/act` for a media-player
observation with an action the web grammar parses. Behaviour only; success rates are the bench's business.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from raygent.environments.web.agent import demos
from raygent.environments.web.agent.hindsight import HindsightGoals
from raygent.environments.web.agent.observation import by_label, compact, grounded
from raygent.environments.web.agent.tasks import HELDOUT_START, TRAIN_POOL, sft_pool, template_ids, web_tasks
from raygent.environments.web.grammar import WEB_GRAMMAR
from raygent.environments.web.observe import parse
from raygent.environments.web.registry import make_task
from raygent.jobs.web_agent.recipe import template_rows
from raygent.policies.actions import InvalidAction

from conftest import post, raygent, records, run_killed_at_grpo_step, served

pytestmark = [pytest.mark.browser, pytest.mark.ray]

FULL = """banner
  menubar "Menu bar"
    [1] button "Media"
    [2] button "Playback" expanded focused
  text "Tempo Media Player"
main
  [7] canvas "Video" box=(9,56,725,656)
  [12] textbox "Editor" value="# balance calculation\\nlet depth = 17\\nlet width = 9"
  list
    listitem
      [16] option "1. Harbor of Echoes — Nadia Crane (5:19)" selected"""


def test_compact_keeps_every_element_id_and_drops_structure() -> None:
    text = compact(FULL)
    assert [e.id for e in parse(text) if e.id is not None] == [e.id for e in parse(FULL) if e.id is not None]
    assert text.splitlines()[0] == '[1] button "Media"'  # the unnamed-id structure (menubar) is dropped
    assert '[2] button "Playback" expanded focused' in text
    assert '[7] canvas "Video" box=(9,56,725,656)' in text
    assert not any(line.startswith((" ", "banner", "main", "list")) for line in text.splitlines())
    editor = next(e for e in parse(text) if e.id == 12)
    assert editor.value is not None and len(editor.value) <= 16 and editor.value.startswith("# balance")
    assert len(text) < len(FULL)


def test_label_grounding_writes_a_click_by_the_name_the_compact_screen_shows_whole() -> None:
    cut = '[1] button "Slide 1: Quarterly revi…"\n[2] button "Next"'
    twice = '[1] button "Next"\n[2] button "Next"'
    assert by_label(cut, "click(2)") == 'click_label("Next")' and by_label(cut, "hotkey(Escape)") == "hotkey(Escape)"
    # a name the compact screen cut, or one two controls share, stays an id
    assert by_label(cut, "click(1)") == "click(1)" and by_label(twice, "click(2)") == "click(2)"
    (task,) = web_tasks("train", 0, 1, templates=["media_player/mute_audio"], grounding="label")
    turns = [(cut, "click(2)"), (cut, 'type(1, "x")')]
    assert grounded(task, turns) == [(cut, 'click_label("Next")'), (cut, 'type(1, "x")')]
    (plain,) = web_tasks("train", 0, 1, templates=["media_player/mute_audio"])
    assert "grounding" not in plain.params and grounded(plain, turns) == turns
    with pytest.raises(ValueError, match="grounding must be one of"):
        web_tasks("train", 0, 1, grounding="pixels")


def test_template_ids_filter_and_reject_unknown_templates() -> None:
    atomic = template_ids(["media_player"], None, [1])
    assert "media_player/set_volume" in atomic and all(t.startswith("media_player/") for t in atomic)
    kept = template_ids(["media_player"], None, [1], exclude=["media_player/set_volume"])
    assert set(atomic) - set(kept) == {"media_player/set_volume"}
    with pytest.raises(ValueError, match="not among"):
        template_ids(["media_player"], ["media_player/no_such_template"], [1])


def test_train_split_stays_in_its_pool_and_is_reproducible() -> None:
    first = web_tasks("train", 3, 40, apps=["code_editor", "slide_editor"], difficulties=[1], pool=2)
    again = web_tasks("train", 3, 40, ["code_editor", "slide_editor"], None, [1], (), 2)
    assert [t.id for t in first] == [t.id for t in again]
    assert all(t.params["seed"] < 2 and t.params["app"] in {"code_editor", "slide_editor"} for t in first)
    assert {t.id for t in first} <= {t.id for t in sft_pool(["code_editor", "slide_editor"], None, [1], 2)}
    assert [t.id for t in web_tasks("train", 4, 40, ["code_editor"], None, [1], (), 2)] != [t.id for t in first]


def test_ui_seeds_deal_layouts_to_train_heldout_and_the_sft_pool() -> None:
    layouts = [3, 7]
    train = web_tasks("train", 3, 40, ["code_editor"], None, [1], (), 2, ui_seeds=layouts)
    assert {t.params["ui_seed"] for t in train} == set(layouts) and all(t.id.endswith(("@3", "@7")) for t in train)
    # the templates and parameter seeds drawn are those of the one-layout draw; one layout draws no layout
    assert [t.id.split("@")[0] for t in train] == [
        t.id.split("@")[0] for t in web_tasks("train", 3, 40, ["code_editor"], None, [1], (), 2)
    ]
    assert {t.params["ui_seed"] for t in web_tasks("train", 3, 40, ["code_editor"], None, [1], (), 2)} == {0}
    pool = sft_pool(["code_editor"], None, [1], 2, (), layouts)
    assert {t.id for t in train} <= {t.id for t in pool}
    assert len(pool) == 2 * len(sft_pool(["code_editor"], None, [1], 2))
    heldout = web_tasks("heldout", 0, 12, apps=["code_editor"], difficulties=[1], ui_seeds=[9])
    assert {t.params["ui_seed"] for t in heldout} == {9}
    templates = template_ids(["code_editor"], None, [1])
    both = web_tasks("heldout", 0, 2 * len(templates), apps=["code_editor"], difficulties=[1], ui_seeds=layouts)
    for template in templates:  # each template's tasks at each layout in turn
        assert [t.params["ui_seed"] for t in both if t.id.startswith(template + "/")] == layouts
    with pytest.raises(ValueError, match="ui_seeds"):
        web_tasks("train", 0, 1, ui_seeds=[])


def test_heldout_tasks_are_balanced_and_never_drawn_in_training() -> None:
    tasks = web_tasks("heldout", 7919, 16, apps=["media_player"], difficulties=[1], exclude=["media_player/mute_audio"])
    templates = [t.params["template"] for t in tasks]
    assert len(set(templates)) == 8 and all(templates.count(name) == 2 for name in set(templates))
    assert all(t.params["seed"] >= HELDOUT_START for t in tasks) and "mute_audio" not in templates
    for task in tasks:
        template = f"{task.params['app']}/{task.params['template']}"
        trained = {json.dumps(t.params["params"], sort_keys=True) for t in sft_pool(None, [template], [1], TRAIN_POOL)}
        assert json.dumps(task.params["params"], sort_keys=True) not in trained


def test_demonstrations_come_from_the_cache_without_a_browser(tmp_path: Path) -> None:
    tasks = sft_pool(["code_editor"], ["code_editor/open_file"], [1], 2)
    turns = [[('[1] button "File"', "click(1)")], []]
    for task, kept in zip(tasks, turns, strict=True):
        demos._store(demos.cache_path(task, tmp_path), task, {"success": bool(kept), "turns": kept})
    assert demos.demonstrations(tasks, root=tmp_path) == turns
    assert demos.cache_path(tasks[0], tmp_path).parent.name == demos.fingerprint("code_editor")
    with pytest.raises(ValueError, match="not a web-suite task"):
        demos.demonstrations([tasks[0].model_copy(update={"params": {}})], root=tmp_path)


def test_explorations_come_from_the_cache_as_relabeled_demonstrations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from raygent.jobs.web_agent import explore

    monkeypatch.setenv("RAYGENT_CACHE", str(tmp_path))
    templates = ["media_player/mute_audio"]
    tasks = web_tasks("train", 0, 2, apps=["media_player"], difficulties=[1])
    kind = explore.cache_kind(templates, 8, 10)
    assert kind != explore.cache_kind(templates, 8, 11)  # other settings are other recordings
    reached = [["media_player/mute_audio/1#library=3", "Mute the sound.", [['[13] button "Mute"', "click(13)"]]]]
    demos._store(demos.cache_path(tasks[0], kind=kind), tasks[0], {"demos": reached})
    demos._store(demos.cache_path(tasks[1], kind=kind), tasks[1], {"demos": []})
    found = explore.explorations(tasks, templates, 8, 10, workers=1, env_id="raygent/web-agent-v0")
    assert [(t.id, t.env, t.instruction) for t, _ in found] == [
        ("media_player/mute_audio/1#library=3", "raygent/web-agent-v0", "Mute the sound.")
    ]
    assert found[0][1] == [('[13] button "Mute"', "click(13)")]


def test_an_unknown_recording_kind_without_a_take_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'nope' needs a `take`"):
        demos.ensure_recorded([], kind="nope")


def test_hindsight_goals_report_what_the_state_newly_satisfies_once() -> None:
    goals = HindsightGoals(["media_player/mute_audio", "media_player/toggle_shuffle"], per_template=6)
    episode = make_task("media_player/set_speed/3")
    start = {"muted": False, "shuffle": True}
    goals.reset(episode, start)
    assert goals.achieved(start) == []  # nothing achieved yet; shuffle-on goals were true already and are dropped
    achieved = goals.achieved({"muted": True, "shuffle": True})
    assert [goal for _, goal in achieved] == ["Mute the sound."]
    task_id = achieved[0][0]
    assert task_id.startswith("media_player/mute_audio/") and task_id.endswith(f"#library={episode.params['library']}")
    assert goals.achieved({"muted": True, "shuffle": True}) == []  # reported once
    assert [goal for _, goal in goals.achieved({"muted": True, "shuffle": False})] == ["Stop playing in random order."]
    goals.reset(episode, None)  # the first state could not be read: no candidates
    assert goals.achieved({"muted": True, "shuffle": False}) == []


# -- in the browser ---------------------------------------------------------------------------------------------


def test_compact_env_reports_the_goals_an_episode_reaches_on_the_way() -> None:
    from raygent.environments.web.agent.env import CompactWebEnv

    env = CompactWebEnv(app="media_player", hindsight=["media_player/mute_audio", "media_player/set_repeat"])
    try:
        observation, _ = env.reset(options={"task": "media_player/set_speed/3"})
        audio = next(e.id for e in parse(observation["text"]) if e.name == "Audio")
        observation, *_, info = env.step(f"click({audio})")
        assert "hindsight" not in info
        mute = next(e.id for e in parse(observation["text"]) if e.name == "Mute" and e.role.startswith("menuitem"))
        _, reward, terminated, _, info = env.step(f"click({mute})")
        assert [goal for _, goal in json.loads(info["hindsight"])] == ["Mute the sound."]
        assert reward == 0.0 and not terminated  # the episode's own task (the speed) is still to do
    finally:
        env.close()


def test_exploration_finds_goals_whose_demonstrations_replay_to_them() -> None:
    from raygent.environments.web.env import BrowserEnv
    from raygent.jobs.web_agent.explore import explore

    templates = ["media_player/mute_audio", "media_player/set_volume", "media_player/toggle_shuffle"]
    task = make_task("media_player/set_speed/2").to_platform()
    env = BrowserEnv()
    try:
        found = explore(env, task, HindsightGoals(templates, 8), steps=10)
        assert [goal for _, goal, _ in found] == ["Mute the sound."]  # Audio, then its Mute item
        assert explore(env, task, HindsightGoals(templates, 8), steps=10) == found  # seeded by the task id
        for _, goal, turns in found:
            observation, _ = env.reset(options={"task": task})
            goals = HindsightGoals(templates, 8)
            goals.reset(env.task, env.read_state())
            reached = []
            for text, action in turns:
                assert compact(str(observation["text"])) == text  # each turn's screen is the one acted on
                observation, *_ = env.step(action)
                reached += [achieved for _, achieved in goals.achieved(env.last_state)]
            assert reached == [goal]
    finally:
        env.close()


def test_exploration_replays_short_demonstrations_on_other_tasks_of_the_template() -> None:
    from raygent.environments.web.env import BrowserEnv
    from raygent.jobs.web_agent.explore import explore

    templates = ["media_player/mute_audio", "media_player/set_volume", "media_player/toggle_shuffle"]
    task = make_task("media_player/set_speed/2").to_platform()
    env = BrowserEnv()
    try:
        (found,) = explore(env, task, HindsightGoals(templates, 8), steps=10)
        first, *moved = explore(env, task, HindsightGoals(templates, 8), steps=10, transfers=3)
        assert first == found and first[1] == "Mute the sound." and 1 <= len(moved) <= 3
        for task_id, _, turns in moved:  # the same clicks, on screens of other mute_audio tasks
            assert task_id.startswith("media_player/mute_audio/")
            assert [a for _, a in turns] == [a for _, a in first[2]] and turns[0][0] != first[2][0][0]
        # where a target starts muted, the same clicks are the other instruction's demonstration
        assert {goal for _, goal, _ in moved} == {"Mute the sound.", "The sound is muted: bring it back."}
    finally:
        env.close()


def test_exploration_keeps_the_shortest_suffix_that_still_reaches_the_goal(monkeypatch: pytest.MonkeyPatch) -> None:
    from raygent.environments.web.env import BrowserEnv
    from raygent.jobs.web_agent import explore

    templates = ["media_player/mute_audio", "media_player/set_volume", "media_player/toggle_shuffle"]
    templates += ["media_player/set_repeat", "media_player/play_track"]
    task = make_task("media_player/set_speed/3").to_platform()
    env = BrowserEnv()
    try:
        [(_, goal, pruned)] = explore.explore(env, task, HindsightGoals(templates, 8), steps=10)
        monkeypatch.setattr(explore, "PRUNE_SUFFIXES", 0)
        [(_, raw_goal, raw)] = explore.explore(env, task, HindsightGoals(templates, 8), steps=10)
        assert goal == raw_goal and goal.startswith("Play the track")
        assert len(pruned) == 1 < len(raw) and pruned[0][1] == raw[-1][1]  # the detours before the last click go
        observation, _ = env.reset(options={"task": task})
        goals = HindsightGoals(templates, 8)
        goals.reset(env.task, env.read_state())
        assert compact(str(observation["text"])) == pruned[0][0]
        env.step(pruned[0][1])
        assert [achieved for _, achieved in goals.achieved(env.last_state)] == [goal]
    finally:
        env.close()


def test_compact_env_passes_the_checker_and_acts_on_compact_ids() -> None:
    from gymnasium.utils.env_checker import check_env

    from raygent.environments.web.agent.env import CompactWebEnv

    env = CompactWebEnv(app="media_player", difficulties=(1,))
    try:
        check_env(env, skip_render_check=True)
        observation, _ = env.reset(options={"task": "media_player/set_volume/3"})
        volume = next(e for e in parse(observation["text"]) if e.name == "Volume")
        assert "  " not in observation["text"] and volume.id is not None
        _, reward, terminated, _, info = env.step(f'type({volume.id}, "{env.inner.task.params["volume"]}")')
        assert terminated and reward == 1.0 and info["success"]
    finally:
        env.close()


def test_recorded_demonstration_replays_to_success(tmp_path: Path) -> None:
    from raygent.environments.web.agent.env import CompactWebEnv

    task = sft_pool(["slide_editor"], ["slide_editor/retitle_slide"], [1], 1)[0]
    (turns,) = demos.demonstrations([task], workers=1, root=tmp_path)
    assert turns and all(action not in demos.BLIND_LOOKS for _, action in turns)
    env = CompactWebEnv()
    try:
        observation, _ = env.reset(options={"task": task})
        for seen, action in turns:
            assert observation["text"] == seen
            observation, _, terminated, _, info = env.step(action)
        assert terminated and info["success"]
    finally:
        env.close()


def test_template_rows_split_held_out_success_by_template() -> None:
    def evaluation(step: int, outcomes: dict[str, bool]) -> dict[str, object]:
        return {"stage": "eval", "step": step, "eval/outcomes": outcomes}

    before = {"media_player/mute_audio/1000001": False, "media_player/mute_audio/1000007": True}
    after = {**before, "media_player/mute_audio/1000001": True, "media_player/set_speed/1000002": False}
    records = [evaluation(0, before), {"stage": "grpo", "step": 1}, evaluation(3, after)]
    assert template_rows(records, 3) == [
        ("held-out media_player/mute_audio", 0.5, 1.0),
        ("held-out media_player/set_speed", pytest.approx(float("nan"), nan_ok=True), 0.0),
    ]
    assert template_rows(records, 4) == [] and template_rows(records[1:], 3) == []


# -- end to end on the embedded cluster -----------------------------------------------------------------------

STEPS = 3
SFT_STEPS = 40
SMALL = [
    f"sft.steps={SFT_STEPS}",
    "sft.batch_tasks=2",
    "sft.lr=0.003",
    "sft.task_kwargs.apps=[slide_editor]",
    "sft.task_kwargs.templates=[slide_editor/retitle_slide,slide_editor/speaker_notes]",
    "sft.task_kwargs.pool=1",
    f"trainer.steps={STEPS}",
    "trainer.checkpoint_every=1",
    "trainer.eval_every=0",
    "trainer.eval_tasks=2",
    "web.heldout_template_tasks=1",
    "web.examples=2",
    "web.demo_workers=1",
    "web.explore_episodes=4",
    "web.explore_steps=3",
    "web.replay.warmup=2",
    "web.replay.per_goal=2",
    "rollout.num_workers=1",
    "rollout.groups_per_step=1",
    "rollout.group_size=2",
    "rollout.envs_per_worker=2",
    "rollout.max_turns=2",
    "policy.vocab_size=320",
    "rollout.engine_num_cpus=0",
    "learner.num_cpus=0",
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reduced web_agent run killed after GRPO step 2 and resumed to the end (its own demonstration cache)."""
    base = tmp_path_factory.mktemp("web_agent")
    directory = base / "run"
    cache = {"RAYGENT_CACHE": str(base / "cache")}
    run_killed_at_grpo_step("web_agent", SMALL, directory, 2, env=cache, wait_s=900)
    assert (directory / "checkpoints" / "LATEST").read_text().strip() == "grpo_000001"
    done = raygent("run", "--resume", str(directory), timeout=900, env=cache)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "resumed from grpo_000001" in done.stdout
    return directory


@pytest.mark.slow
def test_run_trains_resumes_and_reports_with_screenshots(run_dir: Path) -> None:
    grpo = [r for r in records(run_dir) if r["stage"] == "grpo"]
    assert [r["step"] for r in grpo] == list(range(1, STEPS + 1))
    assert [r["data/batch_index"] for r in grpo] == list(range(STEPS))
    assert all(task.startswith("media_player/") for r in grpo for task in r["data/task_ids"])
    # the hindsight buffer only grows, across the kill and resume too (it is saved in the checkpoints)
    buffers = [r["hindsight/buffer"] for r in grpo]
    assert buffers == sorted(buffers)
    # replay steps before the first GRPO step exactly when exploration seeded the buffer
    warmup = [r for r in records(run_dir) if r["stage"] == "hooks"]
    seeded = grpo[0]["hindsight/buffer"] - grpo[0]["hindsight/new"]
    assert len(warmup) == (1 if seeded else 0) and all(r["hindsight/buffer"] == seeded for r in warmup)
    assert [r["step"] for r in records(run_dir) if r["stage"] == "sft"] == list(range(1, SFT_STEPS + 1))
    evals = [r for r in records(run_dir) if r["stage"] == "eval"]
    assert evals and all("eval/success" in r and "eval/unseen_templates/success" in r for r in evals)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["job"] == "web_agent" and summary["steps"] == STEPS
    names = [row["name"] for row in summary["rows"]]
    assert names[0] == "templates never trained on"
    assert names[1:] == sorted(f"held-out {tid.rsplit('/', 1)[0]}" for tid in evals[-1]["eval/outcomes"])
    assert set(summary["never_trained_templates"]).isdisjoint(summary["grpo_templates"])
    report = (run_dir / "report.html").read_text()
    assert "templates never trained on" in report and "curve.png" in report
    shots = re.findall(r"src='(examples/[^']+\.png)'", report)
    assert shots and all((run_dir / shot).stat().st_size > 1000 for shot in shots)


@pytest.mark.slow
def test_served_agent_answers_a_media_player_observation_with_a_valid_action(run_dir: Path) -> None:
    from raygent.environments.web.agent.env import CompactWebEnv

    env = CompactWebEnv()
    try:
        observation, _ = env.reset(options={"task": "media_player/set_volume/5"})
        goal = env.inner.task.goal if env.inner.task else ""
    finally:
        env.close()
    with served(run_dir) as base:
        # The run's eval sampling first, then up to 31 samples for one the web grammar parses (a 40-step SFT
        # model writes grammar-shaped text, but not always a whole valid action).
        act = {"task": {"instruction": goal}, "observation": {"text": observation["text"]}, "attempts": 32}
        status, answer = post(f"{base}/v1/act", act)
        assert status == 200 and answer["policy_version"] == STEPS
        assert answer["valid"] is True and 1 <= answer["attempts"] <= 32, answer
        assert not isinstance(WEB_GRAMMAR.parse(answer["action"]), InvalidAction), answer["action"]
        status, _ = post(f"{base}/v1/act", {**act, "attempts": 0})
        assert status == 422
