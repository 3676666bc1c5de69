"""Agent-run checkpoints: `RUN_DIR/checkpoints/<stage>_<step>/` holds the learner's `save` (model, tokenizer,
optimizer, RNG, version) and `trainer_state.json` (stage, step, task-stream state, counters). `LATEST` names the
newest complete one; it is written last, so a run killed while saving resumes from the previous checkpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

CHECKPOINTS = "checkpoints"
LATEST = "LATEST"
STATE_FILE = "trainer_state.json"
FINAL = "final"
"""`RUN_DIR/checkpoints/final`: the trained policy (a loadable model directory) that `raygent serve` uses."""
REFERENCE = "reference"
"""`RUN_DIR/checkpoints/reference`: the policy as RL began (model + tokenizer), the reference model of the KL and
adversarial-imitation terms."""


def checkpoint_dir(run_dir: Path, stage: str, step: int) -> Path:
    return run_dir / CHECKPOINTS / f"{stage}_{step:06d}"


def reference_dir(run_dir: Path) -> Path:
    return run_dir / CHECKPOINTS / REFERENCE


def write_state(directory: Path, state: dict[str, Any]) -> None:
    (directory / STATE_FILE).write_text(json.dumps(state, indent=2))


def mark_latest(run_dir: Path, directory: Path, keep: int) -> None:
    """Point `LATEST` at `directory` (atomically) and delete all but the newest `keep` step checkpoints."""
    root = run_dir / CHECKPOINTS
    temporary = root / f".{LATEST}.tmp"
    temporary.write_text(directory.name)
    temporary.replace(root / LATEST)
    steps = sorted(p for p in root.iterdir() if p.is_dir() and p.name != FINAL and (p / STATE_FILE).exists())
    steps.sort(key=lambda p: (p.name.startswith("grpo"), p.name))
    for old in steps[:-keep]:
        if old != directory:
            shutil.rmtree(old, ignore_errors=True)


def latest(run_dir: Path) -> tuple[Path, dict[str, Any]] | None:
    """The newest complete checkpoint and its trainer state, or None."""
    pointer = run_dir / CHECKPOINTS / LATEST
    if not pointer.exists():
        return None
    directory = run_dir / CHECKPOINTS / pointer.read_text().strip()
    if not (directory / STATE_FILE).exists():
        return None
    return directory, json.loads((directory / STATE_FILE).read_text())
