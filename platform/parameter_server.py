"""Asynchronous parameter server on Ray: one server actor, n gradient-worker actors, a blocking driver.

The server holds the parameters x (a numpy array) and a pure update rule `update(x, g) -> x`. It applies
each pushed gradient the moment it arrives, counts versions (one per applied update) and records every
update's delay: the server version at apply time minus the version the pushing worker had pulled. Each
worker loops pull (x, version) → g = grad_fn(x, rng) → sleep slowdown·Exp(1)·base_time (an emulated
straggler) → push, without waiting for the push to be applied. Ray runs one caller's calls to one actor
in submission order, so a worker's next pull always sees its own previous push.

Every actor is created with `num_cpus=0`: a 1-CPU Tune trial can start the whole group on a 2-core
machine without waiting for CPUs the trials already hold. The server, the workers and the callables they
run know nothing of any paper; `update`, `grad_fn` and `monitor` only have to be picklable.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import ray

Update = Callable[[np.ndarray, np.ndarray], np.ndarray]
GradFn = Callable[[np.ndarray, np.random.Generator], np.ndarray]
Monitor = Callable[[np.ndarray], float]


@dataclass(frozen=True, eq=False)
class ServerTrace:
    """One run: per applied update (length T) the pushing worker, its delay and its apply time.

    `grad_sq` holds monitor(x) after each update, with monitor(x0) first (length T + 1), or is empty
    without a monitor. `pushes_dropped` counts pushes that arrived after the stopping rule fired.
    """

    workers: np.ndarray
    delays: np.ndarray
    grad_sq: np.ndarray
    apply_times: np.ndarray
    x: np.ndarray
    wall_s: float
    pushes_dropped: int


class ParameterServer:
    """Holds x, applies pushes as they arrive, and stops at max_updates or once monitor(x) ≤ target."""

    def __init__(
        self,
        x0: np.ndarray,
        update: Update,
        max_updates: int,
        monitor: Monitor | None = None,
        target: float | None = None,
    ) -> None:
        if target is not None and monitor is None:
            raise ValueError("a target needs a monitor to compare against")
        self._x = np.array(x0, dtype=float)
        self._update = update
        self._max_updates = max_updates
        self._monitor = monitor
        self._target = target
        self._version = 0
        self._workers: list[int] = []
        self._delays: list[int] = []
        self._times: list[float] = []
        self._grad_sq: list[float] = [] if monitor is None else [float(monitor(self._x))]
        self._dropped = 0
        self._start = time.perf_counter()

    def pull(self) -> tuple[np.ndarray, int, bool]:
        """(x, version, done): the current parameters, their version, and whether to stop."""
        return self._x, self._version, self.done()

    def push(self, g: np.ndarray, version: int, worker: int) -> None:
        """Applies x ← update(x, g) for a gradient taken at `version`; ignored once the run is done."""
        if self.done():
            self._dropped += 1
            return
        self._x = self._update(self._x, g)
        self._workers.append(worker)
        self._delays.append(self._version - version)
        self._times.append(time.perf_counter() - self._start)
        self._version += 1
        if self._monitor is not None:
            self._grad_sq.append(float(self._monitor(self._x)))

    def done(self) -> bool:
        if self._version >= self._max_updates:
            return True
        return self._target is not None and bool(self._grad_sq) and self._grad_sq[-1] <= self._target

    def trace(self) -> dict[str, Any]:
        return {
            "workers": np.asarray(self._workers, dtype=int),
            "delays": np.asarray(self._delays, dtype=int),
            "grad_sq": np.asarray(self._grad_sq, dtype=float),
            "apply_times": np.asarray(self._times, dtype=float),
            "x": self._x,
            "pushes_dropped": self._dropped,
        }


class GradientWorker:
    """Loops pull → grad_fn → sleep slowdown·Exp(1)·base_time → push until the server says done."""

    def __init__(
        self,
        server: Any,
        grad_fn: GradFn,
        worker: int,
        slowdown: float,
        base_time: float,
        noise_seed: np.random.SeedSequence,
        timing_seed: np.random.SeedSequence,
    ) -> None:
        self._server = server
        self._grad_fn = grad_fn
        self._worker = worker
        self._slowdown = slowdown
        self._base_time = base_time
        self._rng = np.random.default_rng(noise_seed)
        self._timing = np.random.default_rng(timing_seed)

    def ready(self) -> bool:
        """Answers once the actor's process is up (the driver waits for every worker before starting)."""
        return True

    def run(self) -> int:
        """Returns the number of gradients this worker pushed."""
        pushes = 0
        while True:
            x, version, done = ray.get(self._server.pull.remote())
            if done:
                return pushes
            g = self._grad_fn(x, self._rng)
            time.sleep(self._slowdown * self._timing.exponential() * self._base_time)
            self._server.push.remote(g, version, self._worker)
            pushes += 1


_RemoteServer: Any = ray.remote(num_cpus=0)(ParameterServer)
_RemoteWorker: Any = ray.remote(num_cpus=0)(GradientWorker)


def run_parameter_server(
    x0: np.ndarray,
    update: Update,
    grad_fn: GradFn,
    slowdowns: Sequence[float] | np.ndarray,
    max_updates: int,
    base_time: float = 0.002,
    monitor: Monitor | None = None,
    target: float | None = None,
    seed: int = 0,
    timeout_s: float = 300.0,
    poll_s: float = 0.01,
) -> ServerTrace:
    """Runs one server and len(slowdowns) workers on the connected Ray cluster until the stopping rule.

    Stops at `max_updates` applied updates or once monitor(x) ≤ `target`. Waits for every actor to start
    before the first pull, then raises TimeoutError if either the start or the run exceeds `timeout_s`.
    Worker w draws its gradient noise from child 1 + w of SeedSequence(seed) (child 0 seeds the sleep
    times), the same streams the event-driven simulators in `jobs/` give their workers. Workers still
    asleep when the run stops are killed rather than awaited.
    """
    if max_updates < 1:
        raise ValueError(f"max_updates must be >= 1, got {max_updates}")
    children = np.random.SeedSequence(seed).spawn(len(slowdowns) + 1)
    timing_seeds = children[0].spawn(len(slowdowns))
    server = _RemoteServer.remote(x0, update, max_updates, monitor, target)
    workers = [
        _RemoteWorker.remote(server, grad_fn, w, float(s), base_time, children[1 + w], timing_seeds[w])
        for w, s in enumerate(slowdowns)
    ]
    try:
        # Ray starts actor processes a few at a time; without this barrier the first workers up would
        # run alone for a while and the early delays would not reflect len(slowdowns) workers.
        ray.get([server.done.remote(), *(worker.ready.remote() for worker in workers)], timeout=timeout_s)
        start = time.perf_counter()
        runs = [worker.run.remote() for worker in workers]
        while True:
            finished, _ = ray.wait(runs, num_returns=len(runs), timeout=poll_s)
            ray.get(finished)  # a worker only returns early by raising: surface its error here
            if ray.get(server.done.remote()):
                break
            if time.perf_counter() - start > timeout_s:
                raise TimeoutError(f"parameter server did not finish within {timeout_s} s")
        wall_s = time.perf_counter() - start
        trace = ray.get(server.trace.remote())
    finally:
        for actor in [*workers, server]:
            ray.kill(actor)
    return ServerTrace(wall_s=wall_s, **trace)
