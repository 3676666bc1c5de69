"""Weight sync, learner → inference engines, after each learner update.

- `ObjectStoreSync` (the default; CPU and small models): the learner's `shared_weights()` (numpy views, tied
  tensors once) goes into the object store once, and every engine's `load_weights(ref, version)` reads it from
  there without a copy on one node (shared memory) and copies it into its model.
- `CollectiveSync` (GPU clusters): the learner and the engines form a `ray.util.collective` group and the
  learner broadcasts each tensor (NCCL on GPUs; the same code runs over `gloo` on CPU, which is how it is
  tested here). The engines receive into fresh tensors and load them through their backend's `load_weights`.

Both send what the learner's `sync_state()` holds: the full weights for full fine-tuning, only the adapters'
tensors with `learner.lora` (adapter-only sync: the engines were started with the same adapters, hold the base
once and apply each version of the adapters over it, `policies.adapters`). Versions are the same either way.
Both return the wall time of the sync, reported as `timing/sync`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal, Protocol

import ray

TensorSpec = list[tuple[str, tuple[int, ...], str]]
"""(name, shape, dtype name) of each tensor, in broadcast order."""


class WeightSync(Protocol):
    def push(self, learner: Any, engines: Sequence[Any], version: int) -> float:
        """Sends the learner's current weights to every engine as `version`; returns the seconds it took."""
        ...


class ObjectStoreSync:
    """Through Ray's object store (see the module docstring)."""

    def push(self, learner: Any, engines: Sequence[Any], version: int) -> float:
        start = time.perf_counter()
        weights = learner.shared_weights.remote()
        ray.get([engine.load_weights.remote(weights, version) for engine in engines])
        return time.perf_counter() - start


class CollectiveSync:
    """Through a `ray.util.collective` broadcast from the learner (rank 0) to the engines (ranks 1..N)."""

    def __init__(self, backend: Literal["nccl", "gloo"] = "nccl", group_name: str = "raygent-weights") -> None:
        self.backend = backend
        self.group_name = group_name
        self._spec: TensorSpec | None = None
        self._members: tuple[Any, ...] = ()

    def push(self, learner: Any, engines: Sequence[Any], version: int) -> float:
        from ray.util import collective

        start = time.perf_counter()
        members = (learner, *engines)
        if members != self._members:
            collective.create_collective_group(
                list(members),
                world_size=len(members),
                ranks=list(range(len(members))),
                backend=self.backend,  # type: ignore[arg-type]
                group_name=self.group_name,
            )
            self._members = members
            self._spec = ray.get(learner.weight_spec.remote())
        device = "cuda" if self.backend == "nccl" else "cpu"
        sends = [learner.broadcast_weights.remote(self.group_name, device)]
        receives = [engine.receive_weights.remote(self._spec, version, self.group_name, device) for engine in engines]
        ray.get(sends + receives)
        return time.perf_counter() - start


def make_weight_sync(kind: str) -> WeightSync:
    """`object_store`, `nccl` or `gloo`."""
    if kind == "object_store":
        return ObjectStoreSync()
    if kind in ("nccl", "gloo"):
        return CollectiveSync(backend=kind)  # type: ignore[arg-type]
    raise ValueError(f"unknown weight sync {kind!r}; expected object_store, nccl or gloo")
