"""Task sources: where each training batch's tasks come from, and how they react to the judged results.

    tasks:
      entry: raygent.platform.rl.tasks:AdaptiveSource      # default: StaticSource
      kwargs: {candidates: 4, window: 64}                  # checked against the class's `Settings` (platform.plugins)

A source is a component (`platform.plugins`), built as `cls(task_fn, split=..., seed=..., batch_size=..., stage=...,
task_kwargs=..., **kwargs)`, where `task_fn` is the environment's task function (`env.tasks`: `f(split, seed, n,
**task_kwargs) -> list[Task]`).
The trainer calls `next(index)` for batch `index`, `observe(judged trajectories)` after the judge stage, and saves
`state()` in each checkpoint (`load_state` on resume). A curriculum generator, an adaptive sampler or an
augmentation policy is a source.

- `StaticSource` (today's stream): batch i = `task_fn(split, crc(stage, seed, i), n)`, a pure function of the
  index, so a resumed run consumes exactly the batches an uninterrupted one would (no batch repeated or skipped).
- `AdmissionGate`: wraps any source (`kwargs.source`, spelled like this section) and admits a task only while its
  template's running success rate lies in the band [`low`, `high`] (prime-rl's and the MiniWoB++ study's 20–80 %):
  templates the policy always solves or has never solved are evicted once `min_outcomes` of their episodes were
  seen, and re-admitted when the window moves back into the band. A template whose rate falls below the band
  after being in it stays admitted: the policy is forgetting it. (Without that rule SmolLM2's GRPO batches held
  only `larger` once `smaller` fell below 0.2, and it learnt "answer the larger number": `smaller` 12/23 → 1/23.)
  It draws `candidates` × n tasks from the inner source and keeps the first n admitted (filling up with the
  evicted templates closest to the band when too few are); its state (outcomes, peaks and the inner source's
  state) is checkpointed, and `metrics()` reports the band, the admitted share and the evicted templates for each
  step's record.
- `AdaptiveSource`: draws `candidates` × n tasks the same way and keeps n of them, sampling each task's template
  with weight p(1 − p) + `floor` from its recent success rate p (templates never tried count as p = ½): templates
  the policy neither always solves nor never solves get the batch. Its state (the recent outcomes) is checkpointed;
  a resumed run draws the batches that were in flight again from the checkpointed state.
"""

from __future__ import annotations

import random
import zlib
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from raygent.platform.config import ClassEntry, load_entry, refuse_renamed
from raygent.platform.contracts import Task, Trajectory
from raygent.platform.plugins import Component, NoSettings, build

TaskFunction = Callable[..., list[Task]]
"""`task_fn(split: str, seed: int, n: int, **task_kwargs) -> list[Task]` (the `env.tasks` entry)."""


@runtime_checkable
class TaskSource(Protocol):
    def next(self, index: int) -> list[Task]:
        """The tasks of training batch `index` (the trainer asks in increasing order, possibly ahead)."""
        ...

    def observe(self, trajectories: Sequence[Trajectory]) -> None:
        """The judged trajectories of a trained batch (infrastructure failures excluded)."""
        ...

    def state(self) -> dict[str, Any]: ...

    def load_state(self, state: dict[str, Any]) -> None: ...


class TaskSettings(Component):
    """The `tasks` section of an agent run: the source class and its keyword arguments (`tasks.source` is the old
    spelling of `tasks.entry`)."""

    entry: ClassEntry = "raygent.platform.rl.tasks:StaticSource"

    @model_validator(mode="before")
    @classmethod
    def _old_spelling(cls, data: Any) -> Any:
        refuse_renamed(data, {"source": "entry"})
        return data


HELDOUT_SEED_OFFSET = 7919


def heldout_seed(seed: int) -> int:
    """The seed a run draws its held-out tasks from (`env.tasks(env.eval_split, heldout_seed(trainer.seed), ...)`):
    the trainer's own evaluation set, and a job's extra evaluation sets that must match it."""
    return seed + HELDOUT_SEED_OFFSET


def batch_seed(seed: int, index: int, stage: str = "train") -> int:
    """A seed for batch `index` that differs between stages and runs (CRC-32 of the three)."""
    return zlib.crc32(f"{stage}:{seed}:{index}".encode())


def template_of(task: Task) -> str:
    """A task's template: `params["template"]` when given, else its id without the last `/` or `:` field
    (`media_player/mute/12` → `media_player/mute`, `toolcalc:compare:3,5` → `toolcalc:compare`)."""
    if isinstance(task.params.get("template"), str):
        return str(task.params["template"])
    cut = max(task.id.rfind("/"), task.id.rfind(":"))
    return task.id[:cut] if cut > 0 else task.id


def record_outcomes(outcomes: dict[str, deque[bool]], trajectories: Sequence[Trajectory], window: int) -> None:
    """Appends each judged trajectory's success to its template's last `window` outcomes."""
    for trajectory in trajectories:
        if not trajectory.infra_failure and trajectory.success is not None:
            seen = outcomes.setdefault(template_of(trajectory.task), deque(maxlen=window))
            seen.append(bool(trajectory.success))


def load_outcomes(state: dict[str, Any], window: int) -> dict[str, deque[bool]]:
    """The per-template outcomes a source's `state()` saved under `outcomes`."""
    return {
        template: deque((bool(x) for x in seen), maxlen=window) for template, seen in state.get("outcomes", {}).items()
    }


class StaticSource:
    """Batch i is a pure function of (seed, stage, i): see the module docstring."""

    Settings: type[BaseModel] = NoSettings

    def __init__(
        self,
        task_fn: TaskFunction,
        *,
        split: str,
        seed: int,
        batch_size: int,
        stage: str = "train",
        task_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.task_fn, self.split, self.seed, self.batch_size, self.stage = task_fn, split, seed, batch_size, stage
        self.task_kwargs = dict(task_kwargs or {})

    def draw(self, index: int, n: int) -> list[Task]:
        tasks = self.task_fn(self.split, batch_seed(self.seed, index, self.stage), n, **self.task_kwargs)
        if len(tasks) != n:
            raise ValueError(f"task source returned {len(tasks)} tasks, expected {n}")
        return tasks

    def next(self, index: int) -> list[Task]:
        return self.draw(index, self.batch_size)

    def observe(self, trajectories: Sequence[Trajectory]) -> None:
        return None

    def state(self) -> dict[str, Any]:
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        return None


class AdaptiveSource(StaticSource):
    """Templates sampled by recent success (see the module docstring). `window`: outcomes remembered per template."""

    class Settings(BaseModel):
        model_config = ConfigDict(frozen=True, extra="forbid")

        candidates: int = Field(default=4, ge=1)
        window: int = Field(default=64, ge=1)
        floor: float = Field(default=0.02, ge=0)

    def __init__(
        self,
        task_fn: TaskFunction,
        *,
        candidates: int = 4,
        window: int = 64,
        floor: float = 0.02,
        **kwargs: Any,
    ) -> None:
        super().__init__(task_fn, **kwargs)
        self.Settings(candidates=candidates, window=window, floor=floor)
        self.candidates, self.window, self.floor = candidates, window, floor
        self.outcomes: dict[str, deque[bool]] = {}

    def success_rate(self, template: str) -> float:
        seen = self.outcomes.get(template)
        return sum(seen) / len(seen) if seen else 0.5

    def weight(self, template: str) -> float:
        p = self.success_rate(template)
        return p * (1.0 - p) + self.floor

    def next(self, index: int) -> list[Task]:
        pool = self.draw(index, self.batch_size * self.candidates)
        rng = random.Random(batch_seed(self.seed, index, f"{self.stage}/adaptive"))
        # weighted sampling without replacement (Efraimidis–Spirakis keys u^(1/w)); weight 0 only fills up
        keys = [rng.random() for _ in pool]
        weights = [self.weight(template_of(t)) for t in pool]
        order = sorted(range(len(pool)), key=lambda i: keys[i] ** (1.0 / weights[i]) if weights[i] > 0 else -1.0)
        return [pool[i] for i in reversed(order[-self.batch_size :])]

    def observe(self, trajectories: Sequence[Trajectory]) -> None:
        record_outcomes(self.outcomes, trajectories, self.window)

    def state(self) -> dict[str, Any]:
        return {"outcomes": {template: list(seen) for template, seen in self.outcomes.items()}}

    def load_state(self, state: dict[str, Any]) -> None:
        self.outcomes = load_outcomes(state, self.window)


class GateSettings(BaseModel):
    """`tasks.kwargs` of `AdmissionGate`: checked when the config is, and what the gate is built from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: TaskSettings | None = None
    low: float = Field(default=0.2, ge=0, le=1)
    high: float = Field(default=0.8, ge=0, le=1)
    window: int = Field(default=32, ge=1)
    min_outcomes: int = Field(default=8, ge=1)
    candidates: int = Field(default=4, ge=1)

    @model_validator(mode="after")
    def _band(self) -> GateSettings:
        if self.low > self.high:
            raise ValueError(f"the band needs low <= high, got low={self.low}, high={self.high}")
        if self.source is not None and load_entry(self.source.entry) is AdmissionGate:
            raise ValueError("source: an AdmissionGate cannot wrap another AdmissionGate")
        return self


class AdmissionGate:
    """The success-band gate over any source (see the module docstring)."""

    Settings = GateSettings

    def __init__(self, task_fn: TaskFunction, *, batch_size: int, **kwargs: Any) -> None:
        """`kwargs`: the gate's own (`GateSettings`: its defaults and bounds, the ones the config is checked
        against), then what `make_source` hands every source (split, seed, stage, task_kwargs)."""
        own = {name: kwargs.pop(name) for name in GateSettings.model_fields if name in kwargs}
        gate = GateSettings.model_validate(own)
        inner = gate.source or TaskSettings()
        self.inner = make_source(inner, task_fn, batch_size=batch_size * gate.candidates, **kwargs)
        self.batch_size, self.low, self.high = batch_size, gate.low, gate.high
        self.window, self.min_outcomes = gate.window, gate.min_outcomes
        self.outcomes: dict[str, deque[bool]] = {}
        self.peak: dict[str, float] = {}
        """Each template's highest running success rate so far: one that fell below the band is being forgotten,
        not too hard, and stays admitted."""
        self.last: dict[str, float] = {}

    def success_rate(self, template: str) -> float | None:
        """The template's running success rate, None until `min_outcomes` episodes of it were seen."""
        seen = self.outcomes.get(template, ())
        return sum(seen) / len(seen) if len(seen) >= self.min_outcomes else None

    def distance(self, template: str) -> float:
        """How far outside the band the template's rate is (0: admitted)."""
        rate = self.success_rate(template)
        if rate is None:
            return 0.0
        if rate < self.low and self.peak.get(template, 0.0) >= self.low:  # forgetting it: keep training on it
            return 0.0
        return max(self.low - rate, rate - self.high, 0.0)

    def next(self, index: int) -> list[Task]:
        pool = self.inner.next(index)
        distances = [self.distance(template_of(t)) for t in pool]
        order = sorted(range(len(pool)), key=lambda i: distances[i])  # stable: the inner source's order within ties
        chosen = order[: self.batch_size]
        admitted = sum(distances[i] == 0.0 for i in chosen)
        evicted = {template_of(t) for t, d in zip(pool, distances, strict=True) if d > 0}
        self.last = {
            "tasks/admitted_fraction": admitted / max(len(chosen), 1),
            "tasks/evicted_templates": float(len(evicted)),
            "tasks/band_low": self.low,
            "tasks/band_high": self.high,
        }
        return [pool[i] for i in chosen]

    def metrics(self) -> dict[str, float]:
        """The gate's numbers for the last batch it made (admitted share, evicted templates, band)."""
        return dict(self.last)

    def observe(self, trajectories: Sequence[Trajectory]) -> None:
        record_outcomes(self.outcomes, trajectories, self.window)
        for template in {template_of(t.task) for t in trajectories}:
            rate = self.success_rate(template)
            if rate is not None:
                self.peak[template] = max(self.peak.get(template, 0.0), rate)
        self.inner.observe(trajectories)

    def state(self) -> dict[str, Any]:
        return {
            "outcomes": {template: list(seen) for template, seen in self.outcomes.items()},
            "peak": dict(self.peak),
            "inner": self.inner.state(),
        }

    def load_state(self, state: dict[str, Any]) -> None:
        self.outcomes = load_outcomes(state, self.window)
        self.peak = {template: float(rate) for template, rate in state.get("peak", {}).items()}
        self.inner.load_state(state.get("inner", {}))


def make_source(
    settings: TaskSettings,
    task_fn: TaskFunction,
    *,
    split: str,
    seed: int,
    batch_size: int,
    stage: str = "train",
    task_kwargs: dict[str, Any] | None = None,
) -> TaskSource:
    """The configured source over `task_fn`."""
    source: TaskSource = build(
        settings,
        TaskSource,
        task_fn,
        split=split,
        seed=seed,
        batch_size=batch_size,
        stage=stage,
        task_kwargs=task_kwargs,
    )
    return source
