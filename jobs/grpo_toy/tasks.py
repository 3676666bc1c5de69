"""ToolCalc as the trainer's task source and expert (`env.tasks` and `env.demonstrations` in the job config)."""

from __future__ import annotations

from collections.abc import Sequence

from raygent.environments.toolcalc import ToolCalcEnv, demonstrate, generate_tasks
from raygent.environments.toolcalc.tasks import TASK_TYPES
from raygent.platform.contracts import Task


def toolcalc_tasks(
    split: str, seed: int, n: int, task_types: Sequence[str] = TASK_TYPES, difficulty: int | Sequence[int] = 1
) -> list[Task]:
    """`n` ToolCalc tasks of `split`, drawn from `seed` (the trainer's `TaskSource` signature)."""
    return generate_tasks(n, seed=seed, split=split, task_types=tuple(task_types), difficulty=difficulty)


def toolcalc_demonstrations(tasks: Sequence[Task]) -> list[list[tuple[str, str]]]:
    """The scripted expert's (observation, action) turns for each task."""
    env = ToolCalcEnv()
    return [demonstrate(task, env).turns() for task in tasks]
