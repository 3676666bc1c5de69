"""`InferenceEngine`: one inference backend (`hf` or `vllm`) as a Ray actor shared by many rollout workers.

Rollout workers call `generate` concurrently; the engine gathers the requests that arrive while the backend is busy
and serves them in one backend call, so a CPU transformers model sees one large padded batch instead of many small
ones and vLLM sees one scheduling round (docs/design.md §3: batch generation across workers). Requests are merged
when their `SamplingParams` are equal but for their seeds and all or none are seeded: a backend seeds each prompt
on its own (`SamplingParams.prompt_seeds`), so the merged call carries every prompt's seed and a seeded request
samples the same tokens whichever requests it is batched with. `load_weights` waits for the running batch, swaps
the weights and bumps the version; every completion carries the version of the weights that generated it.
With `learner.lora` the trainer starts the engines with the backend option `lora` and each `load_weights` carries
only the adapters' tensors (adapter-only sync, `policies.adapters`), applied over the base the engine loaded once.

Environment variables for vLLM on CPU (`VLLM_ENABLE_V1_MULTIPROCESSING=0`, `VLLM_CPU_KVCACHE_SPACE`) are set by
`engine_runtime_env` and passed as the actor's runtime environment.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ray
from torch import Tensor

from raygent.policies.adapters import state_bytes
from raygent.policies.backends import Completion, InferenceBackend, Prompt, SamplingParams, make_backend

VLLM_CPU_ENV = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_CPU_KVCACHE_SPACE": "1"}


def engine_runtime_env(backend: str) -> dict[str, Any]:
    """The actor runtime environment a backend needs (vLLM's in-process engine; nothing for `hf`)."""
    return {"env_vars": dict(VLLM_CPU_ENV)} if backend == "vllm" else {}


@dataclass
class _Request:
    prompts: list[Prompt]
    params: SamplingParams
    done: asyncio.Future[list[Completion]]


@dataclass
class EngineStats:
    """Counters since start: backend calls, requests and prompts served, tokens generated, busy seconds; the
    versions loaded and what the last load received."""

    calls: int = 0
    requests: int = 0
    prompts: int = 0
    tokens: int = 0
    busy_s: float = 0.0
    versions: list[int] = field(default_factory=list)
    load_tensors: int = 0
    """Tensors the last `load_weights` received (with `learner.lora`: the adapters' alone)."""
    load_bytes: int = 0
    """Their bytes."""


class InferenceEngine:
    """The actor class (wrap with `ray.remote`; see `start_engines`). Also usable in-process for tests."""

    def __init__(
        self,
        backend: str,
        model_path: str,
        options: Mapping[str, Any] | None = None,
        max_batch: int = 256,
        batch_window_s: float = 0.005,
    ):
        self.backend: InferenceBackend = make_backend(backend, model_path, **dict(options or {}))
        self.max_batch = max_batch
        self.batch_window_s = batch_window_s
        """After the first request of an idle engine arrives, wait this long for the others of the same turn
        (workers send theirs within a few milliseconds of each other) before starting the batch."""
        self.stats = EngineStats()
        self._pending: list[_Request] = []
        self._wake: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._loop_task: asyncio.Task[None] | None = None

    def version(self) -> int:
        return self.backend.version

    def ready(self) -> int:
        """Returns the version once the backend is loaded (callers wait on it after creating the actor)."""
        return self.backend.version

    def loads(self) -> int:
        """Weight loads since this process started: 0 after Ray restarted the actor (a crash, or the memory
        monitor's kill), whatever was pushed before; it then holds the weights it was started from."""
        return len(self.stats.versions)

    def get_stats(self) -> dict[str, Any]:
        return {**self.stats.__dict__, "version": self.backend.version}

    async def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Completion]:
        """Completions for `prompts`, possibly generated in one batch with other workers' requests."""
        if not prompts:
            return []
        self._start()
        assert self._wake is not None
        future: asyncio.Future[list[Completion]] = asyncio.get_running_loop().create_future()
        self._pending.append(_Request(list(prompts), params, future))
        self._wake.set()
        return await future

    async def load_weights(self, state: Mapping[str, Any], version: int) -> int:
        """Replaces the weights between batches; returns the new version. `state` maps names to tensors or to numpy
        arrays (`ObjectStoreSync`: read-only views of the object store, which the backend copies from)."""
        self._start()
        assert self._lock is not None
        async with self._lock:
            await asyncio.to_thread(self.backend.load_weights, as_tensors(state), version)
        self.stats.versions.append(version)
        self.stats.load_tensors, self.stats.load_bytes = len(state), state_bytes(state)
        return self.backend.version

    async def receive_weights(
        self, spec: list[tuple[str, tuple[int, ...], str]], version: int, group_name: str, device: str = "cpu"
    ) -> int:
        """Receives a `ray.util.collective` broadcast of the tensors in `spec` and loads them as `version`."""
        import torch
        from ray.util import collective

        def receive() -> dict[str, Tensor]:
            state = {}
            for name, shape, dtype in spec:
                tensor = torch.empty(shape, dtype=getattr(torch, dtype), device=device)
                collective.broadcast(tensor, src_rank=0, group_name=group_name)
                state[name] = tensor
            return state

        state = await asyncio.to_thread(receive)
        return await self.load_weights(state, version)

    def _start(self) -> None:
        if self._loop_task is None:
            self._wake = asyncio.Event()
            self._lock = asyncio.Lock()
            self._loop_task = asyncio.get_running_loop().create_task(self._serve())

    async def _serve(self) -> None:
        assert self._wake is not None and self._lock is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self.batch_window_s:
                await asyncio.sleep(self.batch_window_s)
            while self._pending:
                batch = self._take_batch()
                async with self._lock:
                    await self._run(batch)

    def _take_batch(self) -> list[_Request]:
        first = self._pending.pop(0)
        batch, size = [first], len(first.prompts)
        key, seeded = first.params.unseeded(), _seeded(first.params)
        for request in list(self._pending):
            if (
                request.params.unseeded() == key
                and _seeded(request.params) == seeded
                and size + len(request.prompts) <= self.max_batch
            ):
                self._pending.remove(request)
                batch.append(request)
                size += len(request.prompts)
        return batch

    async def _run(self, batch: list[_Request]) -> None:
        prompts = [prompt for request in batch for prompt in request.prompts]
        params = batch[0].params
        if _seeded(params):
            seeds = [seed for r in batch for seed in r.params.prompt_seeds(len(r.prompts)) or ()]
            params = params.unseeded().model_copy(update={"seeds": tuple(seeds)})
        start = time.perf_counter()
        try:
            completions = await asyncio.to_thread(self.backend.generate, prompts, params)
        except Exception as error:  # the callers see the backend's error; the engine keeps serving
            for request in batch:
                if not request.done.done():
                    request.done.set_exception(error)
            return
        self.stats.busy_s += time.perf_counter() - start
        self.stats.calls += 1
        self.stats.requests += len(batch)
        self.stats.prompts += len(prompts)
        self.stats.tokens += sum(len(c.response_ids) for c in completions)
        offset = 0
        for request in batch:
            request.done.set_result(completions[offset : offset + len(request.prompts)])
            offset += len(request.prompts)


def _seeded(params: SamplingParams) -> bool:
    return params.seed is not None or params.seeds is not None


class EngineClient:
    """`InferenceBackend` over an `InferenceEngine` actor: blocking calls, so code written against a backend (the
    rollout runner, tests, a Serve replica) can use a shared engine actor unchanged."""

    def __init__(self, actor: Any, timeout_s: float = 600.0) -> None:
        self.actor = actor
        self.timeout_s = timeout_s

    @property
    def version(self) -> int:
        return int(ray.get(self.actor.version.remote(), timeout=self.timeout_s))

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Completion]:
        return list(ray.get(self.actor.generate.remote(list(prompts), params), timeout=self.timeout_s))

    def load_weights(self, state: Mapping[str, Tensor], version: int) -> None:
        ray.get(self.actor.load_weights.remote(dict(state), version), timeout=self.timeout_s)


def as_tensors(state: Mapping[str, Any]) -> dict[str, Tensor]:
    """`state` with each numpy array as a tensor over the same memory (not writable: only ever copied from)."""
    import warnings

    import numpy as np
    import torch

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in state.items()}


def start_engines(
    count: int,
    backend: str,
    model_path: str,
    options: Mapping[str, Any] | None = None,
    *,
    num_cpus: float = 1.0,
    num_gpus: float = 0.0,
    max_batch: int = 256,
) -> list[Any]:
    """`count` engine actors, started and loaded (blocks until each answers `ready`)."""
    actor = ray.remote(InferenceEngine).options(
        num_cpus=num_cpus,
        num_gpus=num_gpus,
        max_concurrency=64,
        max_restarts=2,
        runtime_env=engine_runtime_env(backend),
    )
    engines = [actor.remote(backend, model_path, dict(options or {}), max_batch) for _ in range(count)]
    ray.get([engine.ready.remote() for engine in engines])  # type: ignore[attr-defined]
    return engines
