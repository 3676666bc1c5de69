"""Shared test helpers: the repository root, a runner for the `raygent` command in a subprocess, an agent run
killed part-way (for resume tests) and its metrics records, and a served run (`raygent serve RUN_DIR` on a free
loopback port) with a JSON poster."""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Tests that start Ray themselves get the patience `raygent.platform.cluster.connect` gives a busy machine.
os.environ.setdefault("RAY_raylet_start_wait_time_s", "180")
os.environ.setdefault("RAY_agent_register_timeout_ms", "180000")
RAYGENT = [sys.executable, "-m", "raygent.platform.cli"]
# Plugins that runs started by the tests load by `module:attr` (e.g. `pause_hook:PauseOnce`), resumed runs included.
PLUGINS = ROOT / "tests" / "plugins"
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")]))


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


def records(run_dir: Path) -> list[dict[str, Any]]:
    """The run's `metrics.jsonl` records so far."""
    path = run_dir / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run_killed_at_grpo_step(
    job: str, overrides: list[str], directory: Path, step: int, env: dict | None = None, wait_s: float = 600
) -> None:
    """`raygent run JOB OVERRIDES --out DIRECTORY`, SIGKILLed with its process group (the driver, the Ray cluster
    it started, its browsers) right after GRPO step `step`'s update, before that step is logged or checkpointed.
    The run's `PauseOnce` hook (`plugins/pause_hook.py`) holds it there, so the kill lands at the same point on any
    machine; the hook stays in the run's config and a resumed run passes through it."""
    marker = directory.parent / f"{directory.name}.paused"
    pause = f'trainer.hooks=[{{entry: "pause_hook:PauseOnce", kwargs: {{step: {step}, marker: "{marker}"}}}}]'
    first = subprocess.Popen(
        [*RAYGENT, "run", job, *overrides, pause, "--out", str(directory)],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.time() + wait_s
    while not marker.exists():
        assert first.poll() is None, "the run ended before it could be interrupted"
        assert time.time() < deadline, f"GRPO step {step} did not arrive in time"
        time.sleep(0.2)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()


# Ray's workers take ports 10002-19999 and its other servers ask the kernel for one in its ephemeral range, so a
# port handed to a process that starts Ray (and binds it only after Ray is up) comes from neither: a port released
# by `bind(0)` was taken by a Ray gRPC server before `raygent serve` bound it (CI: `BadStatusLine` on /healthz).
RAY_WORKER_PORTS = range(10002, 20000)


def init_ray_importing(*directories: Path, num_cpus: int = 4) -> None:
    """An embedded Ray cluster whose actors can import the test modules in `directories` by name (a plugin a test
    file defines, e.g. `test_seams:CalcJudge`); this conftest's directory is added too."""
    import ray

    path = os.pathsep.join([*(str(d) for d in directories), str(ROOT / "tests")])
    ray.init(
        address="local",
        num_cpus=num_cpus,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )


def free_port() -> int:
    """A loopback port nothing listens on, outside Ray's worker ports and the kernel's ephemeral range (where
    other processes' `bind(0)` lands), free when probed."""
    low, _ = (int(part) for part in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    candidates = range(RAY_WORKER_PORTS.stop, low)
    for _ in range(200):
        port = random.choice(candidates) if candidates else 0
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(probe.getsockname()[1])
    raise AssertionError(f"no free loopback port in {candidates}")


def post(url: str, body: bytes | dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """POST JSON (a dict, or raw bytes as given); returns the status and the decoded answer, 4xx included."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


@contextmanager
def served(run_dir: Path, wait_s: float = 300) -> Iterator[str]:
    """`raygent serve RUN_DIR` on a free loopback port until `/healthz` answers; yields the base URL and kills
    the server's process group afterwards."""
    port = free_port()
    server = subprocess.Popen(
        [*RAYGENT, "serve", str(run_dir), "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + wait_s
        while True:
            assert server.poll() is None, server.stdout.read() if server.stdout else ""
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=5) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError):
                pass  # not up yet (if another server holds the port, Serve fails to bind and the poll above says so)
            assert time.time() < deadline, "the server did not come up"
            time.sleep(1)
        yield base
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
