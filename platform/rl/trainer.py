"""The agent-training loop on a Ray cluster: SFT stage, then GRPO, sync or async, with checkpoints and resume.

    engines  = InferenceEngine actors (policy.backend)          rollout workers = RolloutWorker actors
    learner  = Learner actor                                     weight sync     = weight_sync.make_weight_sync
    per step: tasks (TaskStream) → groups of episodes on the workers → trajectories → learner.grpo → sync

- **sync**: generate → reward → advantage → update → sync, one batch at a time.
- **async**: up to `max_staleness + 1` batches are in flight; the learner trains on the oldest while the workers
  keep generating (the engines take new weights between generation calls, so one episode's steps may span
  versions; a trajectory's version is its oldest step's). A group whose version lags the trainer's by more than
  `max_staleness` is dropped (`stale: drop`) or kept with truncated importance weights (`stale: importance`).
- **policy version** = number of weight syncs; every step records it.
- **faults**: a worker that dies is restarted by Ray (`max_restarts`) and its batch resubmitted, at most
  `rollout.max_attempts` times; environment crashes are retried inside the worker (`rollout.EpisodeRunner`).
- **checkpoints** every `checkpoint_every` steps and at the end of each stage; `resume` continues from the
  newest, with the task stream, version and metrics log rewound to it, so no batch is repeated or skipped.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import RayActorError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from raygent.platform.config import load_entry
from raygent.platform.contracts import Task, Trajectory
from raygent.platform.rl import checkpoint as ckpt
from raygent.platform.rl import hindsight
from raygent.platform.rl import metrics as m
from raygent.platform.rl.batch import Sample, samples_from_demonstration
from raygent.platform.rl.engine import start_engines
from raygent.platform.rl.learner import Learner
from raygent.platform.rl.rollout import EpisodeRequest, RolloutWorker
from raygent.platform.rl.settings import AgentRunConfig
from raygent.platform.rl.tasks import TaskStream, batch_seed
from raygent.platform.rl.weight_sync import make_weight_sync
from raygent.policies.backends.base import SamplingParams
from raygent.policies.loading import load_tokenizer

Demonstrator = Callable[[list[Task]], list[list[tuple[str, str]]]]


def eval_key(name: str) -> str:
    """The metric key of an extra evaluation set's success rate (`eval/<name>/success`)."""
    return f"eval/{name}/success"


@dataclass
class _Batch:
    index: int
    tasks: list[Task]
    params: SamplingParams
    dispatched: list[tuple[int, list[EpisodeRequest], Any]] = field(default_factory=list)
    started: float = 0.0


class AgentTrainer:
    """Owns the actors of one run. `config` carries the `AgentRunConfig` sections; `model_path` is the initial
    policy checkpoint. `extra_evals` are named task sets evaluated with the held-out tasks each time (e.g.
    templates never trained on) and recorded as `eval_key(name)`, apart from `eval/success`. `hindsight_seed`
    demonstrations start the hindsight buffer (`platform.rl.hindsight`)."""

    def __init__(
        self,
        config: AgentRunConfig,
        run_dir: Path,
        model_path: str,
        console: Console | None = None,
        extra_evals: Mapping[str, Sequence[Task]] | None = None,
        hindsight_seed: Sequence[hindsight.Demonstration] = (),
    ):
        self.config = config
        self.run_dir = run_dir
        self.model_path = model_path
        self.console = console or Console()
        self.log = m.MetricsLog(run_dir, tensorboard=config.trainer.tensorboard)
        self.version = 0
        self.worker_restarts = 0
        self.hindsight = hindsight.HindsightBuffer(config.trainer.hindsight_per_goal)
        self.hindsight.add(hindsight_seed)  # e.g. a recipe's exploration (a resumed run reads its checkpoint's)
        self.last_eval: list[Trajectory] = []
        self.last_extra_evals: dict[str, list[Trajectory]] = {}
        self.extra_evals = {name: list(tasks) for name, tasks in (extra_evals or {}).items()}
        env, rollout, trainer = config.env, config.rollout, config.trainer
        self.task_source = load_entry(env.tasks)
        self.stream = TaskStream(
            self.task_source, env.train_split, trainer.seed, rollout.groups_per_step, **env.task_kwargs
        )
        sft_kwargs = {**env.task_kwargs, **config.sft.task_kwargs}
        self.sft_stream = TaskStream(
            self.task_source, env.train_split, trainer.seed, config.sft.batch_tasks, stage="sft", **sft_kwargs
        )
        self.eval_tasks = (
            self.task_source(env.eval_split, trainer.seed + 7919, trainer.eval_tasks, **env.task_kwargs)
            if trainer.eval_tasks
            else []
        )
        self.sync = make_weight_sync(trainer.weight_sync)
        self.tokenizer = load_tokenizer(model_path)
        self._start_actors()

    # -- actors -----------------------------------------------------------------------------------------------

    def _start_actors(self) -> None:
        policy, rollout, learner = self.config.policy, self.config.rollout, self.config.learner
        self.engines = start_engines(
            rollout.num_engines,
            policy.backend,
            self.model_path,
            {"dtype": policy.dtype, **policy.backend_options},
            num_cpus=rollout.engine_num_cpus,
            max_batch=rollout.max_batch,
        )
        self.learner = (
            ray.remote(Learner)
            .options(num_cpus=learner.num_cpus, max_restarts=0)
            .remote(self.model_path, learner, self.config.trainer.seed, rollout.sampling.logprob_temperature)
        )
        in_flight = self.config.trainer.max_staleness + 1 if self.config.trainer.mode == "async" else 1
        worker_actor = ray.remote(RolloutWorker).options(
            num_cpus=rollout.worker_num_cpus,
            max_restarts=rollout.max_attempts,
            max_task_retries=0,
            max_concurrency=in_flight + 1,  # the batches in flight and a stats call
        )
        self.workers = [
            worker_actor.remote(
                self.config.env.id,
                dict(self.config.env.kwargs),
                self.config.env.registration,
                rollout.envs_per_worker,
                self.model_path,
                policy.prompt,
                self.engines[index % len(self.engines)],
                max_turns=rollout.max_turns,
                episode_timeout_s=rollout.episode_timeout_s,
                max_attempts=rollout.max_attempts,
            )
            for index in range(rollout.num_workers)
        ]
        ray.get([worker.pid.remote() for worker in self.workers] + [self.learner.get_version.remote()])

    def shutdown(self) -> None:
        self.log.close()
        for actor in [*self.workers, *self.engines, self.learner]:
            ray.kill(actor)

    # -- the run ----------------------------------------------------------------------------------------------

    def run(self, resume: bool = False) -> dict[str, Any]:
        """Both stages from the start or from the newest checkpoint; returns the run's summary numbers."""
        stage, step = "sft", 0
        if resume and (found := ckpt.latest(self.run_dir)) is not None:
            directory, state = found
            ray.get(self.learner.restore.remote(str(directory)))
            stage, step, self.version = state["stage"], state["step"], state["version"]
            self.stream.load_state(state["stream"])
            self.worker_restarts = state.get("worker_restarts", 0)
            self.hindsight.load_state(state.get("hindsight", []))
            self.log.truncate_after(step, stage)
            self._push_weights()
            self.console.print(f"resumed from {directory.name}: stage {stage}, step {step}")
        before: dict[str, float] = {}
        if stage == "sft":
            self._sft(start=step)
            stage, step = "grpo", 0
            self._checkpoint("grpo", 0, stream_index=0)
        if self.config.trainer.steps and step == 0:
            before = self._evaluate(0)
        self._grpo(start=step)
        after = self._evaluate(self.config.trainer.steps)
        final = self.run_dir / ckpt.CHECKPOINTS / ckpt.FINAL
        ray.get(self.learner.save.remote(str(final)))
        ckpt.write_state(final, {"stage": "done", "step": self.config.trainer.steps, "version": self.version})
        summary: dict[str, Any] = {}
        for name in ["", *self.extra_evals]:
            key = eval_key(name) if name else m.EVAL_SUCCESS
            prefix = f"eval/{name}/" if name else "eval/"
            summary[prefix + "before"] = before.get(key, self._recorded_eval(0, key))
            summary[prefix + "after"] = after.get(key, float("nan"))
        return summary

    def _progress(self, description: str, total: int, done: int) -> Progress:
        progress = Progress(
            TextColumn(f"[bold]{description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[status]}"),
            console=self.console,
        )
        progress.add_task(description, total=total, completed=done, status="")
        return progress

    # -- SFT --------------------------------------------------------------------------------------------------

    def _sft(self, start: int) -> None:
        sft = self.config.sft
        if sft.steps == 0 or start >= sft.steps:
            return
        if self.config.env.demonstrations is None:
            raise ValueError("sft.steps > 0 needs env.demonstrations (an expert that demonstrates tasks)")
        demonstrate: Demonstrator = load_entry(self.config.env.demonstrations)
        if start == 0:  # a resumed stage keeps the optimizer state its checkpoint restored
            ray.get(self.learner.reset_optimizer.remote(sft.lr or self.config.learner.lr))
        with self._progress("sft", sft.steps, start) as progress:
            for step in range(start, sft.steps):
                begin = time.perf_counter()
                tasks = self.sft_stream.batch(step)
                samples: list[Sample] = []
                for task, turns in zip(tasks, demonstrate(tasks), strict=True):
                    samples += samples_from_demonstration(self.tokenizer, self.config.policy.prompt, task, turns)
                stats = ray.get(self.learner.sft.remote(samples))
                record = {m.STAGE: "sft", m.STEP: step + 1, m.TIMING_LEARN: time.perf_counter() - begin, **stats}
                self.log.write(record)
                loss = stats.get("learner/sft/loss", 0.0)
                progress.update(progress.task_ids[0], advance=1, status=f"loss {loss:.3f}")
                if (step + 1) % self.config.trainer.checkpoint_every == 0 or step + 1 == sft.steps:
                    self._checkpoint("sft", step + 1)
        ray.get(self.learner.reset_optimizer.remote(self.config.learner.lr))
        self._push_weights()

    # -- GRPO -------------------------------------------------------------------------------------------------

    def _grpo(self, start: int) -> None:
        trainer = self.config.trainer
        if start >= trainer.steps:
            return
        if start == 0 and trainer.hindsight_demos and trainer.hindsight_warmup and len(self.hindsight):
            self._hindsight_warmup()
        ahead = trainer.max_staleness + 1 if trainer.mode == "async" else 1
        inflight: deque[_Batch] = deque()
        with self._progress("grpo", trainer.steps, start) as progress:
            for step in range(start, trainer.steps):
                while len(inflight) < ahead and self.stream.next_index < trainer.steps:
                    inflight.append(self._dispatch(*self.stream.take()))
                batch = inflight.popleft()
                trajectories, generate_s = self._collect(batch)
                record = self._train(step + 1, batch, trajectories, generate_s)
                progress.update(
                    progress.task_ids[0],
                    advance=1,
                    status=f"reward {record[m.REWARD]:.2f} success {record[m.SUCCESS]:.2f}",
                )
                if trainer.eval_every and (step + 1) % trainer.eval_every == 0 and step + 1 < trainer.steps:
                    self._evaluate(step + 1)
                if (step + 1) % trainer.checkpoint_every == 0 or step + 1 == trainer.steps:
                    # batches still in flight are regenerated after a resume: the stream rewinds to the step
                    self._checkpoint("grpo", step + 1, stream_index=step + 1)

    def _requests(self, prefix: str, tasks: Sequence[Task], group_size: int) -> list[list[EpisodeRequest]]:
        """Whole groups per worker, round robin."""
        per_worker: list[list[EpisodeRequest]] = [[] for _ in self.workers]
        for number, task in enumerate(tasks):
            group = [EpisodeRequest(task, f"{prefix}-{number}", i) for i in range(group_size)]
            per_worker[number % len(self.workers)].extend(group)
        return per_worker

    def _dispatch(
        self, index: int, tasks: list[Task], params: SamplingParams | None = None, group_size: int = 0
    ) -> _Batch:
        batch = _Batch(index, tasks, params or self.config.rollout.sampling, started=time.perf_counter())
        for worker_index, requests in enumerate(
            self._requests(f"b{index}", tasks, group_size or self.config.rollout.group_size)
        ):
            if requests:
                ref = self.workers[worker_index].run.remote(requests, batch.params)
                batch.dispatched.append((worker_index, requests, ref))
        return batch

    def _collect(self, batch: _Batch) -> tuple[list[Trajectory], float]:
        trajectories: list[Trajectory] = []
        for worker_index, requests, ref in batch.dispatched:
            for attempt in range(1, self.config.rollout.max_attempts + 1):
                try:
                    trajectories += ray.get(ref)
                    break
                except RayActorError:
                    self.worker_restarts += 1
                    if attempt == self.config.rollout.max_attempts or not self._await_restart(worker_index):
                        trajectories += [_lost(request) for request in requests]
                        break
                    ref = self.workers[worker_index].run.remote(requests, batch.params)
        return trajectories, time.perf_counter() - batch.started

    def _await_restart(self, worker_index: int, timeout_s: float = 300.0) -> bool:
        """Waits until Ray has restarted a dead worker (it answers a call); False if it does not in time."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                ray.get(self.workers[worker_index].pid.remote(), timeout=max(deadline - time.monotonic(), 1.0))
                return True
            except (RayActorError, ray.exceptions.GetTimeoutError):
                time.sleep(0.5)
        return False

    def _train(self, step: int, batch: _Batch, trajectories: list[Trajectory], generate_s: float) -> dict[str, Any]:
        trainer = self.config.trainer
        fresh, dropped = trajectories, 0
        if trainer.mode == "async" and trainer.stale == "drop":
            stale_groups = {
                t.group_id
                for t in trajectories
                if not t.infra_failure and self.version - t.policy_version > trainer.max_staleness
            }
            dropped = len(stale_groups)
            fresh = [t for t in trajectories if t.group_id not in stale_groups]
        begin = time.perf_counter()
        stats = ray.get(self.learner.grpo.remote(fresh))
        if trainer.hindsight_demos:
            stats.update(self._hindsight(step, fresh))
        learn_s = time.perf_counter() - begin
        self.version += 1
        sync_s = self._push_weights()
        record = {
            m.STAGE: "grpo",
            m.STEP: step,
            m.BATCH_INDEX: batch.index,
            m.TASK_IDS: [task.id for task in batch.tasks],
            m.VERSION: self.version,
            m.TIMING_GENERATE: generate_s,
            m.TIMING_LEARN: learn_s,
            m.TIMING_SYNC: sync_s,
            m.DROPPED_STALE: dropped,
            m.WORKER_RESTARTS: self.worker_restarts,
            **rollout_metrics(trajectories, self.version - 1, generate_s),
            **stats,
        }
        self.log.write(record)
        return record

    def _hindsight(self, step: int, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        """SFT steps on goals episodes achieved on the way, replayed from the run's buffer (`platform.rl.hindsight`)."""
        added = self.hindsight.add(hindsight.relabel(trajectories))
        stats: dict[str, float] = {m.HINDSIGHT_NEW: float(added), m.HINDSIGHT_BUFFER: float(len(self.hindsight))}
        if not len(self.hindsight):
            return stats
        return stats | self._replay(step, self.config.trainer.hindsight_updates)

    def _hindsight_warmup(self) -> None:
        """`trainer.hindsight_warmup` replay steps on the seeded buffer before the first GRPO step (one record)."""
        begin = time.perf_counter()
        stats = self._replay(0, self.config.trainer.hindsight_warmup)
        self.log.write(
            {
                m.STAGE: "hindsight",
                m.STEP: 0,
                m.TIMING_LEARN: time.perf_counter() - begin,
                m.HINDSIGHT_BUFFER: float(len(self.hindsight)),
                **stats,
            }
        )
        self._push_weights()

    def _replay(self, step: int, updates: int) -> dict[str, float]:
        """`updates` SFT steps, each on a seeded draw from the buffer; the last step's stats as `hindsight/*`."""
        trainer = self.config.trainer
        for update in range(updates):
            seed = batch_seed(trainer.seed, step, f"hindsight/{update}")
            samples: list[Sample] = []
            for task, turns in self.hindsight.sample(trainer.hindsight_demos, seed):
                samples += samples_from_demonstration(self.tokenizer, self.config.policy.prompt, task, turns)
            sft = ray.get(self.learner.sft.remote(samples))
        return {f"hindsight/{key.split('/')[-1]}": value for key, value in sft.items()}

    # -- evaluation, weights, checkpoints ---------------------------------------------------------------------

    def _evaluate(self, step: int) -> dict[str, float]:
        """Greedy success rates on the held-out tasks and each extra set (one episode per task, all sets in one
        dispatch), recorded as one `eval` record; returns them by metric key."""
        sets = {"": self.eval_tasks, **self.extra_evals}
        if not any(sets.values()):
            return {}
        begin = time.perf_counter()
        owner = {id(task): name for name, tasks in sets.items() for task in tasks}
        batch = self._dispatch(-1, [t for tasks in sets.values() for t in tasks], self.config.rollout.eval_sampling, 1)
        trajectories, _ = self._collect(batch)
        requests = [request for _, worker_requests, _ in batch.dispatched for request in worker_requests]
        judged: dict[str, list[Trajectory]] = {name: [] for name in sets}
        for request, trajectory in zip(requests, trajectories, strict=True):  # _collect keeps dispatch order
            if not trajectory.infra_failure:
                judged[owner[id(request.task)]].append(trajectory)
        self.last_eval = judged.pop("")
        self.last_extra_evals = judged
        record: dict[str, Any] = {m.STAGE: "eval", m.STEP: step}
        rates: dict[str, float] = {}
        lines = []
        for name, done in [("", self.last_eval), *judged.items()]:
            if not sets[name]:
                continue
            key = eval_key(name) if name else m.EVAL_SUCCESS
            rates[key] = sum(bool(t.success) for t in done) / max(len(done), 1)
            reward_key = f"eval/{name}/reward" if name else m.EVAL_REWARD
            record[reward_key] = sum(t.total_reward for t in done) / max(len(done), 1)
            lines.append(f"{rates[key]:.3f} on {len(done)} {name or 'held-out'} tasks")
        record.update(rates)
        record[m.EVAL_OUTCOMES] = {t.task.id: bool(t.success) for t in self.last_eval}
        self.log.write({**record, m.VERSION: self.version, "timing/eval": time.perf_counter() - begin})
        self.console.print(f"eval at step {step}: success " + ", ".join(lines))
        return rates

    def examples(self, count: int, failures: int = 0) -> list[dict[str, Any]]:
        """Trajectories of the last evaluation for the report: `count` in all, successes first, with at least
        `failures` failed ones when there are any (the task id lets a report replay them)."""
        successes = [t for t in self.last_eval if t.success]
        failed = [t for t in self.last_eval if not t.success]
        keep_failed = min(failures, len(failed), count)
        chosen = successes[: count - keep_failed] + failed[: count - min(len(successes), count - keep_failed)]
        return [
            {
                "task": t.task.instruction,
                "task_id": t.task.id,
                "success": t.success,
                "steps": [{"observation": s.observation.text, "action": s.action} for s in t.steps],
            }
            for t in chosen
        ]

    def _recorded_eval(self, step: int, key: str = m.EVAL_SUCCESS) -> float:
        for record in self.log.read():
            if record.get(m.STAGE) == "eval" and record.get(m.STEP) == step and key in record:
                return float(record[key])
        return float("nan")

    def _push_weights(self) -> float:
        return self.sync.push(self.learner, self.engines, self.version)

    def _checkpoint(self, stage: str, step: int, stream_index: int | None = None) -> None:
        directory = ckpt.checkpoint_dir(self.run_dir, stage, step)
        ray.get(self.learner.save.remote(str(directory)))
        state = {
            "stage": stage,
            "step": step,
            "version": self.version,
            "stream": {"next_index": stream_index if stream_index is not None else self.stream.next_index},
            "worker_restarts": self.worker_restarts,
            "hindsight": self.hindsight.state(),
        }
        ckpt.write_state(directory, state)
        ckpt.mark_latest(self.run_dir, directory, self.config.trainer.keep_checkpoints)


def _lost(request: EpisodeRequest) -> Trajectory:
    return Trajectory(task=request.task, steps=[], policy_version=0, group_id=request.group_id, infra_failure=True)


def rollout_metrics(trajectories: Sequence[Trajectory], version: int, generate_s: float) -> dict[str, float]:
    """Reward, success, invalid-action rate, turns, staleness and throughput of one batch (agent episodes only)."""
    judged = [t for t in trajectories if not t.infra_failure]
    steps = [s for t in judged for s in t.steps]
    tokens = sum(len(s.response_ids) for s in steps)
    n = max(len(judged), 1)
    return {
        m.REWARD: sum(t.total_reward for t in judged) / n,
        m.SUCCESS: sum(bool(t.success) for t in judged) / n,
        m.INVALID_ACTION_RATE: sum(not s.valid_action for s in steps) / max(len(steps), 1),
        m.INFRA_FAILURES: float(len(trajectories) - len(judged)),
        m.TURNS: len(steps) / n,
        m.STALENESS: sum(version - t.policy_version for t in judged) / n,
        m.SAMPLES: float(len(judged)),
        m.TOKENS_PER_S: tokens / generate_s if generate_s > 0 else 0.0,
    }
