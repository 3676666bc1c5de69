"""ToolCalc tasks by template, and SFT demonstrations whose prompts carry memory context.

`xskill_tasks(split, seed, n, templates, difficulty, modes)` is the job's `env.tasks`: ToolCalc tasks of the named
templates (all nine by default), each template equally likely; `modes` (mode → share) stamps each task's
`params["xskill_mode"]` (what `MemoryLoop` shows it).

`memory_demonstrations(tasks)` is the job's `env.demonstrations`: the scripted expert's turns with the memory
context of the task's mode before the first observation, exactly as `MemoryLoop` builds it, so SFT teaches the
agent to read the context. The context comes from a *teacher bank*: the same `ProgrammaticSummarizer` and
`MemoryBank` as the run, fed with expert episodes (successes) and two perturbed experts' episodes run through
the environment (answering at once; answering right after the first tool call) on train tasks of the templates
the batch holds. The agent never sees a template's context unless that template is in its SFT data.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Annotated

import numpy as np
from pydantic import AfterValidator, Field

from raygent.environments.toolcalc import ToolCalcEnv, demonstrate, make_task
from raygent.environments.toolcalc.tasks import DIFFICULTY_RANGES, TEMPLATES, split_of
from raygent.jobs.xskill.loop import with_context
from raygent.jobs.xskill.memory import MODES, MemoryBank, MemorySettings
from raygent.jobs.xskill.summarize import Group, ProgrammaticSummarizer, Rollout
from raygent.platform.contracts import Task

TEACHER_TASKS_PER_TEMPLATE = 12
_MAX_DRAWS = 10_000


def check_templates(templates: Sequence[str] | None) -> list[str]:
    chosen = list(TEMPLATES) if templates is None else list(templates)
    unknown = [t for t in chosen if t not in TEMPLATES]
    if unknown or not chosen:
        raise ValueError(f"templates: unknown {unknown or 'empty list'}; expected some of {list(TEMPLATES)}")
    return chosen


def check_modes(modes: Mapping[str, float] | None) -> dict[str, float]:
    if modes is None:
        return {}
    unknown = [m for m in modes if m not in MODES]
    if unknown or any(float(v) < 0 for v in modes.values()) or sum(modes.values()) <= 0:
        raise ValueError(f"modes: expected shares >= 0 (sum > 0) of {MODES}, got {dict(modes)}")
    return {str(k): float(v) for k, v in modes.items()}


Templates = Annotated[Sequence[str], AfterValidator(check_templates)]
"""Some of ToolCalc's templates (not empty)."""
Difficulty = Annotated[int, Field(ge=0, le=2, strict=True)]
"""One of ToolCalc's operand ranges (`DIFFICULTY_RANGES`: 0, 1, 2)."""
Modes = Annotated[Mapping[str, float], AfterValidator(check_modes)]
"""Each memory mode's share of the tasks (`none`, `experiences`, `skills`, `both`), >= 0 with a sum > 0."""


def xskill_tasks(
    split: str,
    seed: int,
    n: int,
    templates: Templates | None = None,
    difficulty: Difficulty = 1,
    modes: Modes | None = None,
) -> list[Task]:
    """`n` ToolCalc tasks of `split` drawn from `seed` over `templates` (module docstring)."""
    chosen = check_templates(templates)
    shares = check_modes(modes)
    low, high = DIFFICULTY_RANGES[difficulty]
    rng = np.random.default_rng(seed)
    tasks = []
    for _ in range(n):
        spec = TEMPLATES[chosen[int(rng.integers(len(chosen)))]]
        for _ in range(_MAX_DRAWS):
            operands = [int(v) for v in rng.integers(low, high + 1, size=spec.arity)]
            if spec.valid(operands) and split_of(spec.name, operands) == split:
                break
        else:
            raise RuntimeError(f"no {split} task for template {spec.name!r}")
        task = make_task(spec.name, operands, difficulty)
        if shares:
            names = list(shares)
            weights = np.array([shares[k] for k in names]) / sum(shares.values())
            mode = names[int(rng.choice(len(names), p=weights))]
            task = task.model_copy(update={"params": {**task.params, "xskill_mode": mode}})
        tasks.append(task)
    return tasks


def _episode(env: ToolCalcEnv, task: Task, actions: Sequence[str]) -> Rollout:
    """Runs fixed actions through the environment (stops at the end of the episode)."""
    observation, _ = env.reset(options={"task": task})
    observations, taken, valid = [], [], []
    success = False
    for action in actions:
        observations.append(observation["text"])
        taken.append(action)
        observation, _, terminated, truncated, info = env.step(action)
        valid.append(bool(info.get("valid_action", True)))
        if terminated or truncated:
            success = bool(info.get("success", False))
            break
    return Rollout(tuple(observations), tuple(taken), success, tuple(valid))


def teacher_groups(templates: Sequence[str], difficulty: int = 1, seed: int = 12345) -> list[Group]:
    """Expert and perturbed-expert episodes on train tasks of `templates` (module docstring)."""
    env = ToolCalcEnv(max_turns=4)
    tasks = xskill_tasks("train", seed, TEACHER_TASKS_PER_TEMPLATE * len(templates), templates, difficulty)
    groups = []
    for task in tasks:
        demo = demonstrate(task, env)
        expert = Rollout(tuple(demo.observations), tuple(demo.actions), demo.success, (True,) * len(demo.actions))
        first_number = task.params["operands"][0]
        rushed = _episode(env, task, [f"answer({first_number})"])
        early = _episode(env, task, [demo.actions[0], f"answer({first_number})"]) if len(demo.actions) > 2 else None
        rollouts = [expert, expert, rushed] + ([early] if early else [])
        groups.append(Group(task.instruction, rollouts))
    return groups


@lru_cache(maxsize=16)
def teacher_bank(templates: tuple[str, ...], difficulty: int = 1) -> MemoryBank:
    """The bank the SFT demonstrations' contexts come from, for a set of templates (cached)."""
    bank = MemoryBank(MemorySettings())
    summarizer = ProgrammaticSummarizer()
    for group in teacher_groups(templates, difficulty):
        bank.apply(summarizer.summarize([group], bank.view([group.situation])))
    return bank


def memory_demonstrations(tasks: Sequence[Task]) -> list[list[tuple[str, str]]]:
    """The expert's (observation, action) turns, the first observation carrying the task's memory context."""
    env = ToolCalcEnv()
    templates = tuple(sorted({t.params["template"] for t in tasks}))
    difficulty = int(tasks[0].difficulty) if tasks else 1
    bank = teacher_bank(templates, difficulty)
    episodes = []
    for task in tasks:
        turns = demonstrate(task, env).turns()
        mode = str(task.params.get("xskill_mode", "none"))
        context = bank.context(task.instruction, mode).text
        first_observation, first_action = turns[0]
        episodes.append([(with_context(context, first_observation), first_action), *turns[1:]])
    return episodes


def tokenizer_text(templates: Sequence[str], n: int = 400, seed: int = 0) -> list[str]:
    """Lines with memory contexts (every mode) for the tokenizer, from the teacher bank of `templates`."""
    bank = teacher_bank(tuple(sorted(templates)))
    lines = []
    for task in xskill_tasks("train", seed, n, templates):
        mode = MODES[zlib.crc32(task.id.encode()) % len(MODES)]
        lines.append(with_context(bank.context(task.instruction, mode).text, task.instruction))
    return lines
