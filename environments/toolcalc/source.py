"""ToolCalc as the trainer's task source and expert (`env.tasks` and `env.demonstrations` of a run config; the
`toolcalc` environment of `raygent envs`, `spec.py`)."""

from __future__ import annotations

from collections.abc import Sequence

from raygent.environments.toolcalc.env import ToolCalcEnv
from raygent.environments.toolcalc.expert import demonstrate
from raygent.environments.toolcalc.tasks import TASK_TYPES, generate_tasks
from raygent.platform.contracts import Task


def toolcalc_tasks(
    split: str,
    seed: int,
    n: int,
    task_types: Sequence[str] = TASK_TYPES,
    difficulty: int | Sequence[int] = 1,
    templates: Sequence[str] | None = None,
) -> list[Task]:
    """`n` ToolCalc tasks of `split`, drawn from `seed` (the trainer's `TaskSource` signature); `templates` keeps
    only the templates named (e.g. SFT demonstrations of some templates, RL on all)."""
    return generate_tasks(
        n, seed=seed, split=split, task_types=tuple(task_types), difficulty=difficulty, templates=templates
    )


def toolcalc_demonstrations(tasks: Sequence[Task]) -> list[list[tuple[str, str]]]:
    """The scripted expert's (observation, action) turns for each task."""
    env = ToolCalcEnv()
    return [demonstrate(task, env).turns() for task in tasks]
