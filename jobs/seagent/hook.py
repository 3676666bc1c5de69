"""The SEAgent run's trainer hooks: `JudgedExamples` for the report; `JudgedSuccesses` and `Distill`, a specialist's
successes handed to a generalist.

`JudgedExamples` keeps the latest judged training trajectories for the report.

The trainer logs every judgement (`metrics.jsonl`, stage `judge`) but keeps no trajectory; the report shows a
few whole: instruction, each step's screen (compact text) and action, the WSM's caption and label of each step,
the final screen, the verdict and the first error step. Half of the kept ones are judged successes where there
are some. Nothing is changed: the hook returns the trajectories it is given.

`JudgedSuccesses` keeps every training trajectory of a specialist that the World State Model judged done, as a
demonstration (the screens the agent read and the actions it took), the `per_instruction` shortest distinct ones
per instruction; `Distill` fine-tunes on such demonstrations, given per app, before the first RL step
(`on_start`): `steps` SFT steps of `batch` each, drawn from the apps in turn so that no app crowds out the others.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from raygent.environments.web.agent.hindsight import Demonstration
from raygent.platform.contracts import Task, Trajectory
from raygent.platform.rl.batch import samples_from_demonstration
from raygent.platform.rl.hooks import HookContext, TrainerHook
from raygent.platform.rl.tasks import batch_seed
from raygent.rewards.seagent.wsm import screens


def describe(step: int, trajectory: Trajectory) -> dict[str, Any]:
    judgement = trajectory.judgement
    info = judgement.info if judgement is not None else {}
    texts = screens(trajectory)
    return {
        "step": step,
        "instruction": trajectory.task.instruction,
        "actions": [s.action for s in trajectory.steps],
        "screens": texts,
        "captions": list(info.get("captions") or []),
        "labels": list(judgement.step_labels or []) if judgement is not None else [],
        "success": bool(trajectory.success),
        "first_error_step": judgement.first_error_step if judgement is not None else None,
        "reason": judgement.reason if judgement is not None else "",
    }


class JudgedExamples(TrainerHook):
    def __init__(self, keep: int = 8) -> None:
        self.keep = keep
        self.kept: list[dict[str, Any]] = []

    def on_trajectories(self, step: int, trajectories: list[Trajectory]) -> list[Trajectory]:
        if self.keep:
            judged = [t for t in trajectories if not t.infra_failure and t.judgement is not None]
            wins = [t for t in judged if t.success][: (self.keep + 1) // 2]
            losses = [t for t in judged if not t.success][: self.keep - len(wins)]
            self.kept = [describe(step, t) for t in (*wins, *losses)] or self.kept
        return trajectories

    def state(self) -> Any:
        return {"kept": self.kept}

    def load_state(self, state: Any) -> None:
        self.kept = list((state or {}).get("kept", []))


class JudgedSuccesses(TrainerHook):
    def __init__(self, per_instruction: int = 4) -> None:
        self.per_instruction = per_instruction
        self.kept: dict[str, list[dict[str, Any]]] = {}
        """instruction → up to `per_instruction` successes (`task`, `turns`), the shortest first."""

    def on_trajectories(self, step: int, trajectories: list[Trajectory]) -> list[Trajectory]:
        for trajectory in trajectories:
            if trajectory.infra_failure or not trajectory.success or not trajectory.steps:
                continue
            turns = [[s.observation.text, s.action] for s in trajectory.steps]
            kept = self.kept.setdefault(trajectory.task.instruction, [])
            if all(k["turns"] != turns for k in kept):
                kept.append({"task": trajectory.task.model_dump(mode="json"), "turns": turns})
                kept.sort(key=lambda k: len(k["turns"]))
                del kept[self.per_instruction :]
        return trajectories

    def demonstrations(self) -> list[Demonstration]:
        return [
            (Task.model_validate(k["task"]), [(str(o), str(a)) for o, a in k["turns"]])
            for kept in self.kept.values()
            for k in kept
        ]

    def state(self) -> Any:
        return {"kept": self.kept}

    def load_state(self, state: Any) -> None:
        self.kept = {key: list(value) for key, value in (state or {}).get("kept", {}).items()}


class Distill(TrainerHook):
    def __init__(self, by_app: Mapping[str, Sequence[Demonstration]], steps: int, batch: int) -> None:
        self.steps, self.batch = steps, batch
        self.by_app = {app: list(demos) for app, demos in sorted(by_app.items()) if demos}

    def draw(self, seed: int) -> list[Demonstration]:
        """`batch` demonstrations, one app's at a time in turn (each app's in a seeded order)."""
        rng = random.Random(seed)
        queues = [rng.sample(demos, len(demos)) for demos in self.by_app.values()]
        drawn: list[Demonstration] = []
        while len(drawn) < self.batch and any(queues):
            for queue in queues:
                if queue and len(drawn) < self.batch:
                    drawn.append(queue.pop())
        return drawn

    def on_start(self, context: HookContext) -> dict[str, float]:
        if not (self.steps and self.by_app):
            return {}
        stats: dict[str, float] = {}
        for step in range(self.steps):
            samples = []
            for task, turns in self.draw(batch_seed(context.seed, step, "distill")):
                samples += samples_from_demonstration(context.tokenizer, context.prompt_format, task, turns)
            stats = context.learner.sft(samples)
        count = float(sum(len(d) for d in self.by_app.values()))
        return {"distill/demonstrations": count, **{f"distill/{k.split('/')[-1]}": v for k, v in stats.items()}}
