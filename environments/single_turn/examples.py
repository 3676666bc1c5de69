"""Example single-turn tasks: one-digit sums ("What is 3 + 5?"), the `single_turn` job's default task and the task
of `bench/learning_vs_trl.py` (`docs/single-turn.md` shows it as the ten lines a task takes); and the larger of two
two-digit numbers, the bench's second task (`--task larger --completion-tokens 32`), added after the recipe was
settled on sums as a check on a task it was not tuned on. SmolLM2 answers 0.47–0.55 of 64 held-out comparisons
within 32 greedy tokens (0.02–0.09 within 16: it restates both numbers first).

SmolLM2-135M-Instruct answers about a third of them within 16 greedy tokens: it knows the sums, but often
explains the addition instead of giving it and runs out of tokens ("To add 8 and 3, you simply add them
together: 8"), so GRPO has a format to learn. Held-out pairs are never trained on: (a, b) is held out when
(3a + b) mod 5 = 0 (17 of the 81 pairs).
"""

from __future__ import annotations

import random
import re

from raygent.platform.contracts import Task


def held_out(a: int, b: int) -> bool:
    """Whether the pair (a, b) belongs to the held-out split."""
    return (3 * a + b) % 5 == 0


def one_digit_sum(split: str, seed: int, n: int) -> list[Task]:
    """`n` questions "What is A + B?" with one-digit A and B, drawn (by `seed`, with replacement) from the pairs
    of `split` (`heldout`, or any other name for the training pairs)."""
    pairs = [(a, b) for a in range(1, 10) for b in range(1, 10) if held_out(a, b) == (split == "heldout")]
    rng = random.Random(seed)
    return [
        Task(id=f"sum:{a}+{b}", env="single_turn", instruction=f"What is {a} + {b}?", params={"answer": a + b})
        for a, b in (rng.choice(pairs) for _ in range(n))
    ]


def last_number_is_answer(completion: str, task: Task) -> float:
    """1.0 when the completion's last integer is the task's `answer` ("8 + 3 = 11", "The answer is 11."), else 0.0
    (no integer, a wrong one, or an explanation cut off before the result)."""
    numbers = re.findall(r"-?\d+", completion)
    return float(bool(numbers) and int(numbers[-1]) == task.params["answer"])


def two_digit_larger(split: str, seed: int, n: int) -> list[Task]:
    """`n` questions "Which is larger, A or B?" with distinct two-digit A and B, drawn by `seed`; a pair is held out
    (`heldout` split) when (A + 2B) mod 7 = 0."""
    rng = random.Random(seed)
    tasks: list[Task] = []
    while len(tasks) < n:
        a, b = rng.sample(range(10, 100), 2)
        if ((a + 2 * b) % 7 == 0) == (split == "heldout"):
            tasks.append(
                Task(
                    id=f"larger:{a},{b}",
                    env="single_turn",
                    instruction=f"Which is larger, {a} or {b}?",
                    params={"answer": max(a, b)},
                )
            )
    return tasks

