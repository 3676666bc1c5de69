"""`TaskStream`: the training tasks as a deterministic sequence of batches, so a resumed run consumes exactly
the batches an uninterrupted one would (no batch repeated, none skipped).

Batch i is `source(split, seed=hash(seed, i), n, **kwargs)`; the stream's whole state is the index of the next
batch, which the checkpoint stores.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

from raygent.platform.contracts import Task

TaskSource = Callable[..., list[Task]]
"""`source(split: str, seed: int, n: int, **kwargs) -> list[Task]`."""


def batch_seed(seed: int, index: int, stage: str = "train") -> int:
    """A seed for batch `index` that differs between stages and runs (CRC-32 of the three)."""
    return zlib.crc32(f"{stage}:{seed}:{index}".encode())


class TaskStream:
    def __init__(
        self, source: TaskSource, split: str, seed: int, batch_size: int, stage: str = "train", **kwargs: Any
    ) -> None:
        self.source, self.split, self.seed, self.batch_size, self.stage = source, split, seed, batch_size, stage
        self.kwargs = kwargs
        self.next_index = 0

    def batch(self, index: int) -> list[Task]:
        """The tasks of batch `index` (a pure function of the stream's settings and `index`)."""
        tasks = self.source(self.split, batch_seed(self.seed, index, self.stage), self.batch_size, **self.kwargs)
        if len(tasks) != self.batch_size:
            raise ValueError(f"task source returned {len(tasks)} tasks, expected {self.batch_size}")
        return tasks

    def take(self) -> tuple[int, list[Task]]:
        """The next batch and its index; advances the stream."""
        index = self.next_index
        self.next_index += 1
        return index, self.batch(index)

    def state(self) -> dict[str, int]:
        return {"next_index": self.next_index}

    def load_state(self, state: dict[str, int]) -> None:
        self.next_index = int(state["next_index"])
