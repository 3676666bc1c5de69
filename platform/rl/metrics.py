"""Metric names (defined once, `/`-namespaced; docs/design.md §7.5) and the sinks: `metrics.jsonl` and TensorBoard."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

METRICS_FILE = "metrics.jsonl"

STEP = "step"
STAGE = "stage"
TIMING_GENERATE = "timing/generate"
TIMING_LEARN = "timing/learn"
TIMING_SYNC = "timing/sync"
TIMING_STEP = "timing/step"
TOKENS_PER_S = "rollout/tokens_per_s"
REWARD = "rollout/reward"
SUCCESS = "rollout/success"
INVALID_ACTION_RATE = "rollout/invalid_action_rate"
INFRA_FAILURES = "rollout/infra_failures"
WORKER_RESTARTS = "rollout/worker_restarts"
ENGINE_RESYNCS = "rollout/engine_resyncs"
TURNS = "rollout/turns"
STALENESS = "rollout/staleness"
DROPPED_STALE = "rollout/dropped_stale_groups"
SAMPLES = "rollout/samples"
VERSION = "policy/version"
EVAL_SUCCESS = "eval/success"
EVAL_REWARD = "eval/reward"
EVAL_OUTCOMES = "eval/outcomes"
"""An eval record's `{task id: success}` of the held-out tasks (infrastructure failures left out)."""
BATCH_INDEX = "data/batch_index"
"""A step's first batch of the task stream; `data/batch_indices` lists all it drew (dynamic sampling)."""
BATCH_INDICES = "data/batch_indices"
DRAWS = "rollout/draws"
"""Batches a step drew (1 without dynamic sampling)."""
GROUPS_DRAWN = "rollout/groups_drawn"
GROUPS_KEPT = "rollout/groups_kept"
"""Of the groups drawn, those whose rewards vary (what GRPO learns from)."""
WALL = "time/elapsed_s"
"""Seconds since the trainer started (the learning curve against wall time)."""
TASK_IDS = "data/task_ids"
JUDGEMENTS = "judge/judgements"
"""Per judged episode: task id, the checker's success and the reward model's verdict (the `judge` stage's records)."""


class MetricsLog:
    """Appends one JSON object per record to `metrics.jsonl` and scalars to TensorBoard (when enabled).

    `truncate_after(step)` drops records past a checkpoint's step, so a resumed run's log holds each step once.
    """

    def __init__(self, run_dir: Path, tensorboard: bool = True) -> None:
        self.path = run_dir / METRICS_FILE
        self.run_dir = run_dir
        self._writer: Any = None
        if tensorboard:
            from tensorboardX import SummaryWriter

            self._writer = SummaryWriter(str(run_dir / "tensorboard"))

    def truncate_after(self, step: int, stage: str) -> None:
        """Keep the records a resume from checkpoint (`stage`, `step`) does not redo: those of an earlier phase
        (SFT before the RL phase, whose records are every other stage's) and those of its phase up to `step`.
        At step 0 of the RL phase none of it is kept: the resumed run evaluates and warms up again."""
        if not self.path.exists():
            return
        kept = []
        resumed = _phase(stage)
        for line in self.path.read_text().splitlines():
            record = json.loads(line)
            phase = _phase(str(record.get(STAGE, "")))
            if phase < resumed or (phase == resumed and step > 0 and record.get(STEP, 0) <= step):
                kept.append(line)
        self.path.write_text("".join(f"{line}\n" for line in kept))

    def write(self, record: dict[str, Any]) -> None:
        with self.path.open("a") as handle:
            handle.write(json.dumps(record, default=str) + "\n")
        if self._writer is not None:
            step = int(record.get(STEP, 0))
            prefix = str(record.get(STAGE, ""))
            for key, value in record.items():
                if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                    self._writer.add_scalar(f"{prefix}/{key}" if prefix else key, value, step)
            self._writer.flush()

    def read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


def _phase(stage: str) -> int:
    """0 for SFT records, 1 for the RL phase's (GRPO steps, evaluations, hooks' start)."""
    return 0 if stage == "sft" else 1
