"""`raygent submit` against a real `ray start --head` cluster on loopback (not the embedded one)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from raygent.platform.submit import build_wheel

from conftest import ROOT, free_port, raygent

pytestmark = [pytest.mark.slow, pytest.mark.ray]


@pytest.fixture(scope="module")
def head(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Ray head started the way a user starts one, with the project's venv on PATH; yields its Jobs URL."""
    bindir = str(Path(sys.executable).parent)
    port, dashboard = free_port(), free_port()
    workdir = tmp_path_factory.mktemp("head")
    temp_dir = tempfile.mkdtemp(prefix="rgh", dir="/tmp")  # short: Ray's socket paths live under it
    process = subprocess.Popen(
        [
            f"{bindir}/ray",
            "start",
            "--head",
            "--block",
            f"--port={port}",
            f"--dashboard-port={dashboard}",
            "--dashboard-host=127.0.0.1",
            "--node-ip-address=127.0.0.1",
            "--num-cpus=2",
            "--include-dashboard=true",
            "--disable-usage-stats",
        ],
        cwd=workdir,
        env={**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    address = f"http://127.0.0.1:{dashboard}"
    deadline = time.time() + 120
    while raygent("status", "--address", address, timeout=60).returncode != 0:
        assert process.poll() is None and time.time() < deadline, "the Ray head did not come up"
        time.sleep(2)
    yield address
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=5)  # `ray start --block` often outlives a SIGTERM by far longer: then the kill
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
    for leftover in psutil.process_iter(["cmdline"]):  # Ray daemons that left the process group
        if any(temp_dir in part for part in leftover.info["cmdline"] or []):
            leftover.kill()
    shutil.rmtree(temp_dir, ignore_errors=True)


def test_runtime_wheel_declares_no_dependencies_and_ships_configs(tmp_path: Path) -> None:
    wheel = build_wheel(cache=tmp_path)
    assert "+" in wheel.name.split("-")[1], "the version carries the source digest"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Requires-Dist" not in metadata
    assert "raygent/jobs/configs/fls.yaml" in names and "raygent/platform/cli.py" in names
    assert not any(name.startswith(("platform/", "jobs/")) for name in names)
    assert build_wheel(cache=tmp_path) == wheel, "an unchanged source reuses the cached wheel"


def test_submit_runs_a_study_on_the_cluster_from_the_wheel(head: str, tmp_path: Path) -> None:
    done = raygent(
        "submit",
        "fls",
        "sweep.space.alpha.grid=[0.01,10.0]",
        "sweep.space.seed.grid=[0]",
        "--address",
        head,
        "--wait",
        cwd=tmp_path,
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "SUCCEEDED" in output
    origin = next(line for line in output.splitlines() if line.startswith("raygent.platform from "))
    assert "runtime_resources/py_modules_files/raygent-0.1.0+" in origin, origin
    assert str(ROOT) not in origin
    assert "summary.json" in output

    listed = raygent("status", "--address", head)
    assert listed.returncode == 0 and "SUCCEEDED" in listed.stdout
