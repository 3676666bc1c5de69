"""The agent-training loop on a Ray cluster: SFT stage, then RL, sync or async, with checkpoints and resume.

    engines  = InferenceEngine actors (policy.backend)          rollout workers = RolloutWorker actors
    learner  = LearnerGroup (learner.num_workers actors)         weight sync     = weight_sync.make_weight_sync
    judge    = JudgeStage (reward models, `reward`)              task source     = `tasks.entry` over `env.tasks`

One RL step, in order (each a seam a paper plugs into without editing this file):

    tasks        = source.next(i)                 → hooks.on_tasks          (tasks.py, hooks.py)
    trajectories = workers.run(tasks × group)       agent loop per episode  (rollout.py, agent_loop.py)
    judged       = judge(trajectories)            → source.observe(judged), rollout metrics   (reward.py)
    judged       = hooks.on_trajectories(judged)  (what the learner gets)
    samples      = policy_samples(judged)           advantages on the driver (batch.py, losses/advantages.py)
    learner.policy_update(samples)                  the sum of the loss terms (learner.py, losses/terms.py)
    hooks.after_update(...)                       → push weights to the engines (with learner.lora: adapters only)

- **dynamic sampling** (`rollout.dynamic_sampling`): the first three lines repeat, each time on the next batch of
  the task stream, until the step holds `groups_per_step` groups whose rewards vary or `max_draws` batches were
  drawn; the update trains on the varied groups of all of them (`rollout/draws`, `rollout/groups_drawn`,
  `rollout/groups_kept`, `data/batch_indices`).
- **sync**: generate → reward → advantage → update → sync, one batch at a time.
- **async**: up to `max_staleness + 1` batches are in flight; the learner trains on the oldest while the workers
  keep generating (the engines take new weights between generation calls, so one episode's steps may span
  versions; a trajectory's version is its oldest step's). A group whose version lags the trainer's by more than
  `max_staleness` is dropped (`stale: drop`) or kept with truncated importance weights (`stale: importance`).
- **policy version** = number of weight syncs; every step records it.
- **faults**: a worker that dies is restarted by Ray (`max_restarts`) and its batch resubmitted, at most
  `rollout.max_attempts` times; environment crashes are retried inside the worker (`rollout.EpisodeRunner`). An
  inference engine Ray restarted comes back with the weights it was started from: before each dispatch the
  trainer pushes the weights again to engines that took none since they started (`rollout/engine_resyncs`), a
  training group generated on such an engine is dropped (its version is not the batch's), and an evaluation
  that met one runs again.
- **checkpoints** every `checkpoint_every` steps and at the end of each stage that trained; `resume` continues from the
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
from raygent.platform.rl import metrics as m
from raygent.platform.rl.batch import Sample, policy_samples, samples_from_demonstration, varied_groups
from raygent.platform.rl.distributed import lora_spec
from raygent.platform.rl.engine import start_engines
from raygent.platform.rl.hooks import HookContext, TrainerHook, build_hooks, hook_key
from raygent.platform.rl.learner_group import LearnerGroup
from raygent.platform.rl.reward import JudgeStage
from raygent.platform.rl.rollout import EpisodeRequest, RolloutWorker
from raygent.platform.rl.settings import AgentRunConfig
from raygent.platform.rl.tasks import StaticSource, batch_seed, heldout_seed, make_source
from raygent.platform.rl.weight_sync import make_weight_sync
from raygent.policies.backends.base import SamplingParams
from raygent.policies.loading import load_tokenizer

Demonstrator = Callable[[list[Task]], list[list[tuple[str, str]]]]


def eval_key(name: str) -> str:
    """The metric key of an extra evaluation set's success rate (`eval/<name>/success`)."""
    return f"eval/{name}/success"


@dataclass(frozen=True)
class _Draw:
    """One collected batch of a step, judged (a step trains on one draw, or several with dynamic sampling)."""

    batch: _Batch
    judged: list[Trajectory]
    dropped: int
    """Groups dropped as stale."""
    stats: dict[str, float]
    """The judge's statistics."""
    generate_s: float


@dataclass
class _Batch:
    index: int
    tasks: list[Task]
    params: SamplingParams
    dispatched: list[tuple[int, list[EpisodeRequest], Any]] = field(default_factory=list)
    started: float = 0.0
    version: int = 0
    """The weights' version the engines held when the batch was dispatched."""


class AgentTrainer:
    """Owns the actors of one run. `config` carries the `AgentRunConfig` sections; `model_path` is the initial
    policy checkpoint. `extra_evals` are named task sets evaluated with the held-out tasks each time (e.g.
    templates never trained on) and recorded as `eval_key(name)`, apart from `eval/success`. `hooks` are hooks a
    recipe built itself (e.g. seeded with its own data); they run after those of `trainer.hooks`."""

    def __init__(
        self,
        config: AgentRunConfig,
        run_dir: Path,
        model_path: str,
        console: Console | None = None,
        extra_evals: Mapping[str, Sequence[Task]] | None = None,
        hooks: Sequence[TrainerHook] = (),
    ):
        self.config = config
        self.run_dir = run_dir
        self.model_path = model_path
        self.console = console or Console()
        self.log = m.MetricsLog(run_dir, tensorboard=config.trainer.tensorboard)
        self.version = 0
        self.worker_restarts = 0
        self.pushes = 0
        self.engine_resyncs = 0
        self.hooks = [*build_hooks(config.trainer.hooks), *hooks]
        self.last_eval: list[Trajectory] = []
        self.last_extra_evals: dict[str, list[Trajectory]] = {}
        self.extra_evals = {name: list(tasks) for name, tasks in (extra_evals or {}).items()}
        env, rollout, trainer = config.env, config.rollout, config.trainer
        self.task_fn = load_entry(env.tasks)
        self.source = make_source(
            config.tasks,
            self.task_fn,
            split=env.train_split,
            seed=trainer.seed,
            batch_size=rollout.groups_per_step,
            task_kwargs=env.task_kwargs,
        )
        self.next_batch = 0
        """The next batch of the task stream to dispatch."""
        self.consumed = 0
        """Batches of the task stream trained on (or drawn and left out) so far: where a resumed run goes on."""
        self.groups_target = rollout.groups_per_step
        self.loss = config.learner.loss
        if rollout.dynamic_sampling is not None:  # its steps never train on a group that teaches nothing
            self.loss = self.loss.model_copy(update={"filter_zero_variance_groups": True})
        self.started = time.perf_counter()
        self.sft_source = StaticSource(
            self.task_fn,
            split=env.train_split,
            seed=trainer.seed,
            batch_size=config.sft.batch_tasks,
            stage="sft",
            task_kwargs={**env.task_kwargs, **config.sft.task_kwargs},
        )
        self.eval_tasks = (
            self.task_fn(env.eval_split, heldout_seed(trainer.seed), trainer.eval_tasks, **env.task_kwargs)
            if trainer.eval_tasks
            else []
        )
        self.sync = make_weight_sync(trainer.weight_sync)
        self.tokenizer = load_tokenizer(model_path)
        self._start_actors()
        self.hook_context = HookContext(self.learner, self.tokenizer, config.policy.prompt, trainer.seed)

    # -- actors -----------------------------------------------------------------------------------------------

    def _start_actors(self) -> None:
        policy, rollout, learner = self.config.policy, self.config.rollout, self.config.learner
        options: dict[str, Any] = {"dtype": policy.dtype, **policy.backend_options}
        if learner.lora is not None:  # adapter-only sync: the engines hold the base and apply the learner's adapters
            options["lora"] = lora_spec(learner.lora).model_dump()
        self.engines = start_engines(
            rollout.num_engines,
            policy.backend,
            self.model_path,
            options,
            num_cpus=rollout.engine_num_cpus,
            max_batch=rollout.max_batch,
        )
        self.learner = LearnerGroup(
            self.model_path, learner, self.config.trainer.seed, rollout.sampling.logprob_temperature
        )
        self.judge = JudgeStage(self.config.reward)
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
                agent=rollout.agent,
            )
            for index in range(rollout.num_workers)
        ]
        ray.get([worker.pid.remote() for worker in self.workers])

    def shutdown(self) -> None:
        self.log.close()
        self.learner.shutdown()
        self.judge.shutdown()
        for actor in [*self.workers, *self.engines]:
            ray.kill(actor)

    # -- the run ----------------------------------------------------------------------------------------------

    def run(self, resume: bool = False) -> dict[str, Any]:
        """Both stages from the start or from the newest checkpoint; returns the run's summary numbers."""
        stage, step = "sft", 0
        if resume and (found := ckpt.latest(self.run_dir)) is not None:
            directory, state = found
            self.learner.restore(str(directory))
            stage, step, self.version = state["stage"], state["step"], state["version"]
            self.next_batch = self.consumed = int(state["next_batch"])
            self.source.load_state(state.get("tasks", {}))
            self.worker_restarts = state.get("worker_restarts", 0)
            hook_states = state.get("hooks", {})
            for index, hook in enumerate(self.hooks):
                if hook_key(index, hook) in hook_states:
                    hook.load_state(hook_states[hook_key(index, hook)])
            self.log.truncate_after(step, stage)
            self._push_weights()
            self.console.print(f"resumed from {directory.name}: stage {stage}, step {step}")
        before: dict[str, float] = {}
        if stage == "sft":
            self._sft(start=step)
            stage, step = "grpo", 0
            if self.config.sft.steps:  # a resumed run starts RL from SFT's result; without SFT there is none to keep
                self._checkpoint("grpo", 0, next_batch=0)
        if self.config.trainer.steps and step == 0:
            before = self._evaluate(0)
        self._grpo(start=step)
        after = self._evaluate(self.config.trainer.steps)
        final = self.run_dir / ckpt.CHECKPOINTS / ckpt.FINAL
        self.learner.save(str(final))
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
            self.learner.reset_optimizer(sft.lr or self.config.learner.lr, total_steps=sft.steps)
        with self._progress("sft", sft.steps, start) as progress:
            for step in range(start, sft.steps):
                begin = time.perf_counter()
                tasks = self.sft_source.next(step)
                samples: list[Sample] = []
                for task, turns in zip(tasks, demonstrate(tasks), strict=True):
                    samples += samples_from_demonstration(self.tokenizer, self.config.policy.prompt, task, turns)
                stats = self.learner.sft(samples)
                record = {m.STAGE: "sft", m.STEP: step + 1, m.TIMING_LEARN: time.perf_counter() - begin, **stats}
                self.log.write(record)
                loss = stats.get("learner/sft/loss", 0.0)
                progress.update(progress.task_ids[0], advance=1, status=f"loss {loss:.3f}")
                if (step + 1) % self.config.trainer.checkpoint_every == 0 or step + 1 == sft.steps:
                    self._checkpoint("sft", step + 1)
        self._push_weights()

    # -- GRPO -------------------------------------------------------------------------------------------------

    def _grpo(self, start: int) -> None:
        trainer = self.config.trainer
        if start >= trainer.steps:
            return
        if start == 0:  # RL's own optimizer and schedule (SFT's moments should not steer RL)
            self.learner.reset_optimizer(self.config.learner.lr, trainer.steps * self.config.learner.updates_per_batch)
        acted = self._start_hooks() if start == 0 else False
        self._reference(start, changed=acted or self.config.sft.steps > 0)
        ahead = trainer.max_staleness + 1 if trainer.mode == "async" else 1
        draws_cap = self.config.rollout.dynamic_sampling.max_draws if self.config.rollout.dynamic_sampling else 1
        inflight: deque[_Batch] = deque()
        with self._progress("grpo", trainer.steps, start) as progress:
            for step in range(start, trainer.steps):
                draws: list[_Draw] = []
                while not draws or (len(draws) < draws_cap and self._groups_kept(draws) < self.groups_target):
                    # at most one batch in flight per step still to train (each step takes at least one)
                    while len(inflight) < min(ahead, trainer.steps - step):
                        tasks = self.source.next(self.next_batch)
                        for hook in self.hooks:  # the step this batch trains at (ahead of `step` when async)
                            tasks = hook.on_tasks(step + 1 + len(inflight), tasks)
                        inflight.append(self._dispatch(self.next_batch, tasks))
                        self.next_batch += 1
                    batch = inflight.popleft()
                    trajectories, generate_s = self._collect(batch)
                    draws.append(self._judged(step + 1, batch, trajectories, generate_s))
                    self.consumed = batch.index + 1
                record = self._train(step + 1, draws)
                progress.update(
                    progress.task_ids[0],
                    advance=1,
                    status=f"reward {record[m.REWARD]:.2f} success {record[m.SUCCESS]:.2f}",
                )
                if trainer.eval_every and (step + 1) % trainer.eval_every == 0 and step + 1 < trainer.steps:
                    self._evaluate(step + 1)
                if (step + 1) % trainer.checkpoint_every == 0 or step + 1 == trainer.steps:
                    # batches still in flight are regenerated after a resume: the source rewinds to the next draw
                    self._checkpoint("grpo", step + 1, next_batch=self.consumed)

    def _reference(self, start: int, changed: bool) -> None:
        """The reference model of the terms that need one (KL, adversarial imitation) is the policy as RL begins,
        after SFT and the hooks' `on_start`, not the model the run was started from (for an agent trained from
        scratch, its random initialization): saved as `checkpoints/reference` when RL begins and read back when a
        run resumes. When neither SFT nor a hook `changed` the policy, the initial model is that policy."""
        if not any(term.needs_reference for term in self.learner.terms):
            return
        directory = ckpt.reference_dir(self.run_dir)
        if start == 0:
            if not changed:
                return
            self.learner.save(str(directory), model_only=True)
        elif not directory.is_dir():  # resumed, and the policy had not changed before RL
            return
        self.learner.set_reference(str(directory))

    def _start_hooks(self) -> bool:
        """Each hook's `on_start` before the first RL step; one `hooks` record and a weight push if any acted
        (returns whether one did)."""
        begin = time.perf_counter()
        stats: dict[str, float] = {}
        for hook in self.hooks:
            stats.update(hook.on_start(self.hook_context))
        if stats:
            self.log.write({m.STAGE: "hooks", m.STEP: 0, m.TIMING_LEARN: time.perf_counter() - begin, **stats})
            self._push_weights()
        return bool(stats)

    def _requests(self, index: int, tasks: Sequence[Task], group_size: int) -> list[list[EpisodeRequest]]:
        """Whole groups per worker, round robin; each episode seeded from the run's seed, the batch `index`, its
        group and its place in it (`batch_seed`), so its tokens do not depend on the worker or the engine's batch."""
        per_worker: list[list[EpisodeRequest]] = [[] for _ in self.workers]
        seed = self.config.trainer.seed
        for number, task in enumerate(tasks):
            group = [
                EpisodeRequest(task, f"b{index}-{number}", i, batch_seed(seed, index, f"sample/{number}/{i}"))
                for i in range(group_size)
            ]
            per_worker[number % len(self.workers)].extend(group)
        return per_worker

    def _dispatch(
        self, index: int, tasks: list[Task], params: SamplingParams | None = None, group_size: int = 0
    ) -> _Batch:
        self._engines_current()
        params = params or self.config.rollout.sampling
        batch = _Batch(index, tasks, params, started=time.perf_counter(), version=self.version)
        for worker_index, requests in enumerate(
            self._requests(index, tasks, group_size or self.config.rollout.group_size)
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

    def _judged(self, step: int, batch: _Batch, trajectories: list[Trajectory], generate_s: float) -> _Draw:
        """One collected batch through the staleness filter and the judge; the task source observes it."""
        trainer = self.config.trainer
        fresh = trajectories
        stale_groups: set[str] = set()
        if trainer.mode == "async" and trainer.stale == "drop":
            stale_groups = {
                t.group_id
                for t in trajectories
                if not t.infra_failure and self.version - t.policy_version > trainer.max_staleness
            }
        elif trainer.mode == "sync":  # every episode ran on the batch's weights, unless an engine was restarted
            stale_groups = {
                t.group_id for t in trajectories if not t.infra_failure and t.policy_version != batch.version
            }
        if stale_groups:
            fresh = [t for t in trajectories if t.group_id not in stale_groups]
        judged, stats = self.judge(fresh)
        if self.config.reward is not None:
            self.log.write({m.STAGE: "judge", m.STEP: step, m.JUDGEMENTS: judgement_records(fresh, judged)})
        self.source.observe([t for t in judged if not t.infra_failure])
        return _Draw(batch, judged, len(stale_groups), stats, generate_s)

    def _groups_kept(self, draws: Sequence[_Draw]) -> int:
        """Groups of the draws whose rewards vary (the ones GRPO learns from)."""
        return len(varied_groups([t for d in draws for t in d.judged], self.config.learner.loss.zero_variance_atol))

    def _train(self, step: int, draws: list[_Draw]) -> dict[str, Any]:
        # the source and the rollout metrics see the episodes as collected and judged; the hooks shape only what the
        # learner gets (XSkill's withholds the whole batch to keep the agent frozen)
        collected = [t for d in draws for t in d.judged]
        judged = collected
        for hook in self.hooks:
            judged = hook.on_trajectories(step, judged)
        begin = time.perf_counter()
        samples, stats = policy_samples(judged, self.loss)
        for key in {k for d in draws for k in d.stats}:  # the judge's statistics, averaged over the draws
            values = [d.stats[key] for d in draws if key in d.stats]
            stats[key] = sum(values) / len(values)
        if samples:
            stats.update(self.learner.policy_update(samples))
        for hook in self.hooks:
            stats.update(hook.after_update(step, judged, self.hook_context))
        learn_s = time.perf_counter() - begin
        self.version += 1
        sync_s = self._push_weights()
        generate_s = sum(d.generate_s for d in draws)
        agent = [t for t in collected if not t.infra_failure]
        source_metrics = getattr(self.source, "metrics", None)
        record = {
            m.STAGE: "grpo",
            m.STEP: step,
            m.BATCH_INDEX: draws[0].batch.index,
            m.BATCH_INDICES: [d.batch.index for d in draws],
            m.TASK_IDS: [task.id for d in draws for task in d.batch.tasks],
            m.VERSION: self.version,
            m.TIMING_GENERATE: generate_s,
            m.TIMING_LEARN: learn_s,
            m.TIMING_SYNC: sync_s,
            m.DROPPED_STALE: sum(d.dropped for d in draws),
            m.WORKER_RESTARTS: self.worker_restarts,
            m.ENGINE_RESYNCS: self.engine_resyncs,
            m.DRAWS: len(draws),
            m.GROUPS_DRAWN: len({t.group_id for t in agent}),
            m.GROUPS_KEPT: self._groups_kept(draws),
            m.WALL: time.perf_counter() - self.started,
            **rollout_metrics(collected, self.version - 1, generate_s),
            **(source_metrics() if callable(source_metrics) else {}),
            **stats,
        }
        self.log.write(record)
        return record

    # -- evaluation, weights, checkpoints ---------------------------------------------------------------------

    def _evaluate(self, step: int) -> dict[str, float]:
        """Greedy success rates on the held-out tasks and each extra set (one episode per task, all sets in one
        dispatch), recorded as one `eval` record; returns them by metric key."""
        sets = {"": self.eval_tasks, **self.extra_evals}
        if not any(sets.values()):
            return {}
        begin = time.perf_counter()
        owner = {id(task): name for name, tasks in sets.items() for task in tasks}
        for _ in range(2):  # once more if an engine was restarted meanwhile: it answered with its initial weights
            self._engines_current()  # one restarted before the evaluation: pushed now, not counted as meanwhile
            resyncs = self.engine_resyncs
            batch = self._dispatch(
                -1, [t for tasks in sets.values() for t in tasks], self.config.rollout.eval_sampling, 1
            )
            trajectories, _ = self._collect(batch)
            self._engines_current()
            if self.engine_resyncs == resyncs:
                break
        requests = [request for _, worker_requests, _ in batch.dispatched for request in worker_requests]
        judged: dict[str, list[Trajectory]] = {name: [] for name in sets}
        for request, trajectory in zip(requests, trajectories, strict=True):  # _collect keeps dispatch order
            if not trajectory.infra_failure:
                judged[owner[id(request.task)]].append(trajectory)
        for hook in self.hooks:
            hook.on_eval(step, judged)
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
        record[m.ENGINE_RESYNCS] = self.engine_resyncs
        elapsed = time.perf_counter() - self.started
        self.log.write({**record, m.VERSION: self.version, "timing/eval": time.perf_counter() - begin, m.WALL: elapsed})
        self.console.print(f"eval at step {step}: success " + ", ".join(lines))
        return rates

    def evaluate(self) -> list[Trajectory]:
        """One greedy evaluation of the held-out tasks as the policy stands, recorded at step 0 (`raygent eval`);
        its trajectories (infrastructure failures left out)."""
        self._evaluate(0)
        return list(self.last_eval)

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
        self.pushes += 1
        return self.sync.push(self.learner.rank0, self.engines, self.version)

    def _engines_current(self) -> None:
        """Pushes the weights again when an engine took none since it started (Ray restarted it: it holds the
        weights it was started from, not the trained ones); counted as `rollout/engine_resyncs`."""
        if not self.pushes:
            return
        for attempt in range(120):  # an engine being restarted answers once it is back
            try:
                loads = ray.get([engine.loads.remote() for engine in self.engines])
                break
            except ray.exceptions.ActorUnavailableError:
                if attempt == 119:
                    raise
                time.sleep(0.5)
        if 0 in loads:
            self.engine_resyncs += 1
            self.console.print(f"[yellow]{loads.count(0)} inference engine(s) restarted: weights pushed again[/]")
            self._push_weights()

    def _checkpoint(self, stage: str, step: int, next_batch: int | None = None) -> None:
        directory = ckpt.checkpoint_dir(self.run_dir, stage, step)
        self.learner.save(str(directory))
        state = {
            "stage": stage,
            "step": step,
            "version": self.version,
            "next_batch": next_batch if next_batch is not None else self.next_batch,
            "tasks": self.source.state(),
            "hooks": {hook_key(index, hook): hook.state() for index, hook in enumerate(self.hooks)},
            "worker_restarts": self.worker_restarts,
        }
        ckpt.write_state(directory, state)
        ckpt.mark_latest(self.run_dir, directory, self.config.trainer.keep_checkpoints)


def _lost(request: EpisodeRequest) -> Trajectory:
    return Trajectory(task=request.task, steps=[], policy_version=0, group_id=request.group_id, infra_failure=True)


def judgement_records(before: Sequence[Trajectory], after: Sequence[Trajectory]) -> list[dict[str, Any]]:
    """One record per judged episode (the `judge` stage's `judge/judgements`): the reward model's verdict beside the
    environment checker's."""
    return [
        {
            "task_id": b.task.id,
            "group_id": b.group_id,
            "checker_success": b.success,
            **a.judgement.model_dump(exclude={"info"}),
        }
        for b, a in zip(before, after, strict=True)
        if a.judgement is not None
    ]


def rollout_metrics(trajectories: Sequence[Trajectory], version: int, generate_s: float) -> dict[str, float]:
    """Reward, success, invalid-action rate, turns, staleness and throughput of one batch (agent episodes only)."""
    judged = [t for t in trajectories if not t.infra_failure]
    steps = [s for t in judged for s in t.steps]
    tokens = sum(len(s.response_ids) for s in steps)
    n = max(len(judged), 1)
    return {
        m.REWARD: sum(t.reward for t in judged) / n,
        m.SUCCESS: sum(bool(t.success) for t in judged) / n,
        m.INVALID_ACTION_RATE: sum(not s.valid_action for s in steps) / max(len(steps), 1),
        m.INFRA_FAILURES: float(len(trajectories) - len(judged)),
        m.TURNS: len(steps) / n,
        m.STALENESS: sum(version - t.policy_version for t in judged) / n,
        m.SAMPLES: float(len(judged)),
        m.TOKENS_PER_S: tokens / generate_s if generate_s > 0 else 0.0,
    }
