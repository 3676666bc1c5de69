"""One replicate of the experiment (simulated or on Ray) and the statistics a trial reports over many.

A replicate draws its own problem instance and noise from `SeedSequence([seed, r])`, so replicate r of a
seed block is the same problem and the same worker noise streams in every cell of the sweep (common random
numbers: clipped and unclipped, S = 1 and S = 1000 are compared on identical draws). Both modes apply the
same `ClippedStep` and `NoisyGradient`; only who orders the pushes differs (a priority queue of simulated
finish times, or real sleeping Ray actors).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from raygent.jobs.clipped_asgd.method import ClippedStep
from raygent.jobs.clipped_asgd.noise import NoisyGradient
from raygent.jobs.clipped_asgd.objective import Objective, load_dataset, make_logistic, make_ripple
from raygent.jobs.clipped_asgd.params import ClippedASGDParams
from raygent.jobs.clipped_asgd.simulator import simulate, straggler_slowdowns


@dataclass(frozen=True)
class RunStats:
    """What one replicate contributes. `iterations` is None when ‖∇f‖² never reached the target."""

    iterations: int | None
    tau_max_to_target: int
    tau_max: int
    mean_delay: float
    slow_push_fraction: float
    initial_grad_sq: float
    final_grad_sq: float
    wall_s: float


def make_problem(params: ClippedASGDParams, rng: np.random.Generator) -> Objective:
    """The replicate's objective: a ripple quadratic, or logistic regression on synthetic or loaded data."""
    if params.objective == "ripple":
        return make_ripple(
            rng, params.dim, params.condition, params.ripple_amplitude, params.ripple_frequency, params.init_distance
        )
    features = labels = None
    if params.data_path is not None:
        features, labels = load_dataset(params.data_path)
    return make_logistic(rng, params.n_samples, params.dim, params.l2, params.init_distance, features, labels)


def run_stats(
    workers: np.ndarray, delays: np.ndarray, grad_sq: np.ndarray, target: float, n_fast: int, wall_s: float
) -> RunStats:
    """Reduces one trace: workers, delays (T,) per update; grad_sq (T + 1,) with ‖∇f(x0)‖² first."""
    hits = np.flatnonzero(grad_sq <= target)
    iterations = int(hits[0]) if len(hits) else None
    before = delays[: iterations if iterations is not None else len(delays)]
    return RunStats(
        iterations=iterations,
        tau_max_to_target=int(before.max()) if len(before) else 0,
        tau_max=int(delays.max()) if len(delays) else 0,
        mean_delay=float(delays.mean()) if len(delays) else 0.0,
        slow_push_fraction=float(np.mean(workers >= n_fast)) if len(workers) else 0.0,
        initial_grad_sq=float(grad_sq[0]),
        final_grad_sq=float(grad_sq[-1]),
        wall_s=wall_s,
    )


def run_replicate(params: ClippedASGDParams, seed: int, replicate: int) -> RunStats:
    """One asynchronous run of T = max_updates updates from the replicate's own problem instance."""
    sequence = np.random.SeedSequence([seed, replicate])
    problem = make_problem(params, np.random.default_rng(sequence.spawn(1)[0]))
    run_seed = int(sequence.generate_state(1)[0])
    update = ClippedStep(gamma=params.step_size, clip=params.clip)
    grad_fn = NoisyGradient(problem, theta=params.theta, scale=params.noise_scale)
    slowdowns = straggler_slowdowns(params.n_workers, params.n_slow, params.slowdown)
    n_fast = params.n_workers - params.n_slow
    start = time.perf_counter()
    if params.mode == "simulate":
        trace = simulate(update, grad_fn, problem.grad_norm_sq, problem.x0, slowdowns, params.max_updates, run_seed)
        return run_stats(trace.workers, trace.delays, trace.grad_sq, params.target, n_fast, time.perf_counter() - start)
    from raygent.platform.parameter_server import run_parameter_server

    served = run_parameter_server(
        problem.x0,
        update,
        grad_fn,
        slowdowns,
        params.max_updates,
        base_time=params.base_time,
        monitor=problem.grad_norm_sq,
        seed=run_seed,
        timeout_s=params.timeout_s,
    )
    return run_stats(served.workers, served.delays, served.grad_sq, params.target, n_fast, served.wall_s)


def summarize(runs: list[RunStats], max_updates: int) -> dict[str, float]:
    """The trial's metrics over its replicates (a run that missed the target counts max_updates + 1)."""
    iterations = np.array([r.iterations if r.iterations is not None else max_updates + 1 for r in runs])
    final = np.array([r.final_grad_sq for r in runs])
    return {
        "iters_to_target_p50": float(np.median(iterations)),
        "hit_fraction": float(np.mean([r.iterations is not None for r in runs])),
        "tau_max": float(max(r.tau_max_to_target for r in runs)),
        "tau_max_run": float(max(r.tau_max for r in runs)),
        "mean_delay": float(np.mean([r.mean_delay for r in runs])),
        "slow_push_fraction": float(np.mean([r.slow_push_fraction for r in runs])),
        "final_grad_sq_p50": float(np.quantile(final, 0.5)),
        "final_grad_sq_p90": float(np.quantile(final, 0.9)),
        "initial_grad_sq": float(np.mean([r.initial_grad_sq for r in runs])),
        "runs": float(len(runs)),
        "run_wall_s": float(np.sum([r.wall_s for r in runs])),
    }
