"""The memory as one Ray actor shared by every rollout worker and the driver's accumulation hook.

    actor = start_memory(name, settings)         # the driver (the recipe), once per run
    ray.get(actor.context.remote(instruction, "both"))   # a rollout worker's loop, per episode
    ray.get(actor.apply.remote(ops))             # the hook, after each batch of rollouts

The actor is threaded (`max_concurrency`) so many loops' lookups run while the hook applies operations; a lock
keeps the bank consistent. It reserves no CPU (its work is BM25 over at most a few hundred short texts).
"""

from __future__ import annotations

import threading
from typing import Any

from raygent.jobs.xskill.memory import KnowledgeOp, MemoryBank, MemorySettings

NAMESPACE = "raygent-xskill"


class MemoryActor:
    """A `MemoryBank` behind a lock (wrap with `ray.remote`; also usable in process)."""

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.bank = MemoryBank(MemorySettings.model_validate(settings or {}))
        self.lock = threading.Lock()
        self.requests = 0

    def ping(self) -> int:
        return len(self.bank.experiences) + len(self.bank.skills)

    def context(self, instruction: str, mode: str = "both") -> dict[str, Any]:
        with self.lock:
            self.requests += 1
            return self.bank.context(instruction, mode).model_dump()

    def view(self, situations: list[str]) -> dict[str, Any]:
        with self.lock:
            return self.bank.view(situations)

    def apply(self, ops: list[dict[str, Any]], usage: dict[str, tuple[int, int]] | None = None) -> dict[str, int]:
        with self.lock:
            self.bank.record_usage(usage or {})
            counts = self.bank.apply(KnowledgeOp.model_validate(op) for op in ops)
            consolidated = self.bank.consolidate()
        return {**counts, **{f"consolidate_{k}": v for k, v in consolidated.items()}}

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return self.bank.snapshot()

    def restore(self, data: dict[str, Any], source: str = "snapshot", requests: int | None = None) -> int:
        """Replace the bank by a snapshot's; `requests`: the context-request count to go on from (a resumed run's,
        so its counter continues rather than restarting at 0)."""
        bank = MemoryBank.from_snapshot(data, source)
        with self.lock:
            self.bank = bank
            if requests is not None:
                self.requests = requests
        return len(bank.experiences) + len(bank.skills)

    def stats(self) -> dict[str, float]:
        with self.lock:
            return {**self.bank.stats(), "xskill/context_requests": float(self.requests)}


def start_memory(name: str, settings: dict[str, Any] | None = None) -> Any:
    """The run's memory actor, created under `name` in `NAMESPACE` (or the existing one of that name)."""
    import ray

    options = {
        "name": name,
        "namespace": NAMESPACE,
        "get_if_exists": True,
        "num_cpus": 0,
        "max_concurrency": 16,
        "max_restarts": 0,
    }
    actor: Any = ray.remote(MemoryActor).options(**options).remote(settings or {})
    ray.get(actor.ping.remote())
    return actor
