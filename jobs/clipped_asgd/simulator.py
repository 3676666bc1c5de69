"""Deterministic event-driven simulation of asynchronous SGD with stragglers: exact delays, no threads.

n workers each pull (x, version), spend a compute time, then push a gradient taken at the x they pulled.
A priority queue of worker finish times orders the pushes; the server applies `update(x, g)` (the same
callable the Ray parameter server applies) and the pushing worker pulls the new x at once. A push's delay
is the server version at apply time minus the version the worker pulled, exactly as the Ray server counts
it. Compute times are slowdown_w·Exp(1) (a subset of workers slowed ×S), or a hand-built schedule.

Random streams: child 0 of SeedSequence(seed) draws the compute times, child 1 + w worker w's gradient
noise: the noise streams `raygent.platform.parameter_server` gives its Ray workers for the same seed. A run
is a pure function of its inputs.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Update = Callable[[np.ndarray, np.ndarray], np.ndarray]
GradFn = Callable[[np.ndarray, np.random.Generator], np.ndarray]


@dataclass(frozen=True, eq=False)
class SimulationTrace:
    """One run: per applied update (length T) the pushing worker, its delay, and ‖∇f(x_t)‖² after it.

    `grad_sq` has length T + 1: entry 0 is ‖∇f(x0)‖². `x` is the final iterate.
    """

    workers: np.ndarray
    delays: np.ndarray
    grad_sq: np.ndarray
    finish_times: np.ndarray
    x: np.ndarray


def straggler_slowdowns(n_workers: int, n_slow: int, slowdown: float) -> np.ndarray:
    """Per-worker slowdown factors, shape (n_workers,): the last `n_slow` workers slowed ×`slowdown`."""
    if not 0 <= n_slow <= n_workers:
        raise ValueError(f"n_slow must be in [0, {n_workers}], got {n_slow}")
    factors = np.ones(n_workers)
    factors[n_workers - n_slow :] = slowdown
    return factors


def simulate(
    update: Update,
    grad_fn: GradFn,
    monitor: Callable[[np.ndarray], float],
    x0: np.ndarray,
    slowdowns: Sequence[float] | np.ndarray,
    max_updates: int,
    seed: int,
    target: float | None = None,
    schedule: Sequence[Sequence[float]] | None = None,
) -> SimulationTrace:
    """Runs until `max_updates` updates, or until monitor(x) = ‖∇f(x)‖² ≤ `target` when a target is given.

    `schedule[w]` (optional) lists worker w's successive compute times and replaces the random
    slowdown_w·Exp(1) draws; a worker whose list runs out stops. Ties in finish time go to the lower
    worker id. `slowdowns` has shape (n_workers,).
    """
    slowdowns = np.asarray(slowdowns, dtype=float)
    n_workers = len(slowdowns)
    children = np.random.SeedSequence(seed).spawn(n_workers + 1)
    timing_rng = np.random.default_rng(children[0])
    worker_rngs = [np.random.default_rng(child) for child in children[1:]]
    schedule_pos = [0] * n_workers

    def compute_time(w: int) -> float | None:
        if schedule is None:
            return float(slowdowns[w] * timing_rng.exponential())
        if schedule_pos[w] >= len(schedule[w]):
            return None
        schedule_pos[w] += 1
        return float(schedule[w][schedule_pos[w] - 1])

    x = np.array(x0, dtype=float)
    version = 0
    pulled = [(x, 0)] * n_workers
    queue: list[tuple[float, int]] = []
    for w in range(n_workers):
        duration = compute_time(w)
        if duration is not None:
            heapq.heappush(queue, (duration, w))

    workers, delays, times = [], [], []
    grad_sq = [monitor(x)]
    while queue and version < max_updates and (target is None or grad_sq[-1] > target):
        now, w = heapq.heappop(queue)
        x_pulled, version_pulled = pulled[w]
        x = update(x, grad_fn(x_pulled, worker_rngs[w]))
        workers.append(w)
        delays.append(version - version_pulled)
        times.append(now)
        version += 1
        grad_sq.append(monitor(x))
        pulled[w] = (x, version)
        duration = compute_time(w)
        if duration is not None:
            heapq.heappush(queue, (now + duration, w))
    return SimulationTrace(
        workers=np.asarray(workers, dtype=int),
        delays=np.asarray(delays, dtype=int),
        grad_sq=np.asarray(grad_sq),
        finish_times=np.asarray(times),
        x=x,
    )
