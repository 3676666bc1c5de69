"""An example single-turn task: which of two numbers is larger. The `single_turn` job's default task and the task of
`bench/learning_vs_trl.py`; `docs/single-turn.md` shows it as the ten lines a task takes.

Held-out pairs are never trained on: a pair (a, b) is held out when (100·a + b) mod 5 = 0.
"""

from __future__ import annotations

import random
import re

from raygent.platform.contracts import Task


def larger_number(split: str, seed: int, n: int) -> list[Task]:
    """`n` questions "Which number is larger, A or B?" of two different two-digit numbers of `split`."""
    rng, tasks = random.Random(seed), list[Task]()
    while len(tasks) < n:
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        if a != b and ((100 * a + b) % 5 == 0) == (split == "heldout"):
            text = f"Which number is larger, {a} or {b}? Answer with the number only."
            tasks.append(Task(id=f"larger:{a},{b}", env="single_turn", instruction=text, params={"answer": max(a, b)}))
    return tasks


def first_number_is_answer(completion: str, task: Task) -> float:
    """1.0 when the completion's first integer is the task's `answer`, else 0.0."""
    number = re.search(r"-?\d+", completion)
    return float(number is not None and int(number.group()) == task.params["answer"])
