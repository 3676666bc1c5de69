"""Rollout: multi-turn episodes of many environments against an inference engine, and the worker actor.

`EpisodeRunner` hosts `n_envs` environment instances and runs episodes in lockstep: every turn it builds the
prompts of all running episodes, asks the engine for all of them in one call, and steps each environment with
its response; a finished episode's slot takes the next queued episode, and the free slots' resets run at once.
Each environment lives on its own thread (Playwright's sync objects belong to the thread that made them) and
every environment call has a deadline, so a hung or crashed environment is abandoned, rebuilt, and its episode
retried from the start, at most `max_attempts` times; after that the episode is returned as an infrastructure
failure (no steps it has are trained on, and it is not counted as an agent failure).

The episode's context belongs to an agent loop (`agent_loop.py`, `rollout.agent`): it builds each prompt and turns
each completion into an environment action or an agent-side tool call answered without an environment step.

What an episode's last `info` says: `success` (the checker's verdict; default: the last reward > 0), or
`checker: False` when the environment has no checker (any page, SEAgent's setting): the trajectory's `success` is
then None until a reward model judges it, and a judge's agreement is not measured against it.

Sampling is seeded per episode: a request's `seed` (the trainer derives it from the run's seed, the batch, the
group and the sample, `tasks.batch_seed`) seeds each of its turns (`batch_seed(seed, turn, "turn")`), and a
backend samples each seeded prompt from its own generator. An episode's tokens then depend on its seed and the
weights, not on which worker ran it or which other prompts shared the engine's batch: a run with several workers
is reproducible.

Token bookkeeping: each step records the exact prompt ids the engine saw and the response ids and
log-probabilities it returned, with the engine's weight version. Environment and tool text only ever appears
inside later prompts, so it is never a trained token.

`RolloutWorker` is the Ray actor around runners; its `generate` goes to one engine actor, so an episode's turns
stay on one engine (prefix-cache reuse in vLLM). It is a threaded actor: each concurrent `run` call (an async
trainer keeps several batches in flight) gets its own set of environments.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium
from transformers import PreTrainedTokenizerBase

from raygent.platform.contracts import Observation, Step, Task, Trajectory
from raygent.platform.plugins import Component, build
from raygent.platform.rl.agent_loop import AgentLoop, ChatLoop, EnvAction, LoopContext, ToolResult
from raygent.platform.rl.tasks import batch_seed
from raygent.policies.backends.base import Completion, SamplingParams
from raygent.policies.prompts import PromptFormat

Generate = Callable[[list[list[int]], SamplingParams], list[Completion]]
EnvFactory = Callable[[], gymnasium.Env]
LoopFactory = Callable[[Task, Any, LoopContext], AgentLoop]


@dataclass(frozen=True)
class EpisodeRequest:
    """One episode to run: the task, the GRPO group it belongs to, its index in the group, and the seed of its
    sampling (None: the engine's global generator)."""

    task: Task
    group_id: str
    index: int = 0
    seed: int | None = None


class EnvironmentFailure(RuntimeError):
    """An environment call raised or passed its deadline (an infrastructure failure, not the agent's)."""


@dataclass
class _Episode:
    request: EpisodeRequest
    attempt: int
    loop: AgentLoop
    started: float
    steps: list[Step] = field(default_factory=list)
    success: bool | None = None
    truncated: bool = False


class _EnvSlot:
    """One environment on its own thread; `call` runs a method there with a deadline."""

    def __init__(self, factory: EnvFactory) -> None:
        self.factory = factory
        self._pool = cf.ThreadPoolExecutor(max_workers=1)
        self.env: gymnasium.Env | None = None

    def submit(self, method: str, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        """Starts `env.method(...)` on this slot's thread (building the environment first if needed)."""

        def run() -> Any:
            if self.env is None:
                self.env = self.factory()
            return getattr(self.env, method)(*args, **kwargs)

        return self._pool.submit(run)

    def wait(self, future: cf.Future[Any], timeout: float, method: str) -> Any:
        """The result of a submitted call; a deadline passed or an exception abandons the environment."""
        try:
            return future.result(timeout=max(timeout, 0.001))
        except cf.TimeoutError:
            self.abandon()
            raise EnvironmentFailure(f"environment {method} passed its deadline ({timeout:.1f} s)") from None
        except Exception as error:
            self.abandon()
            raise EnvironmentFailure(f"environment {method} raised {type(error).__name__}: {error}") from error

    def abandon(self) -> None:
        """Drop this environment (its thread may be stuck) and start over with a fresh thread and instance."""
        old_env, old_pool = self.env, self._pool
        self.env, self._pool = None, cf.ThreadPoolExecutor(max_workers=1)
        if old_env is not None:
            old_pool.submit(_close_quietly, old_env)
        old_pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        if self.env is not None:
            try:
                self._pool.submit(_close_quietly, self.env).result(timeout=10)
            except Exception:  # closing is best effort
                pass
        self._pool.shutdown(wait=False, cancel_futures=True)


def _close_quietly(env: gymnasium.Env) -> None:
    try:
        env.close()
    except Exception:  # the environment is being discarded
        pass


@dataclass
class RolloutStats:
    episodes: int = 0
    infra_failures: int = 0
    env_restarts: int = 0
    turns: int = 0
    generate_s: float = 0.0
    env_s: float = 0.0
    tokens: int = 0


class EpisodeRunner:
    """Runs episodes of `EpisodeRequest`s over `n_envs` environments (see the module docstring)."""

    def __init__(
        self,
        env_factory: EnvFactory,
        n_envs: int,
        tokenizer: PreTrainedTokenizerBase,
        prompt_format: PromptFormat,
        generate: Generate,
        *,
        max_turns: int = 8,
        episode_timeout_s: float = 120.0,
        max_attempts: int = 3,
        agent: LoopFactory = ChatLoop,
    ) -> None:
        if n_envs < 1 or max_turns < 1 or max_attempts < 1:
            raise ValueError("n_envs, max_turns and max_attempts must be >= 1")
        self.slots = [_EnvSlot(env_factory) for _ in range(n_envs)]
        self.tokenizer = tokenizer
        self.prompt_format = prompt_format
        self.agent = agent
        self.context = LoopContext(tokenizer, prompt_format)
        self.generate = generate
        self.max_turns = max_turns
        self.episode_timeout_s = episode_timeout_s
        self.max_attempts = max_attempts
        self.stats = RolloutStats()
        self._params = SamplingParams()

    def run(self, requests: Sequence[EpisodeRequest], params: SamplingParams) -> list[Trajectory]:
        """One trajectory per request, in request order."""
        self._params = params
        queue: deque[tuple[EpisodeRequest, int]] = deque((request, 1) for request in requests)
        results: dict[int, Trajectory] = {}
        order = {id(request): position for position, request in enumerate(requests)}
        running: dict[int, _Episode] = {}
        while queue or running:
            self._fill(running, queue, results, order)
            if running:
                self._turn(running, queue, results, order)
        return [results[position] for position in range(len(requests))]

    def close(self) -> None:
        for slot in self.slots:
            slot.close()

    # -- internals --------------------------------------------------------------------------------------------

    def _fill(
        self,
        running: dict[int, _Episode],
        queue: deque[tuple[EpisodeRequest, int]],
        results: dict[int, Trajectory],
        order: dict[int, int],
    ) -> None:
        """Start queued episodes on every free slot, resetting those environments at once (a browser reset costs
        far more than a step); a failed reset is retried on the next round, or recorded once out of attempts."""
        while queue and len(running) < len(self.slots):
            started = time.perf_counter()
            resets = []
            for slot_index, slot in enumerate(self.slots):
                if slot_index in running or not queue:
                    continue
                request, attempt = queue.popleft()
                resets.append((slot_index, request, attempt, slot.submit("reset", options={"task": request.task})))
            for slot_index, request, attempt, future in resets:
                remaining = self.episode_timeout_s - (time.perf_counter() - started)
                try:
                    observation, _ = self.slots[slot_index].wait(future, remaining, "reset")
                except EnvironmentFailure:
                    self.stats.env_restarts += 1
                    if attempt >= self.max_attempts:
                        results[order[id(request)]] = self._failed(request, attempt)
                    else:
                        queue.appendleft((request, attempt + 1))
                    continue
                loop = self.agent(request.task, observation, self.context)
                running[slot_index] = _Episode(request, attempt, loop, started)

    def _failed(self, request: EpisodeRequest, attempt: int) -> Trajectory:
        self.stats.infra_failures += 1
        self.stats.episodes += 1
        return Trajectory(
            task=request.task,
            steps=[],
            success=None,
            policy_version=0,
            group_id=request.group_id,
            infra_failure=True,
            infra_retries=attempt - 1,
        )

    def _turn(
        self,
        running: dict[int, _Episode],
        queue: deque[tuple[EpisodeRequest, int]],
        results: dict[int, Trajectory],
        order: dict[int, int],
    ) -> None:
        slots = sorted(running)
        prompts = [running[index].loop.prompt().ids for index in slots]
        start = time.perf_counter()
        completions = self.generate(prompts, self._turn_params([running[index] for index in slots]))
        self.stats.generate_s += time.perf_counter() - start
        self.stats.turns += 1
        start = time.perf_counter()
        # every environment steps at once on its own thread (browsers wait on I/O); results are read in order
        seen = {index: running[index].loop.observation() for index in slots}
        moves = {index: running[index].loop.act(c.text) for index, c in zip(slots, completions, strict=True)}
        pending = {
            index: self.slots[index].submit("step", move.text)
            for index, move in moves.items()
            if isinstance(move, EnvAction)
        }
        for index, prompt, completion in zip(slots, prompts, completions, strict=True):
            episode = running[index]
            self.stats.tokens += len(completion.response_ids)
            move = moves[index]
            if isinstance(move, ToolResult):
                outcome = self._tool_step(episode, seen[index], prompt, completion, move)
            else:
                outcome = self._step(self.slots[index], pending[index], episode, seen[index], prompt, completion)
            if outcome == "continue":
                continue
            del running[index]
            if outcome == "retry":
                if episode.attempt >= self.max_attempts:
                    results[order[id(episode.request)]] = self._failed(episode.request, episode.attempt)
                else:
                    queue.appendleft((episode.request, episode.attempt + 1))
            else:
                self.stats.episodes += 1
                results[order[id(episode.request)]] = Trajectory(
                    task=episode.request.task,
                    steps=episode.steps,
                    success=episode.success,
                    policy_version=min(step.policy_version for step in episode.steps),
                    group_id=episode.request.group_id,
                    infra_retries=episode.attempt - 1,
                    truncated=episode.truncated,
                )
        self.stats.env_s += time.perf_counter() - start

    def _turn_params(self, episodes: list[_Episode]) -> SamplingParams:
        """The run's sampling parameters with each episode's seed for this turn, when every episode has one."""
        if self._params.greedy or any(episode.request.seed is None for episode in episodes):
            return self._params
        turns = [batch_seed(e.request.seed, len(e.steps), "turn") for e in episodes if e.request.seed is not None]
        return self._params.unseeded().model_copy(update={"seeds": tuple(turns)})

    def _tool_step(
        self, episode: _Episode, seen: Observation, prompt: list[int], completion: Completion, move: ToolResult
    ) -> str:
        """Record an agent-side tool call (no environment step): "continue", or "done" at the turn limit."""
        episode.steps.append(
            Step(
                observation=seen,
                prompt_ids=prompt,
                response_ids=completion.response_ids,
                logprobs=completion.logprobs,
                action=completion.text,
                tool_call=True,
                info={"finish_reason": completion.finish_reason, "tool": move.name, "tool_result": move.result},
                policy_version=completion.policy_version,
            )
        )
        episode.truncated = episode.truncated or completion.finish_reason == "length"
        if len(episode.steps) >= self.max_turns:
            episode.success, episode.truncated = False, True
            return "done"
        return "continue"

    def _step(
        self,
        slot: _EnvSlot,
        future: cf.Future[Any],
        episode: _Episode,
        seen: Observation,
        prompt: list[int],
        completion: Completion,
    ) -> str:
        """Record one response's step: "continue", "done" or "retry" (the environment failed)."""
        remaining = self.episode_timeout_s - (time.perf_counter() - episode.started)
        try:
            observation, reward, terminated, truncated, info = slot.wait(future, remaining, "step")
        except EnvironmentFailure:
            self.stats.env_restarts += 1
            return "retry"
        failure = info.get("failure")
        episode.steps.append(
            Step(
                observation=seen,
                prompt_ids=prompt,
                response_ids=completion.response_ids,
                logprobs=completion.logprobs,
                action=completion.text,
                reward=float(reward),
                valid_action=bool(info.get("valid_action", True)),
                failure=failure if isinstance(failure, bool) else None,
                info={"finish_reason": completion.finish_reason, **_plain(info)},
                policy_version=completion.policy_version,
            )
        )
        episode.loop.observe(observation, float(reward), info)
        episode.truncated = episode.truncated or completion.finish_reason == "length"
        if terminated or truncated or len(episode.steps) >= self.max_turns:
            verdict = info.get("success", float(reward) > 0) if info.get("checker", True) else None
            episode.success = None if verdict is None else bool(verdict)
            return "done"
        return "continue"


def _plain(info: dict[str, Any]) -> dict[str, Any]:
    """The JSON-friendly part of an environment's info dict."""
    return {k: v for k, v in info.items() if isinstance(v, str | int | float | bool) or v is None}


class RolloutWorker:
    """The rollout actor (wrap with `ray.remote`): an `EpisodeRunner` whose engine is an `InferenceEngine` actor.

    `env_id`/`env_kwargs` build each environment with `gymnasium.make` after calling `register` (a
    `"module:attr"` function that registers the id in this process). The environment keeps the wrappers `make`
    puts on it (the registration's and gymnasium's own: order enforcing, the passive checker), so an environment
    that is a wrapper (`CompactWebEnv`) or registers wrappers steps as a gymnasium user would see it.
    """

    def __init__(
        self,
        env_id: str,
        env_kwargs: dict[str, Any],
        register: str,
        n_envs: int,
        tokenizer_path: str,
        prompt_format: PromptFormat,
        engine: Any,
        *,
        max_turns: int,
        episode_timeout_s: float,
        max_attempts: int,
        agent: Component | None = None,
        generate_timeout_s: float = 600.0,
    ) -> None:
        from raygent.platform.config import load_entry
        from raygent.platform.rl.engine import EngineClient
        from raygent.policies.loading import load_tokenizer

        load_entry(register)()
        self.engine = EngineClient(engine, timeout_s=generate_timeout_s)
        tokenizer = load_tokenizer(tokenizer_path)
        loop: LoopFactory = ChatLoop if agent is None else functools.partial(build, agent, AgentLoop)
        self._make_runner = lambda: EpisodeRunner(
            lambda: gymnasium.make(env_id, **env_kwargs),
            n_envs,
            tokenizer,
            prompt_format,
            self.engine.generate,
            max_turns=max_turns,
            episode_timeout_s=episode_timeout_s,
            max_attempts=max_attempts,
            agent=loop,
        )
        self._idle: list[EpisodeRunner] = []
        self._runners: list[EpisodeRunner] = []
        self._lock = threading.Lock()

    def run(self, requests: list[EpisodeRequest], params: SamplingParams) -> list[Trajectory]:
        """Runs the episodes on an idle set of environments; concurrent calls (an async trainer's batches in
        flight) each get their own set, so one batch's environment waits overlap another's generation."""
        with self._lock:
            runner = self._idle.pop() if self._idle else self._make_runner()
            if runner not in self._runners:
                self._runners.append(runner)
        try:
            return runner.run(requests, params)
        finally:
            with self._lock:
                self._idle.append(runner)

    def stats(self) -> dict[str, Any]:
        """Counters summed over this worker's environment sets."""
        totals: dict[str, Any] = {}
        for runner in self._runners:
            for key, value in runner.stats.__dict__.items():
                totals[key] = totals.get(key, 0) + value
        return totals

    def pid(self) -> int:
        import os

        return os.getpid()
