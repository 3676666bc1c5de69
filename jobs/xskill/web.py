"""XSkill on the web suite: `raygent run xskill_web` (issue 20, XSkill on a web app and the transfer to an app).

The same memory, actor, loop and hook as ToolCalc's job (`recipe.py`); what changes with the environment:

- **Procedures name elements, not ids.** A web action acts on an element id of one screen (`click(13)`); ids
  differ between screens, layouts and apps, so a rollout's abstract procedure writes each element by the name
  its screen gives it (`click_label("Mute")`, the web grammar's click by name, which the agent can run as
  written; `type("Volume", "A")`, the task's numbers as placeholders in typed text). A clicked name or a typed
  text that the instruction quotes is a placeholder too (`click_label("A")` for "Delete the slide titled
  “Agenda”."), so the skill serves every task of that kind with its own name filled in; so is a quoted name
  inside a clicked name (`Show A` for the layer “Logo”'s box `Show Logo`).
  A step whose id is not on its screen stays as it was (`click(99)`) and marks the procedure as this task's only
  (`WebSummarizer.specific`): it is no skill.
- **Tips** are the first move the successes share and the failures mostly do not make (`start with
  click_label("Mute").`), and well-formed actions; ToolCalc's tool-count and final-answer tips have no web meaning.
- **The context comes before every screen** (`rollout.agent.kwargs.every_turn: true`): the web agent's prompt
  keeps no history (`policy.prompt.max_history: 0`).
- **The agent** is the web agent's `tiny-qwen2` (tokenizer on the demonstrations, the instructions and the
  evaluated apps' first screens), SFT on the scripted experts of four apps (`sft.task_kwargs.apps`) whose screens
  carry a memory context from a *teacher bank* (the same `WebSummarizer` and `MemoryBank` fed with each SFT
  task's expert episode): the agent learns to find the element a skill names on the screen. The teacher has no
  failed episodes, so it writes skills only: SFT teaches reading skills, not tips (`sft.task_kwargs.modes`).
  With `sft.task_kwargs.grounding: label` the experts' clicks are written by name too (`web_tasks`'s grounding),
  so a skill's step and the demonstrated action are the same words.
- **Phase I** runs on `env.task_kwargs.apps`' train tasks and **phase II** on held-out tasks of
  `env.task_kwargs.eval_apps` (default: the same apps). The default run accumulates on the fifth app (the media
  player, in no SFT demonstration) and is evaluated there; the *transfer* run accumulates on the four SFT apps
  and is evaluated on the fifth (`jobs/configs/xskill_web.yaml` says how).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator
from rich.console import Console

from raygent.environments.web.agent import screens
from raygent.environments.web.agent.demos import demonstrations, first_screens, record_pool
from raygent.environments.web.agent.tasks import (
    sft_pool_for,
    template_ids,
    tokenizer_corpus,
    web_demonstrations,
    web_tasks,
)
from raygent.environments.web.grammar import ClickLabel
from raygent.environments.web.observe import find_label, parse
from raygent.environments.web.registry import available_apps, make_task
from raygent.jobs.xskill.loop import with_context
from raygent.jobs.xskill.memory import (
    MODES,
    NUMBER,
    PLACEHOLDERS,
    MemoryBank,
    MemorySettings,
    Value,
    situation_of,
)
from raygent.jobs.xskill.recipe import MemoryJobSettings, Prepared, XSkill
from raygent.jobs.xskill.summarize import Group, ProgrammaticSummarizer, Rollout, majority, share_of, strip_context
from raygent.jobs.xskill.tasks import check_modes
from raygent.platform.config import check_arguments
from raygent.platform.contracts import Task
from raygent.platform.rl.initial import initial_model
from raygent.platform.rl.settings import AgentRunConfig, EnvSettings, Section, SFTSettings
from raygent.platform.rl.tasks import heldout_seed

_ELEMENT_ACTION = re.compile(r"^\s*(\w+)\(\s*(\d+)\s*(,.*)?\)\s*$", re.S)
_UNRESOLVED = re.compile(r"\w\(\s*\d")
_CLICK_LABEL = re.compile(r'^\s*click_label\(\s*"(.+)"\s*\)\s*$', re.S)
_QUOTED_ARGUMENT = re.compile(r'"([^"]*)"')
WEB_TASK_KWARGS = (
    "apps",
    "eval_apps",
    "templates",
    "difficulties",
    "exclude",
    "pool",
    "modes",
    "grounding",
    "ui_seeds",
)


def web_step(action: str, screen: str, letters: Mapping[Value, str]) -> str:
    """One action on `screen` with its element id replaced by the element's name, and the task's parameters by their
    placeholders: a name or a typed text that is one of the task's names (quoted, or a file name) or holds one as
    a whole word (`Show A` for the layer “Logo”'s box `Show Logo`), a number in the other arguments; an id not on
    the screen, or of an element without a name, stays. A click becomes the action
    that clicks by name, `click_label("Mute")`, which an agent can run as written; a click by name is written with
    the name of the element it clicked (`find_label`: `click_label("Todo.txt")` clicks `todo.txt`), so every
    spelling of one click is one step, and abstracted the same way."""
    elements = parse(strip_context(screen))  # the compact or full observation text; a memory context skipped
    names = {e.id: e.name for e in elements if e.id is not None}

    def named(name: str) -> str:
        key: Value = int(name) if name.isdigit() else name
        if key in letters:
            return letters[key]
        # a quoted name inside an element's name (the visibility box `Show Logo` of the layer “Logo”)
        for value, letter in letters.items():
            if isinstance(value, str) and not value.isdigit():
                name = re.sub(rf"(?<![\w-]){re.escape(value)}(?![\w-])", letter, name)
        return name.replace('"', "'")

    by_label = _CLICK_LABEL.match(action)
    if by_label:
        try:
            clicked = names[find_label(elements, by_label.group(1))]
        except LookupError:  # no such element (or several): the name as the agent wrote it
            clicked = by_label.group(1)
        return ClickLabel(label=named(clicked)).render()
    match = _ELEMENT_ACTION.match(action)
    element = names.get(int(match.group(2)), "") if match else ""
    if not match or not element.strip():  # not an element action, not on the screen, or without a name
        return action.strip()
    name = named(element)
    if match.group(1) == "click" and not match.group(3):
        return ClickLabel(label=name).render()
    rest = _QUOTED_ARGUMENT.sub(lambda q: f'"{letters.get(q.group(1), q.group(1))}"', match.group(3) or "")
    rest = NUMBER.sub(lambda n: letters.get(int(n.group()), n.group()), rest)
    return f'{match.group(1)}("{name}"{rest})'


def web_procedure(instruction: str, rollout: Rollout) -> list[str]:
    """A web rollout's abstract procedure (module docstring)."""
    _, values = situation_of(instruction)
    letters: dict[Value, str] = {}
    for index, value in enumerate(values[: len(PLACEHOLDERS)]):
        letters.setdefault(value, PLACEHOLDERS[index])
    return [
        web_step(action, observation, letters)
        for observation, action in zip(rollout.observations, rollout.actions, strict=False)
    ]


class WebSummarizer(ProgrammaticSummarizer):
    """The programmatic summarizer over web procedures (module docstring)."""

    def procedure(self, instruction: str, rollout: Rollout) -> list[str]:
        return web_procedure(instruction, rollout)

    def specific(self, text: str) -> bool:
        return bool(_UNRESOLVED.search(text))

    def tips(self, group: Group) -> list[tuple[str, str]]:
        wins = [r for r in group.rollouts if r.success]
        losses = [r for r in group.rollouts if not r.success]
        if not wins or not losses:
            return []
        found: list[tuple[str, str]] = []
        won_first = [p[0] for p in (self.procedure(group.instruction, r) for r in wins) if p]
        lost_first = [p[0] for p in (self.procedure(group.instruction, r) for r in losses) if p]
        first = majority(won_first, self.share)
        if first and not self.specific(first) and share_of(lost_first, first) < 0.5:
            found.append(("first", f"start with {first}."))
        return found + self.format_tip(wins, losses)


def xskill_web_tasks(
    split: str,
    seed: int,
    n: int,
    apps: Sequence[str] | None = ("media_player",),
    eval_apps: Sequence[str] | None = None,
    modes: Mapping[str, float] | None = None,
    **kwargs: Any,
) -> list[Task]:
    """The web agent's tasks (`web_tasks`; `kwargs`: templates, difficulties, exclude, pool, grounding), held-out
    ones from `eval_apps` when given; `modes` stamps each task's `params["xskill_mode"]` by share (drawn from split
    and seed)."""
    drawn = web_tasks(split, seed, n, apps=eval_apps if split != "train" and eval_apps else apps, **kwargs)
    shares = check_modes(modes)
    if not shares:
        return drawn
    rng = random.Random(f"xskill-modes/{split}/{seed}")
    return [
        t.model_copy(
            update={"params": {**t.params, "xskill_mode": rng.choices(list(shares), list(shares.values()))[0]}}
        )
        for t in drawn
    ]


def teacher_bank(tasks: Sequence[Task], episodes: Sequence[Sequence[tuple[str, str]]]) -> MemoryBank:
    """Skills from the scripted experts' `episodes` of `tasks` (each counted twice: a skill's workflow needs two
    successes), through the run's own summarizer and bank. The tasks should share one UI layout (`layout_banks`):
    a skill's clicks name that layout's menus and labels."""
    bank, summarizer = MemoryBank(MemorySettings()), WebSummarizer()
    for task, turns in zip(tasks, episodes, strict=True):
        if not turns:
            continue
        expert = Rollout(tuple(o for o, _ in turns), tuple(a for _, a in turns), True, (True,) * len(turns))
        group = Group(task.instruction, [expert, expert])
        bank.apply(summarizer.summarize([group], bank.view([group.situation])))
    return bank


def layout_of(task: Task) -> int:
    """The task's UI seed (0, the default layout, for a task that names none)."""
    return int(task.params.get("ui_seed", 0))


def layout_banks(tasks: Sequence[Task], episodes: Sequence[Sequence[tuple[str, str]]]) -> dict[int, MemoryBank]:
    """One teacher bank per UI seed of `tasks` (`params["ui_seed"]`): on randomized layouts a task's context shows
    the skill of its own layout, which only the skill (not the instruction) tells."""
    by_layout: dict[int, tuple[list[Task], list[Sequence[tuple[str, str]]]]] = {}
    for task, turns in zip(tasks, episodes, strict=True):
        chosen, recorded = by_layout.setdefault(layout_of(task), ([], []))
        chosen.append(task)
        recorded.append(turns)
    return {ui: teacher_bank(chosen, recorded) for ui, (chosen, recorded) in by_layout.items()}


def web_memory_demonstrations(tasks: Sequence[Task]) -> list[list[tuple[str, str]]]:
    """The scripted experts' (compact observation, action) turns, every observation carrying the memory context
    of the task's mode from the teacher bank of these tasks' layout (as `MemoryLoop` with `every_turn` builds
    it); the clicks by name for a task with `params["grounding"] == "label"` (`web_demonstrations`)."""
    recorded = web_demonstrations(tasks)
    banks = layout_banks(tasks, recorded)
    episodes = []
    for task, turns in zip(tasks, recorded, strict=True):
        context = banks[layout_of(task)].context(task.instruction, str(task.params.get("xskill_mode", "none"))).text
        episodes.append([(with_context(context, observation), action) for observation, action in turns])
    return episodes


def _check_task_kwargs(where: str, value: dict[str, Any]) -> None:
    for key in value:
        if key not in WEB_TASK_KWARGS:
            raise ValueError(f"{where}.{key}: unknown key; expected one of: {', '.join(WEB_TASK_KWARGS)}")
    for key in ("apps", "eval_apps"):
        unknown = [a for a in value.get(key) or () if a not in available_apps()]
        if unknown:
            raise ValueError(f"{where}.{key}: unknown apps {unknown}; expected some of {available_apps()}")
    check_arguments(where, web_tasks, value)  # the values web_tasks takes (pool, grounding, ...)
    try:
        check_modes(value.get("modes"))
    except ValueError as exc:
        raise ValueError(f"{where}.{exc}") from None


class WebSettings(Section):
    """The `web:` section of `jobs/configs/xskill_web.yaml`."""

    demo_workers: int = Field(default=3, ge=1)
    """Threads (each with its own Chromium) that record missing demonstrations and first screens."""


class XSkillWebConfig(AgentRunConfig):
    """The sections of `jobs/configs/xskill_web.yaml`: the RL core's, `web` and `xskill`."""

    web: WebSettings = WebSettings()
    xskill: MemoryJobSettings = MemoryJobSettings()

    @field_validator("env", "sft")
    @classmethod
    def _task_kwargs(cls, value: EnvSettings | SFTSettings) -> EnvSettings | SFTSettings:
        _check_task_kwargs("task_kwargs", value.task_kwargs)
        return value


class XSkillWeb(XSkill):
    name = "xskill_web"
    config_model = XSkillWebConfig

    def prepare(self, agent: Any, run_dir: Path, console: Console) -> Prepared:
        """SFT demonstrations recorded, the tokenizer's text (demonstrations with the teacher's contexts, every
        instruction, the evaluated apps' first screens), held-out tasks of the evaluated apps; novel: the
        templates of apps in no SFT demonstration."""
        env_kwargs = {k: v for k, v in agent.env.task_kwargs.items() if k != "modes"}
        sft_kwargs = {**env_kwargs, **agent.sft.task_kwargs}
        pool = sft_pool_for(sft_kwargs)
        record_pool(pool, agent.web.demo_workers, console)
        eval_apps = env_kwargs.get("eval_apps") or env_kwargs.get("apps")
        evaluated = template_ids(eval_apps, None, env_kwargs.get("difficulties", (1,)), env_kwargs.get("exclude", ()))
        text: list[str] = []
        if agent.policy.model is None:
            layouts = env_kwargs.get("ui_seeds", (0,))
            first = first_screens(
                [make_task(f"{tid}/0", ui_seed=ui).to_platform() for tid in evaluated for ui in layouts],
                agent.web.demo_workers,
            )
            recorded = demonstrations(pool)
            banks = layout_banks(pool, recorded)
            contexts = [banks[layout_of(t)].context(t.instruction, mode).text for t in pool for mode in MODES[1:]]
            text = tokenizer_corpus(recorded, first) + [c for c in contexts if c]
        model_path = initial_model(agent, run_dir, text)
        heldout = xskill_web_tasks(
            agent.env.eval_split, heldout_seed(agent.trainer.seed), agent.trainer.eval_tasks, **env_kwargs
        )
        sft_apps = set(sft_kwargs.get("apps") or available_apps())
        novel = sorted({str(t.params["template"]) for t in heldout if t.params["app"] not in sft_apps})
        return Prepared(model_path, WebSummarizer(max_ops=agent.xskill.max_ops), heldout, novel)

    def examples(self, examples: list[Any], run_dir: Path) -> list[Any]:
        return screens.capture(examples, run_dir) if examples else []
