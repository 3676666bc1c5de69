"""Connecting to Ray: an embedded local cluster by default, an existing one by address.

`--address` (or `RAY_ADDRESS`) joins a running cluster; otherwise `ray.init()` starts one on this machine,
sized to its cores. Logs are quiet unless `verbose`: worker output is not forwarded and Ray's own loggers
are held at WARNING, so what the user sees is raygent's progress display.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

_QUIET_ENV = {
    "RAY_DEDUP_LOGS": "1",
    "RAY_AIR_NEW_OUTPUT": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
    "PYTHONWARNINGS": "ignore::DeprecationWarning",
}
_PATIENT_START_ENV = {
    # A laptop busy with other work can take minutes to bring up the raylet and its agents; Ray's defaults
    # (seconds) then abort the embedded cluster with "node timed out during startup".
    "RAY_raylet_start_wait_time_s": "180",
    "RAY_agent_register_timeout_ms": "180000",
}


@dataclass(frozen=True)
class ClusterInfo:
    address: str
    embedded: bool
    num_cpus: float
    num_gpus: float


def use_auth_token_if_available() -> None:
    """Ray 2.60 clusters started here use token authentication (the token in ~/.ray/auth_token).

    Clients only send it when `RAY_AUTH_MODE=token`; set that when a token is at hand and the user has
    not chosen a mode, so `raygent submit`/`status` reach such a cluster without extra steps.
    """
    if "RAY_AUTH_MODE" in os.environ:
        return
    token_file = Path(os.environ.get("RAY_AUTH_TOKEN_PATH", Path.home() / ".ray" / "auth_token"))
    if os.environ.get("RAY_AUTH_TOKEN") or token_file.is_file():
        os.environ["RAY_AUTH_MODE"] = "token"


def _token_auth_for_new_cluster() -> None:
    """Token authentication for a new embedded cluster, as Ray 2.60 defaults to, minus its warning.

    Ray reads the mode into its cached config on import, so setting only the environment variable afterwards
    leaves `ray.init` believing auth is off (it creates no `~/.ray/auth_token`) while the GCS it starts reads the
    variable and exits for want of a token: on a machine without a token every embedded run failed. The config
    is refreshed the way Ray's own `_enable_token_auth` does.
    """
    if "RAY_AUTH_MODE" in os.environ:
        return
    from ray._raylet import Config  # type: ignore[attr-defined]  # a Cython class without stubs

    os.environ["RAY_AUTH_MODE"] = "token"
    Config.initialize("")


def connect(address: str | None = None, num_cpus: int | None = None, verbose: bool = False) -> ClusterInfo:
    """Start or join Ray once per process; returns what was connected to."""
    import ray

    for key, value in {**_QUIET_ENV, **_PATIENT_START_ENV}.items():
        os.environ.setdefault(key, value)
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address:
        use_auth_token_if_available()
    else:
        _token_auth_for_new_cluster()
    if not ray.is_initialized():
        level = logging.INFO if verbose else logging.WARNING
        kwargs: dict = {
            "logging_level": level,
            "log_to_driver": verbose,
            "configure_logging": True,
        }
        if address:
            ray.init(address=address, **kwargs)
        else:
            ray.init(
                address="local",  # a new cluster even when a `ray start` one runs on this machine
                num_cpus=num_cpus or os.cpu_count() or 1,
                include_dashboard=False,
                **kwargs,
            )
    quiet_ray_logs(verbose)
    resources = ray.cluster_resources()
    return ClusterInfo(
        address=address or "embedded",
        embedded=not address,
        num_cpus=float(resources.get("CPU", 0)),
        num_gpus=float(resources.get("GPU", 0)),
    )


def quiet_ray_logs(verbose: bool = False) -> None:
    """Hold Ray's Python loggers at WARNING unless `verbose` (Ray sets them to INFO on import)."""
    level = logging.INFO if verbose else logging.WARNING
    for name in ("ray", "ray.tune", "ray.train", "ray.data", "ray.dashboard"):
        logging.getLogger(name).setLevel(level)


def disconnect() -> None:
    import ray

    if ray.is_initialized():
        ray.shutdown()
