"""XSkill on the web suite without Ray: procedures that name elements, the web summarizer's skill and tip, the loop's
context on every screen, the tasks' modes and evaluated apps, the config's checks; and (browser) SFT demonstrations
whose every screen carries the teacher bank's skill."""

from __future__ import annotations

import re

import pytest

from raygent.environments.web.agent.tasks import sft_pool, web_tasks
from raygent.jobs.xskill.loop import LOCAL_BANKS, MemoryLoop
from raygent.jobs.xskill.memory import MemoryBank, situation_of
from raygent.jobs.xskill.summarize import Group, Rollout, strip_context
from raygent.jobs.xskill.web import WebSummarizer, web_memory_demonstrations, web_procedure, xskill_web_tasks
from raygent.platform.config import ConfigError, load_config
from raygent.platform.rl.agent_loop import LoopContext
from raygent.policies.prompts import PromptFormat

SCREEN = '[9] button "Play/Pause"\n[13] button "Mute"\n[14] slider "Volume" value="80"\ntext "Nothing is playing."'
UNMUTED = SCREEN.replace('"Mute"', '"Unmute"')


def rollout(actions: list[str], success: bool, screens: list[str] | None = None) -> Rollout:
    shown = screens or [SCREEN] * len(actions)
    return Rollout(tuple(shown), tuple(actions), success, (True,) * len(actions))


def test_web_procedures_name_elements_and_abstract_the_tasks_numbers() -> None:
    steps = web_procedure("Set the volume to 30%.", rollout(["click(13)", 'type(14, "30")', "click(99)"], False))
    assert steps == ['click_label("Mute")', 'type("Volume", "A")', "click(99)"]
    # each step is read on its own screen: the same id names another element after the first click
    assert web_procedure("Mute.", rollout(["click(13)", "click(13)"], True, [SCREEN, UNMUTED])) == [
        'click_label("Mute")',
        'click_label("Unmute")',
    ]
    summarizer = WebSummarizer()
    assert summarizer.specific("click(99)") and not summarizer.specific('click("Slide 3: Roadmap")')


TRACKS = '[9] button "Play/Pause"\n[21] row "Brass Meadow"\n[22] row "Glass Harbor"\n[30] textbox "Title"'


def test_quoted_names_are_parameters_so_a_skill_serves_other_names() -> None:
    """A name the instruction quotes is a parameter like a number: the situation and the procedure abstract it
    (clicked by id or by name, or typed), and another task of the same kind gets the skill with its own name."""
    assert situation_of("Rename the track “Brass Meadow” to “Low Tide”.") == (
        "Rename the track “A” to “B”.",
        ["Brass Meadow", "Low Tide"],
    )
    assert situation_of("Create helpers.mini whose only line is `print 11 * 4`.") == (
        "Create A whose only line is `B`.",
        ["helpers.mini", "print 11 * 4"],
    )
    assert situation_of("Set the playback speed to 0.5×.")[1] == []  # a decimal is no parameter
    # a file name ends a sentence, or has folders (each was left in the situation: a skill for one file only)
    assert situation_of("Create a new, empty file named lib/tools.mini.") == (
        "Create a new, empty file named A.",
        ["lib/tools.mini"],
    )
    assert situation_of("Rename the file main.mini to copy_main.mini.")[1] == ["main.mini", "copy_main.mini"]
    assert situation_of("Use a short name, e.g. a.b or report.final.txt.")[1] == []
    instruction = 'Rename the track "Brass Meadow" to "Low Tide".'
    wins = [
        rollout(["click(21)", 'type(30, "Low Tide")'], True, [TRACKS, TRACKS]),
        rollout(['click_label("Brass Meadow")', 'type(30, "Low Tide")'], True, [TRACKS, TRACKS]),
    ]
    assert web_procedure(instruction, wins[0]) == ['click_label("A")', 'type("Title", "B")']
    assert web_procedure(instruction, wins[1]) == web_procedure(instruction, wins[0])
    # a click by name is written as the screen names the element it clicked (click_label ignores case)
    spelled = rollout(['click_label("brass MEADOW")', 'click_label("title")'], True, [TRACKS, TRACKS])
    assert web_procedure(instruction, spelled) == ['click_label("A")', 'click_label("Title")']
    # what names nothing stays as it was: an empty click by name, a click on an element without a name
    assert web_procedure(instruction, rollout(['click_label("")', "click(5)"], False, ["", '[5] img ""'])) == [
        'click_label("")',
        "click(5)",
    ]
    bank = MemoryBank()
    group = Group(instruction, [*wins, rollout(["click(22)"], False, [TRACKS])])
    bank.apply(WebSummarizer().summarize([group], bank.view([group.situation])))
    other = 'Rename the track "Glass Harbor" to "Tin Roof".'
    skill = 'memory:\nskill: click_label("Glass Harbor") ; type("Title", "Tin Roof")'
    assert bank.context(other, "skills").text == skill
    # the tip of the task's own situation is filled in as well (not `start with click_label("A").`)
    assert bank.context(other, "experiences").text == 'memory:\ntip: start with click_label("Glass Harbor").'


LAYERS = '[40] checkbox "Show Logo"\n[41] checkbox "Show Logotype"\n[42] checkbox "Show Paint"'


def test_a_name_inside_an_element_name_is_a_parameter_too() -> None:
    """The layer's visibility box `Show Logo` is `Show A` for “Logo”, so the skill serves another layer; a name that
    only starts with the parameter (`Logotype`) and a number inside a name stay."""
    hide = "Hide the layer “Logo”."
    assert web_procedure(hide, rollout(["click(40)"], True, [LAYERS])) == ['click_label("Show A")']
    assert web_procedure(hide, rollout(["click(41)"], True, [LAYERS])) == ['click_label("Show Logotype")']
    slides = '[7] button "Slide 3: Agenda"'
    assert web_procedure("Delete the slide titled “Agenda”.", rollout(["click(7)"], True, [slides])) == [
        'click_label("Slide 3: A")'
    ]
    bank = MemoryBank()
    wins = [rollout(["click(40)"], True, [LAYERS]), rollout(['click_label("Show Logo")'], True, [LAYERS])]
    group = Group(hide, [*wins, rollout(["click(42)"], False, [LAYERS])])
    bank.apply(WebSummarizer().summarize([group], bank.view([group.situation])))
    assert bank.context("Hide the layer “Paint”.", "skills").text == 'memory:\nskill: click_label("Show Paint")'


def test_web_summarizer_writes_a_skill_and_a_first_move_tip_the_context_shows() -> None:
    group = Group(
        "Mute the sound.",
        [
            rollout(["click(13)"], True),
            rollout(["click(13)"], True),
            rollout(["click(13)"], True),
            rollout(["click(9)", "click(14)"], False),
            rollout(["click(9)"], False),
            rollout(["click(99)"], True),  # a success through an id no screen has: no skill variant
        ],
    )
    bank = MemoryBank()
    summarizer = WebSummarizer()
    bank.apply(summarizer.summarize([group], bank.view([group.situation])))
    (skill,) = bank.skills.values()
    assert skill.variants == {'click_label("Mute")': 3} and skill.watch_out == [
        'click_label("Play/Pause") as the first move failed 2 of 2 times.'
    ]
    assert (
        bank.context("Mute the sound.").text
        == 'memory:\nskill: click_label("Mute")\ntip: start with click_label("Mute").'
    )
    # a close situation gets the tip with its trigger, not the skill; an unrelated one gets nothing
    assert (
        bank.context("Unmute the sound.").text
        == "memory:\ntip: When the task reads 'Mute the sound.': start with click_label(\"Mute\")."
    )
    assert bank.context("Play the playlist in random order.").text == ""


def test_every_turn_keeps_the_context_on_later_screens() -> None:
    bank = MemoryBank()
    bank.apply(WebSummarizer().summarize([Group("Mute the sound.", [rollout(["click(13)"], True)] * 2)], {}))
    LOCAL_BANKS["web-bank"] = bank
    (task,) = web_tasks("heldout", 0, 1, templates=["media_player/mute_audio"])
    context = LoopContext(tokenizer=None, prompt_format=PromptFormat())
    loops = {
        every: MemoryLoop(task, {"text": SCREEN}, context, actor="web-bank", every_turn=every)
        for every in (True, False)
    }
    for loop in loops.values():
        assert loop.observation().text.startswith('memory:\nskill: click_label("Mute")')
        loop.observe({"text": UNMUTED}, 0.0, {})
    assert (
        loops[True].observation().text.startswith("memory:\n")
        and strip_context(loops[True].observation().text) == UNMUTED
    )
    assert loops[False].observation().text == UNMUTED
    del LOCAL_BANKS["web-bank"]


def test_tasks_stamp_modes_and_draw_heldout_from_the_evaluated_apps() -> None:
    kwargs = {"apps": ["code_editor"], "eval_apps": ["media_player"], "modes": {"none": 0.5, "skills": 0.5}}
    train = xskill_web_tasks("train", 0, 40, **kwargs)
    heldout = xskill_web_tasks("heldout", 0, 6, **kwargs)
    assert {t.params["app"] for t in train} == {"code_editor"} and {t.params["app"] for t in heldout} == {
        "media_player"
    }
    assert {t.params["xskill_mode"] for t in train} == {"none", "skills"}
    assert [t.params["xskill_mode"] for t in train] == [
        t.params["xskill_mode"] for t in xskill_web_tasks("train", 0, 40, **kwargs)
    ]
    assert "xskill_mode" not in xskill_web_tasks("train", 0, 2, apps=["code_editor"])[0].params
    assert xskill_web_tasks("train", 0, 2, apps=["code_editor"], grounding="label")[0].params["grounding"] == "label"


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("env.task_kwargs.eval_apps=[nope]", "task_kwargs.eval_apps"),
        ("env.task_kwargs.apss=[media_player]", "task_kwargs.apss"),
        ("sft.task_kwargs.modes={maybe: 1}", "task_kwargs.modes"),
        ("sft.task_kwargs.grounding=pixels", "task_kwargs.grounding"),
        ("rollout.agent.kwargs.every_turn=perhaps", "rollout.agent.kwargs.every_turn"),
        ("xskill.novel_templates=[a+b]", "xskill.novel_templates"),
    ],
)
def test_a_bad_config_is_refused_naming_the_key(override: str, named: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)):
        load_config("xskill_web", [override])
    assert load_config("xskill_web").job == "xskill_web"


@pytest.mark.browser
@pytest.mark.parametrize("grounding", ["id", "label"])
def test_sft_demonstrations_carry_the_teachers_skill_on_every_screen(grounding: str) -> None:
    tasks = [
        t.model_copy(update={"params": {**t.params, "xskill_mode": "skills", "grounding": grounding}})
        for t in web_tasks(
            "train", 0, 2, apps=["code_editor"], templates=["code_editor/open_file", "code_editor/word_wrap"], pool=1
        )
    ]
    episodes = web_memory_demonstrations(tasks)
    for turns in episodes:
        assert turns, "the expert solved the task"
        skill = turns[0][0].split("\n")[1]
        assert skill.startswith('skill: click_label("')
        by_name = [action for _, action in turns if action.startswith("click_label(")]
        assert bool(by_name) == (grounding == "label")
        for observation, action in turns:
            assert observation.startswith("memory:\n" + skill + "\n--\n")
            if action in by_name:
                assert action in skill  # the skill's step is the demonstrated action, word for word
                continue
            # the skill names the element the expert clicked on this screen
            element = re.search(rf"^\[{re.escape(action[6:-1])}\] \w+ \"([^\"]*)\"", strip_context(observation), re.M)
            assert element is not None and f'click_label("{element.group(1)}")' in skill


@pytest.mark.browser
def test_on_randomized_layouts_each_task_is_shown_its_own_layouts_skill() -> None:
    # word wrap is View > Word Wrap at UI seed 0 and Preferences > Wrap Long Lines at UI seed 7
    tasks = [
        t.model_copy(update={"params": {**t.params, "xskill_mode": "skills", "grounding": "label"}})
        for t in sft_pool(None, ["code_editor/word_wrap"], [1, 2], 1, (), [0, 7])
    ]
    skills = {
        t.params["ui_seed"]: turns[0][0].split("\n")[1]
        for t, turns in zip(tasks, web_memory_demonstrations(tasks), strict=True)
    }
    assert 'click_label("View")' in skills[0] and 'click_label("Word Wrap")' in skills[0]
    assert 'click_label("Preferences")' in skills[7] and 'click_label("Wrap Long Lines")' in skills[7]
