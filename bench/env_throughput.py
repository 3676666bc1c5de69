"""Throughput and memory of `BrowserEnv` rollout workers: steps/s of one and of two worker processes, reset time,
and RSS growth of a worker (with its Playwright driver and Chromium) over many episodes.

    python bench/env_throughput.py [--app code_editor] [--episodes 1000] [--scaling-episodes 40]
                                   [--driver solver|random] [--steps 5] [--difficulties 1] [--ui-seed 0]
                                   [--action-timeout-ms 3000] [--step-times-only]

Workers are `multiprocessing` processes (spawn), each with its own `BrowserEnv` and so its own Chromium (one
browser per worker process, a fresh context per episode), as RLlib env runners or the RL core's rollout workers
have. A worker warms up (browser launch, first pages), waits for the start signal, then runs episodes: a reset
and then either the template's scripted solver (`--driver solver`, default: the same work in every run) or
`--steps` random actions allowed by the discrete wrapper's mask (`--driver random`: the RL workload).

- Scaling: four runs of `--scaling-episodes` episodes a worker: one worker alone with its browser free to use
  every core, one worker pinned to one core (`BrowserEnv(cpus=...)`, i.e. `BrowserHost.pin`: the stepping
  thread, the driver and the whole browser tree), two workers at once pinned to a core each, two free workers
  at once. A run's rate is its env steps per second of wall time (resets included, as a rollout worker sees
  them), a pair's over the wall time of the slower. `scaling` is the pinned pair over the free lone worker (the
  machine's gain from a second worker; 2.0 is perfect, the target on 2 cores ≥ 1.8); `scaling_per_core` is the
  pinned pair over the pinned lone worker (each worker on the one core it is allotted, as RLlib's
  `num_cpus_per_env_runner=1` allots it). A free Chromium spreads its work over both cores and spends more CPU
  on a step doing so, which leaves a second free worker nothing (`steps_per_s_2_free`; see `browser.py`).
- CPU: each run also reports the cores its workers' process trees used (CPU seconds over wall time): a
  worker that alone keeps more than one of 2 cores busy cannot scale to 2.0, and on a machine that other
  jobs load, 2 workers get no more than the cores left free.
- Step time of a random policy (issue 24): a lone pinned worker runs `--scaling-episodes` episodes of `--steps`
  random allowed actions (`--driver random`'s policy) after the lone pinned run of `--driver`; each `step` call
  is timed (resets excluded). `random_step_ms` / `scripted_step_ms` are the mean step times of the two, and
  `random_slow_steps` the share of random steps over 1 s (a click on a covered or disabled element used to wait
  out the action timeout, `--action-timeout-ms`, BrowserEnv's default 3 s; it is now refused at once). The
  target: `random_over_scripted` ≤ 2. `--step-times-only` runs just these two runs.
- Memory: one worker runs `--episodes` episodes; every `--rss-every` episodes it sums the RSS of its process
  tree (Python, the Playwright driver, every Chromium process). `rss_growth_mb_per_1000` is the least-squares
  slope of that sum against the episode count, per 1,000 episodes (samples from the first tenth of the run are
  left out: page caches fill then). The same slope of the tree's USS (private pages only) is printed too: the
  RSS sum jumps by a helper process's shared pages when Chromium starts one, and the driver's heap is a
  sawtooth (its garbage collector), so a short run's RSS slope overstates growth. `reset_s` is the median
  reset time of this run.

Last line: `steps_per_s_1=… steps_per_s_2=… scaling=… steps_per_s_1_pinned=… scaling_per_core=…
steps_per_s_2_free=… reset_s=… rss_growth_mb_per_1000=… scripted_step_ms=… random_step_ms=…
random_over_scripted=… random_slow_steps=…` (with `--step-times-only`, the last four).
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

WARMUP_EPISODES = 3


@dataclass(frozen=True)
class WorkerSpec:
    app: str
    difficulties: tuple[int, ...]
    ui_seed: int
    episodes: int
    driver: str
    steps: int
    seed: int
    rss_every: int
    cpus: tuple[int, ...] | None = None
    action_timeout_ms: float = 3000.0


def tree_memory_mb() -> tuple[float, float]:
    """`(RSS, USS)` in MB summed over this process and all its descendants (Playwright's driver, Chromium).

    The RSS sum counts the pages Chromium's processes share once per process (a new helper process adds its
    whole shared RSS); USS (unique set size) counts only each process's private pages, where a leak grows, and
    unlike PSS it does not change when other programs on the machine map the same Chromium binary."""
    import psutil

    me = psutil.Process()
    rss = uss = 0
    for process in [me, *me.children(recursive=True)]:
        try:
            info = process.memory_full_info()
        except psutil.Error:
            continue
        rss += info.rss
        uss += info.uss
    return rss / 2**20, uss / 2**20


def tree_cpu_s() -> float:
    """CPU seconds (user + system) of this process and its descendants, including reaped ones (Chromium reaps
    the renderer of each closed context, so it lands in the browser's `children_*` times)."""
    import psutil

    me = psutil.Process()
    total = 0.0
    for process in [me, *me.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def run_episode(
    env: Any,
    spec: WorkerSpec,
    task_id: str,
    rng: random.Random,
    step_times: list[float] | None = None,
    refusals: list[str] | None = None,
) -> tuple[float, int, bool]:
    """One episode; `(reset seconds, env steps, solved)`. `env` is a `DiscreteWebEnv` (`browser_env` underneath);
    each step's seconds are appended to `step_times` and each click refused as covered or disabled to `refusals`
    (its error) when given.

    A solver that cannot find its next element (one of its actions failed) ends the episode unsolved."""
    from raygent.environments.web.server import ui_spec

    start = time.perf_counter()
    observation, _ = env.reset(options={"task": task_id, "ui_seed": spec.ui_seed})
    reset_s = time.perf_counter() - start
    steps, info = 0, {}
    if spec.driver == "random":
        for _ in range(spec.steps):
            allowed = np.flatnonzero(observation["action_mask"])
            action = int(rng.choice(list(allowed)))
            began = time.perf_counter()
            observation, _, terminated, truncated, info = env.step(action)
            if step_times is not None:
                step_times.append(time.perf_counter() - began)
            error = (env.browser_env._last_obs or {}).get("last_action_error", "")
            if refusals is not None and (" is covered by " in error or " is disabled" in error):
                refusals.append(error)
            steps += 1
            if terminated or truncated:
                break
        return reset_s, steps, bool(info.get("success"))
    browser_env = env.browser_env
    task = browser_env.task
    solver = task.task.solve(task.params, ui_spec(task.app, task.ui_seed))
    try:
        action = next(solver)
        while True:
            began = time.perf_counter()
            result = browser_env.step(action)
            if step_times is not None:
                step_times.append(time.perf_counter() - began)
            steps += 1
            info = result[4]
            if result[2] or result[3]:
                break
            action = solver.send(result[0]["text"])
    except (StopIteration, LookupError):
        pass
    return reset_s, steps, bool(info.get("success"))


def worker_main(spec: WorkerSpec, start: Any, results: Connection) -> None:
    """A rollout worker process: warm up, report ready, wait for `start`, run the episodes, send the stats."""
    from raygent.environments.web.discrete import make_discrete_env
    from raygent.environments.web.registry import list_tasks

    env = make_discrete_env(
        {
            "app": spec.app,
            "difficulties": spec.difficulties,
            "ui_seed": spec.ui_seed,
            "wait_s": 0.05,
            "cpus": list(spec.cpus) if spec.cpus is not None else None,
            "action_timeout_ms": spec.action_timeout_ms,
        }
    )
    templates = list_tasks(spec.app, spec.difficulties)
    rng = random.Random(spec.seed)
    for index in range(WARMUP_EPISODES):  # the browser launch and the first pages are not measured
        run_episode(env, spec, f"{templates[index % len(templates)]}/{10_000 + index}", rng)
    results.send("ready")
    start.wait()
    resets: list[float] = []
    step_times: list[float] = []
    refusals: list[str] = []
    memory: list[tuple[int, float, float]] = [(0, *tree_memory_mb())]
    steps = solved = 0
    cpu_began, began = tree_cpu_s(), time.perf_counter()
    for episode in range(spec.episodes):
        task_id = f"{templates[episode % len(templates)]}/{spec.seed * 100_000 + episode}"
        reset_s, taken, success = run_episode(env, spec, task_id, rng, step_times, refusals)
        resets.append(reset_s)
        steps += taken
        solved += success
        if (episode + 1) % spec.rss_every == 0:
            memory.append((episode + 1, *tree_memory_mb()))
    wall, cpu = time.perf_counter() - began, tree_cpu_s() - cpu_began
    launches = env.browser_env.host.launches
    env.close()
    stats = {
        "steps": steps,
        "wall": wall,
        "cpu": cpu,
        "resets": resets,
        "memory": memory,
        "solved": solved,
        "step_times": step_times,
        "refusals": refusals,
    }
    results.send({**stats, "launches": launches})


def run_workers(specs: list[WorkerSpec]) -> list[dict[str, Any]]:
    """Start one spawned process per spec, release them together once all are warm, and collect their stats."""
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    pipes, processes = [], []
    for spec in specs:
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=worker_main, args=(spec, start, send), daemon=True)
        process.start()
        pipes.append(receive)
        processes.append(process)
    for receive, process in zip(pipes, processes, strict=True):
        if not receive.poll(600):
            raise RuntimeError(f"worker {process.pid} did not warm up in 10 minutes")
        receive.recv()
    start.set()
    stats = [receive.recv() for receive in pipes]
    for process in processes:
        process.join(60)
    return stats


def slope_per_1000(samples: list[tuple[int, float]]) -> float:
    """Least-squares MB per 1,000 episodes of `(episode, MB)` samples, the first tenth of the run left out."""
    last = samples[-1][0]
    kept = [(x, y) for x, y in samples if x >= last / 10] or samples
    if len(kept) < 2:
        return float("nan")
    xs, ys = np.array([x for x, _ in kept], float), np.array([y for _, y in kept], float)
    return float(np.polyfit(xs, ys, 1)[0] * 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", default="code_editor")
    parser.add_argument("--difficulties", type=int, nargs="+", default=[1])
    parser.add_argument("--ui-seed", type=int, default=0)
    parser.add_argument("--episodes", type=int, default=1000, help="episodes of the memory run")
    parser.add_argument("--scaling-episodes", type=int, default=40, help="episodes per worker of the scaling runs")
    parser.add_argument("--driver", choices=("solver", "random"), default="solver")
    parser.add_argument("--steps", type=int, default=5, help="actions per episode of the random driver")
    parser.add_argument("--rss-every", type=int, default=0, help="episodes between RSS samples (0: episodes/20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--action-timeout-ms", type=float, default=3000.0, help="how long a click waits (BrowserEnv's default: 3 s)"
    )
    parser.add_argument("--step-times-only", action="store_true", help="only the scripted and random step-time runs")
    args = parser.parse_args()
    from raygent.environments.web.discrete import worker_core

    def spec(episodes: int, seed: int, core: int | None = None, driver: str | None = None) -> WorkerSpec:
        every = args.rss_every or max(1, episodes // 20)
        cpus = None if core is None else (worker_core(core),)
        return WorkerSpec(
            args.app,
            tuple(args.difficulties),
            args.ui_seed,
            episodes,
            driver or args.driver,
            args.steps,
            seed,
            every,
            cpus,
            args.action_timeout_ms,
        )

    def step_time_run(driver: str) -> list[float]:
        """A lone pinned worker with `driver`; prints a line, returns its step times (seconds)."""
        (stats,) = run_workers([spec(args.scaling_episodes, args.seed, 0, driver)])
        times = stats["step_times"]
        slow = sum(t > 1.0 for t in times)
        refused = stats["refusals"]
        print(
            f"{driver} driver, 1 worker pinned: {len(times)} steps, mean {statistics.mean(times) * 1000:.0f} ms, "
            f"median {statistics.median(times) * 1000:.0f} ms, p90 {np.percentile(times, 90) * 1000:.0f} ms, "
            f"max {max(times) * 1000:.0f} ms, {slow} over 1 s; {len(refused)} clicks refused as covered or "
            f"disabled; solved {stats['solved']}/{args.scaling_episodes}"
            + (f"; e.g. {refused[0][:160]}" if refused else ""),
            flush=True,
        )
        return list(times)

    def step_time_keys(scripted: list[float], random_times: list[float]) -> str:
        scripted_ms, random_ms = statistics.mean(scripted) * 1000, statistics.mean(random_times) * 1000
        slow = sum(t > 1.0 for t in random_times) / len(random_times)
        return (
            f"scripted_step_ms={scripted_ms:.0f} random_step_ms={random_ms:.0f} "
            f"random_over_scripted={random_ms / scripted_ms:.2f} random_slow_steps={slow:.3f}"
        )

    if args.step_times_only:
        scripted = step_time_run("solver")
        print(step_time_keys(scripted, step_time_run("random")))
        return

    step_times: dict[tuple[int, bool], list[float]] = {}

    def scaling_run(workers: int, pinned: bool) -> float:
        """`workers` workers at once, each pinned to a core of its own or all free; prints a line, returns the
        steps per second of wall time of the slowest."""
        stats = run_workers([spec(args.scaling_episodes, args.seed + i, i if pinned else None) for i in range(workers)])
        step_times[(workers, pinned)] = stats[0]["step_times"]
        steps, wall, cpu = sum(s["steps"] for s in stats), max(s["wall"] for s in stats), sum(s["cpu"] for s in stats)
        where = "pinned to a core each" if pinned else "free"
        print(
            f"{workers} worker(s), {where}: {steps} steps in {wall:.1f} s = {steps / wall:.2f} steps/s; their process "
            f"trees used {cpu / wall:.2f} cores ({cpu / steps * 1000:.0f} ms CPU a step)",
            flush=True,
        )
        return steps / wall

    steps_1 = scaling_run(1, pinned=False)
    steps_1_pinned = scaling_run(1, pinned=True)
    steps_2 = scaling_run(2, pinned=True)
    steps_2_free = scaling_run(2, pinned=False)
    random_times = step_time_run("random")
    (run,) = run_workers([spec(args.episodes, args.seed + 2)])
    memory = run["memory"]
    rss, uss = [(x, r) for x, r, _ in memory], [(x, u) for x, _, u in memory]
    growth = slope_per_1000(rss)
    reset_s = statistics.median(run["resets"])
    print(
        f"memory run: {args.episodes} episodes, {run['steps']} steps in {run['wall']:.0f} s; tree RSS "
        f"{rss[0][1]:.0f} MB -> {rss[-1][1]:.0f} MB (max {max(y for _, y in rss):.0f}), tree USS {uss[0][1]:.0f} MB "
        f"-> {uss[-1][1]:.0f} MB (max {max(y for _, y in uss):.0f}, {slope_per_1000(uss):.1f} MB per 1,000 episodes); "
        f"resets median {reset_s:.3f} s, p90 {np.percentile(run['resets'], 90):.3f} s; browser launches "
        f"{run['launches']}; solved {run['solved']}/{args.episodes}",
        flush=True,
    )
    print("memory samples (episode: tree RSS / USS MB): " + ", ".join(f"{x}: {r:.0f}/{u:.0f}" for x, r, u in memory))
    print(
        f"steps_per_s_1={steps_1:.2f} steps_per_s_2={steps_2:.2f} scaling={steps_2 / steps_1:.2f} "
        f"steps_per_s_1_pinned={steps_1_pinned:.2f} scaling_per_core={steps_2 / steps_1_pinned:.2f} "
        f"steps_per_s_2_free={steps_2_free:.2f} reset_s={reset_s:.3f} rss_growth_mb_per_1000={growth:.1f} "
        + step_time_keys(step_times[(1, True)], random_times)
    )


if __name__ == "__main__":
    main()
