"""Shared test helpers: the repository root and a runner for the `raygent` command in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Tests that start Ray themselves get the patience `raygent.platform.cluster.connect` gives a busy machine.
os.environ.setdefault("RAY_raylet_start_wait_time_s", "180")
os.environ.setdefault("RAY_agent_register_timeout_ms", "180000")
RAYGENT = [sys.executable, "-m", "raygent.platform.cli"]


def raygent(
    *args: str, cwd: Path | None = None, timeout: float = 600, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run `raygent ARGS` as a user would; returns the finished process (text output)."""
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [*RAYGENT, *args], cwd=cwd or ROOT, capture_output=True, text=True, timeout=timeout, env=full_env
    )


@pytest.fixture
def root() -> Path:
    return ROOT
