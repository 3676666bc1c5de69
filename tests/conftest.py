"""Shared test helpers: the repository root and a runner for the `raygent` command in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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
