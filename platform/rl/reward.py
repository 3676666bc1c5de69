"""The judge stage: reward models turn collected trajectories into `Judgement`s between collecting and learning.

    reward:
      entry: "raygent.rewards.wsm:WorldStateModel"   # a class whose instances have judge(trajectories)
      num_actors: 2                                  # a pool of Ray actors, each holding one instance
      resources: {num_cpus: 1}                       # Ray options of each actor
      kwargs: {...}                                  # the class's constructor arguments (checked against its
                                                     # `Settings` when the config is: `platform.plugins`)
      mode: replace                                  # replace: the judge's score and success are the episode's
                                                     # add: its score is added to the environment's reward

Without a `reward` section the environment's own checker judges (`EnvironmentChecker`, in process: it reads the
verdict the environment already gave). The trainer stores each judgement on its trajectory (`Trajectory.judgement`,
`score`, per-step `Step.failure` from the judge's step labels or first error step) and logs `judge/*`; when the
environment also gave a verdict, `judge/agreement` (success decisions that match the checker's) and
`judge/first_error_accuracy` (on failed episodes whose steps the environment labelled) measure the judge against it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import ray
from pydantic import Field

from raygent.platform.contracts import Judgement, Trajectory
from raygent.platform.plugins import Component, build


@runtime_checkable
class RewardModel(Protocol):
    """Anything that judges trajectories: one `Judgement` per trajectory, in order."""

    def judge(self, trajectories: Sequence[Trajectory]) -> list[Judgement]: ...


class RewardSettings(Component):
    """The `reward` section of an agent run: the reward model as a component, and its pool (module docstring)."""

    num_actors: int = Field(default=1, ge=1)
    resources: dict[str, Any] = Field(default_factory=lambda: {"num_cpus": 0})
    mode: Literal["replace", "add"] = "replace"


class EnvironmentChecker:
    """The default reward model: the environment's own verdict (success and summed step rewards) as a judgement,
    with the first step the environment marked as a failure, if it marked any."""

    def judge(self, trajectories: Sequence[Trajectory]) -> list[Judgement]:
        return [
            Judgement(
                score=t.total_reward,
                success=bool(t.success),
                reason="environment checker",
                first_error_step=first_failure(t),
            )
            for t in trajectories
        ]


def first_failure(trajectory: Trajectory) -> int | None:
    """The index of the first step marked `failure=True`, or None."""
    return next((i for i, step in enumerate(trajectory.steps) if step.failure), None)


class RewardActor:
    """One reward model in a Ray actor (`ray.remote(RewardActor)`), built from its component."""

    def __init__(self, component: Component) -> None:
        self.model: RewardModel = build(component, RewardModel)

    def judge(self, trajectories: list[Trajectory]) -> list[Judgement]:
        judgements = list(self.model.judge(trajectories))
        if len(judgements) != len(trajectories):
            raise ValueError(f"reward model returned {len(judgements)} judgements for {len(trajectories)} trajectories")
        return judgements


class JudgeStage:
    """Judges a batch on the pool (or in process with the checker) and applies the judgements."""

    def __init__(self, settings: RewardSettings | None) -> None:
        self.settings = settings
        self.checker = EnvironmentChecker()
        self.actors: list[Any] = []
        if settings is not None:
            actor = ray.remote(RewardActor).options(**settings.resources)
            self.actors = [actor.remote(settings) for _ in range(settings.num_actors)]

    def judge(self, trajectories: Sequence[Trajectory]) -> list[Judgement]:
        """The raw judgements of `trajectories` (split round robin over the pool's actors)."""
        if not self.actors:
            return self.checker.judge(trajectories)
        chunks = [list(trajectories[i :: len(self.actors)]) for i in range(len(self.actors))]
        answers = ray.get([a.judge.remote(c) for a, c in zip(self.actors, chunks, strict=True) if c])
        judgements: list[Judgement | None] = [None] * len(trajectories)
        for index, answer in enumerate(answers):
            judgements[index :: len(self.actors)] = answer
        return [j for j in judgements if j is not None]

    def __call__(self, trajectories: Sequence[Trajectory]) -> tuple[list[Trajectory], dict[str, float]]:
        """The trajectories with their judgements applied (infrastructure failures pass unjudged) and `judge/*`."""
        begin = time.perf_counter()
        agent = [t for t in trajectories if not t.infra_failure]
        judgements = iter(self.judge(agent))
        mode = self.settings.mode if self.settings else "replace"
        judged = [t if t.infra_failure else apply_judgement(t, next(judgements), mode) for t in trajectories]
        stats: dict[str, float] = {}
        if self.actors:  # a model other than the checker: measure it against the checker
            stats = judge_metrics(agent, [t for t in judged if not t.infra_failure])
        stats["timing/judge"] = time.perf_counter() - begin
        return judged, stats

    def shutdown(self) -> None:
        for actor in self.actors:
            ray.kill(actor)


def apply_judgement(trajectory: Trajectory, judgement: Judgement, mode: Literal["replace", "add"]) -> Trajectory:
    """The trajectory with `judgement`: `replace` takes its score and success, `add` adds its score to the
    environment's reward (the environment's success stands). Per-step failure labels come from the judge's
    first error step (that step alone is the failure action, SEAgent's reading) or else its step labels. A
    judgement that is an infrastructure failure makes the trajectory one (and changes nothing else)."""
    if judgement.infra_failure:
        return trajectory.model_copy(update={"judgement": judgement, "infra_failure": True})
    steps = trajectory.steps
    if judgement.first_error_step is not None and judgement.first_error_step < len(steps):
        steps = [s.model_copy(update={"failure": i == judgement.first_error_step}) for i, s in enumerate(steps)]
    elif judgement.step_labels is not None and len(judgement.step_labels) == len(steps):
        labels = judgement.step_labels
        steps = [s.model_copy(update={"failure": label == "error"}) for s, label in zip(steps, labels, strict=True)]
    if mode == "replace":
        score, success = judgement.score, judgement.success
    else:
        score = trajectory.total_reward + judgement.score
        success = trajectory.success if trajectory.success is not None else judgement.success
    return trajectory.model_copy(update={"steps": steps, "judgement": judgement, "score": score, "success": success})


def judge_metrics(before: Sequence[Trajectory], after: Sequence[Trajectory]) -> dict[str, float]:
    """`judge/success`, `judge/score`, and against the environment's checker (`before`, same order):
    `judge/agreement` and `judge/first_error_accuracy` where the checker gave a verdict / labelled steps."""
    stats: dict[str, float] = {}
    if not after:
        return stats
    failed = sum(t.judgement is not None and t.judgement.infra_failure for t in after)
    if failed:
        stats["judge/infra_failures"] = float(failed)
    pairs = [
        (b, a.judgement)
        for b, a in zip(before, after, strict=True)
        if a.judgement is not None and not a.judgement.infra_failure
    ]
    if not pairs:
        return stats
    stats["judge/success"] = sum(j.success for _, j in pairs) / len(pairs)
    stats["judge/score"] = sum(j.score for _, j in pairs) / len(pairs)
    checked = [(b, j) for b, j in pairs if b.success is not None]
    if checked:
        stats["judge/agreement"] = sum(bool(b.success) == j.success for b, j in checked) / len(checked)
    located = [(b, j) for b, j in checked if not b.success and any(s.failure is not None for s in b.steps)]
    if located:
        stats["judge/first_error_accuracy"] = sum(first_failure(b) == j.first_error_step for b, j in located) / len(
            located
        )
    return stats
