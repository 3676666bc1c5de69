"""Accumulation as a trainer hook: after each batch of rollouts, the summarizer's knowledge operations go to the
memory actor; the memory is snapshotted with every checkpoint.

    AgentTrainer(..., hooks=[XSkillHook(actor, summarizer, run_dir, rl=False)])

- `on_trajectories`: groups the batch by task, counts the loops' memory requests (`xskill/context_failed`, ...),
  feeds the shown experiences' usage back (uses, wins), asks the actor for the bank's items of those situations,
  runs the summarizer and applies its operations (the actor consolidates when the library is too large). With
  `rl: false` (XSkill: no weight updates) it returns no trajectories, so the learner does not update and the agent
  stays frozen; with `rl: true` the batch goes on to GRPO: memory and RL in one run.
- `on_eval`: each evaluation set's success, per template, and its memory requests, kept by step.
- `state()` writes the bank to `RUN_DIR/xskill/memory_<step>.json` and returns its name and SHA-256 (saved in the
  checkpoint's `trainer_state.json`, with the run's cumulative counters: context requests, summarized groups);
  `load_state` restores them on resume, and a missing, altered or malformed file
  fails the resume with a `SnapshotError` naming the file.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from raygent.jobs.xskill.memory import MemoryBank
from raygent.jobs.xskill.summarize import Group, Rollout, Summarizer
from raygent.platform.contracts import Trajectory
from raygent.platform.rl.hooks import HookContext, TrainerHook

SNAPSHOT_DIR = "xskill"
STATUSES = ("ok", "empty", "off", "failed", "timeout")


def memory_status(trajectory: Trajectory) -> str:
    """What the loop's memory request gave this episode (`STATUSES`; `none` for a loop without memory)."""
    if not trajectory.steps:
        return "none"
    return str(trajectory.steps[0].observation.info.get("xskill", "none"))


def status_counts(trajectories: Sequence[Trajectory]) -> dict[str, float]:
    counts = Counter(memory_status(t) for t in trajectories if not t.infra_failure)
    return {f"xskill/context_{status}": float(counts.get(status, 0)) for status in STATUSES}


def to_group(trajectories: Sequence[Trajectory]) -> Group:
    """One task's episodes as the summarizer's `Group`."""
    group = Group(trajectories[0].task.instruction)
    for t in trajectories:
        used = str(t.steps[0].observation.info.get("xskill_used", "")) if t.steps else ""
        group.rollouts.append(
            Rollout(
                observations=tuple(s.observation.text for s in t.steps),
                actions=tuple(s.action for s in t.steps),
                success=bool(t.success),
                valid=tuple(s.valid_action for s in t.steps),
                used=tuple(i for i in used.split(",") if i),
            )
        )
    return group


def template_of(trajectory: Trajectory) -> str:
    return str(trajectory.task.params.get("template", trajectory.task.id.rsplit(":", 1)[0]))


class XSkillHook(TrainerHook):
    """The accumulation phase and the memory's snapshots (module docstring). `actor`: the memory actor's handle;
    `summarizer` may be replaced before the run starts (the LM summarizer needs the trainer's engines)."""

    def __init__(self, actor: Any, summarizer: Summarizer, run_dir: Path, rl: bool = False) -> None:
        self.actor, self.summarizer, self.run_dir, self.rl = actor, summarizer, run_dir, rl
        self.step = 0
        self.stats: dict[str, float] = {}
        self.evals: dict[int, dict[str, dict[str, Any]]] = {}

    def on_trajectories(self, step: int, trajectories: list[Trajectory]) -> list[Trajectory]:
        import ray

        self.step = step
        episodes = [t for t in trajectories if not t.infra_failure]
        by_group: dict[str, list[Trajectory]] = defaultdict(list)
        for t in episodes:
            by_group[t.group_id].append(t)
        groups = [to_group(members) for members in by_group.values()]
        usage: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for group in groups:
            for rollout in group.rollouts:
                for item in rollout.used:
                    usage[item][0] += 1
                    usage[item][1] += int(rollout.success)
        view = ray.get(self.actor.view.remote(sorted({g.situation for g in groups})))
        ops = self.summarizer.summarize(groups, view)
        applied = ray.get(
            self.actor.apply.remote([op.model_dump() for op in ops], {k: tuple(v) for k, v in usage.items()})
        )
        self.stats = {
            "xskill/rollout_success": sum(bool(t.success) for t in episodes) / max(len(episodes), 1),
            "xskill/ops_emitted": float(len(ops)),
            **{f"xskill/applied/{k}": float(v) for k, v in applied.items()},
            **status_counts(episodes),
            **{f"xskill/{k}": float(v) for k, v in getattr(self.summarizer, "stats", {}).items()},
        }
        return trajectories if self.rl else []

    def after_update(self, step: int, trajectories: Sequence[Trajectory], context: HookContext) -> dict[str, float]:
        import ray

        return {**self.stats, **ray.get(self.actor.stats.remote())}

    def on_eval(self, step: int, sets: dict[str, list[Trajectory]]) -> None:
        record: dict[str, dict[str, Any]] = {}
        for name, done in sets.items():
            per_template: dict[str, list[bool]] = defaultdict(list)
            for t in done:
                per_template[template_of(t)].append(bool(t.success))
            record[name] = {
                "success": sum(bool(t.success) for t in done) / max(len(done), 1),
                "episodes": len(done),
                "templates": {k: sum(v) / len(v) for k, v in sorted(per_template.items())},
                **status_counts(done),
            }
        self.evals[step] = record

    def state(self) -> Any:
        import ray

        name = f"{SNAPSHOT_DIR}/memory_{self.step}.json"
        # written by the driver: on a cluster the actor may live on a node without the run directory
        bank = MemoryBank.from_snapshot(ray.get(self.actor.snapshot.remote()), "the memory actor")
        sha = bank.save(self.run_dir / name)
        requests = ray.get(self.actor.stats.remote()).get("xskill/context_requests", 0)
        return {
            "file": name,
            "sha256": sha,
            "step": self.step,
            "evals": {str(k): v for k, v in self.evals.items()},
            # the cumulative counters, so a resumed run's metrics go on from them
            "counters": {"requests": int(requests), "summarizer": dict(getattr(self.summarizer, "stats", {}))},
        }

    def load_state(self, state: Any) -> None:
        import ray

        path = self.run_dir / str(state["file"])
        bank = MemoryBank.load(path, state.get("sha256"))
        counters = state.get("counters", {})
        ray.get(self.actor.restore.remote(bank.snapshot(), str(path), counters.get("requests")))
        getattr(self.summarizer, "stats", {}).update(counters.get("summarizer", {}))
        self.step = int(state.get("step", 0))
        self.evals = {int(k): v for k, v in state.get("evals", {}).items()}
