"""`raygent submit`: the same job as a Ray Job on a running cluster.

The project travels as a wheel in `runtime_env["py_modules"]` (a `working_dir` alone cannot import
`raygent`, whose folders map to `raygent.<folder>` only when installed); the resolved config travels as the
job's `working_dir`. The cluster's image provides the dependencies (deploy/Dockerfile).
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import yaml

from raygent.platform import rundir
from raygent.platform.cluster import quiet_ray_logs, use_auth_token_if_available
from raygent.platform.config import ConfigError, JobConfig

_SOURCE_FOLDERS = ("platform", "environments", "policies", "rewards", "jobs")
_TERMINAL = {"SUCCEEDED", "FAILED", "STOPPED"}


def project_root() -> Path:
    """The checkout this raygent was installed from (an editable install), for building the wheel."""
    import raygent.platform

    for entry in raygent.platform.__path__:
        root = Path(entry).resolve().parent
        if (root / "pyproject.toml").is_file() and (root / "setup.py").is_file():
            return root
    raise ConfigError("raygent submit needs a source checkout of raygent (pip install -e .) to build its wheel")


def _source_digest(root: Path) -> str:
    digest = hashlib.sha256()
    files = [root / "pyproject.toml", root / "setup.py"]
    for folder in _SOURCE_FOLDERS:
        files += sorted(p for p in (root / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for path in files:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def build_wheel(root: Path | None = None, cache: Path | None = None) -> Path:
    """Build (or reuse) the project's runtime wheel; cached by a digest of the sources.

    Ray installs a `py_modules` wheel with `pip install` *including its dependencies*, which on a cluster
    would pull a second torch, ray and vllm over the image's own. The runtime wheel therefore declares no
    dependencies (the cluster image provides them), and its version carries the source digest as a local
    label (`0.1.0+<digest>`): Ray caches py_modules by file name, so a changed source must change the name.
    """
    root = root or project_root()
    cache = cache or Path.home() / ".cache" / "raygent" / "wheels"
    digest = _source_digest(root)
    target = cache / digest
    wheels = sorted(target.glob("raygent-*.whl"))
    if wheels:
        return wheels[-1]
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", tmp]
        done = subprocess.run([*command, str(root)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"building the raygent wheel failed:\n{done.stderr[-2000:]}")
        return runtime_wheel(next(Path(tmp).glob("raygent-*.whl")), digest, target)


def runtime_wheel(wheel: Path, label: str, directory: Path) -> Path:
    """Rewrite `wheel` as version `<version>+<label>` with no declared dependencies; returns the new file."""
    name, version, rest = wheel.name.split("-", 2)
    new_version = f"{version}+{label}"
    old_info, new_info = f"{name}-{version}.dist-info/", f"{name}-{new_version}.dist-info/"
    out = directory / f"{name}-{new_version}-{rest}"
    records = []
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as sink:
        for item in source.infolist():
            path = item.filename.replace(old_info, new_info, 1)
            if path == f"{new_info}RECORD":
                continue
            data = source.read(item)
            if path == f"{new_info}METADATA":
                kept = [
                    f"Version: {new_version}" if line.startswith("Version: ") else line
                    for line in data.decode().splitlines()
                    if not line.startswith(("Requires-Dist:", "Provides-Extra:"))
                ]
                data = ("\n".join(kept) + "\n").encode()
            sink.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append(f"{path},sha256={digest},{len(data)}")
        records.append(f"{new_info}RECORD,,")
        sink.writestr(f"{new_info}RECORD", "\n".join(records) + "\n")
    return out


DEFAULT_STORAGE = "$HOME/raygent-runs"
"""Where a submitted run goes when neither `--out`, `--storage` nor `cluster.storage` says: a folder in the home
of the head node's user (the shell of Ray's job driver expands `$HOME`), which outlives Ray's session directory.
The deploy/ manifests set `cluster.storage` to the runs volume instead."""


def run_path(config: JobConfig, out: str | None = None, storage: str | None = None) -> str:
    """The run directory of a submitted job on the cluster: `out`, else `<storage>/<job>/<time>`."""
    if out is not None:
        if not out.strip():
            raise ConfigError("--out '': expected a directory path on the cluster")
        return out
    base = storage if storage is not None else (config.cluster.storage or DEFAULT_STORAGE)
    if not base.strip():
        raise ConfigError("--storage '': expected a folder on the cluster, e.g. /mnt/runs")
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{base.rstrip('/')}/{config.job}/{stamp}"


def logs_command(address: str, job_id: str) -> str:
    """A `ray job logs` line that works against a Ray 2.60 head: its CLIs send the token only in token mode."""
    token_mode = "RAY_AUTH_MODE=token " if os.environ.get("RAY_AUTH_MODE") == "token" else ""
    return f"{token_mode}ray job logs --address {address} -f {job_id}"


def submit(
    config: JobConfig,
    address: str,
    command: str,
    out: str | None = None,
    echo: Callable[[str], None] = print,
    verbose: bool = False,
) -> str:
    """Submit `raygent <command> config.yaml` as a Ray Job; returns the submission id."""
    from ray.job_submission import JobSubmissionClient

    use_auth_token_if_available()
    quiet_ray_logs(verbose)
    wheel = build_wheel()
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = out or run_path(config)
    client = JobSubmissionClient(address)
    with tempfile.TemporaryDirectory() as workdir:
        (Path(workdir) / rundir.CONFIG_FILE).write_text(yaml.safe_dump(rundir.config_dict(config), sort_keys=False))
        job_id: str = client.submit_job(
            entrypoint=f"python -m raygent.platform.cli {command} {rundir.CONFIG_FILE} --out {_shell_word(out)}",
            runtime_env={"py_modules": [str(wheel)], "working_dir": workdir},
            submission_id=f"raygent-{config.job}-{stamp}",
            metadata={"raygent_job": config.job, "raygent_command": command},
        )
    echo(f"submitted {job_id} to {address} (wheel {wheel.name}); the run directory on the cluster: {out}")
    return job_id


def _shell_word(path: str) -> str:
    """`path` quoted for the job's shell, leaving a leading `$HOME` or `~` to be expanded there."""
    for prefix in ("$HOME/", "~/"):
        if path.startswith(prefix):
            return f'"$HOME"/{shlex.quote(path[len(prefix) :])}'
    return shlex.quote(path)


def follow(address: str, job_id: str, echo: Callable[[str], None] = print) -> str:
    """Stream the job's logs until it ends; returns its final status."""
    from ray.job_submission import JobSubmissionClient

    use_auth_token_if_available()
    client = JobSubmissionClient(address)

    async def tail() -> None:
        async for lines in client.tail_job_logs(job_id):
            for line in lines.rstrip("\n").split("\n"):
                echo(line)

    asyncio.run(tail())
    status = str(client.get_job_status(job_id).value)
    while status not in _TERMINAL:
        import time

        time.sleep(0.5)
        status = str(client.get_job_status(job_id).value)
    return status
