"""A single-turn task for the `single_turn` job's tests: prompts that ask for a letter, a reward of the completion's
length, a constant reward and a reward that gives its own verdict (loaded by `module:attr` in runs the tests start;
`tests/plugins` is on their PYTHONPATH)."""

from __future__ import annotations

from raygent.platform.contracts import Task

CONSTANT = 0.25


def letter_tasks(split: str, seed: int, n: int, letter: str = "a") -> list[Task]:
    return [
        Task(id=f"{split}:{seed}:{i}", env="single_turn", instruction=f"Say {letter} {i}.", params={"letter": letter})
        for i in range(n)
    ]


def constant_reward(completion: str, task: Task) -> float:
    return CONSTANT


def length_reward(completion: str, task: Task) -> float:
    return float(len(completion))


def verdict_reward(completion: str, task: Task) -> tuple[float, bool]:
    return 0.5, task.params.get("letter") in completion
