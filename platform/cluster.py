"""Connecting to Ray: an embedded local cluster by default, an existing one by address.

`--address` (or `RAY_ADDRESS`) joins a running cluster; otherwise `ray.init()` starts one on this machine,
sized to its cores. Logs are quiet unless `verbose`: worker output is not forwarded and Ray's own loggers
are held at WARNING, so what the user sees is raygent's progress display.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from raygent.platform.config import ConfigError

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


PROBE_TIMEOUT_S = 5.0
"""How long a TCP connect to an `--address` may take before it counts as unreachable."""


def _host_port(text: str, default_port: int | None, what: str) -> tuple[str, int]:
    """`host:port` (or `[v6]:port`) → (host, port); `ConfigError` naming `what` when malformed."""
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = text, ""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not port_text:
        if default_port is None:
            raise ConfigError(f"{what}: no port; expected HOST:PORT, e.g. 127.0.0.1:6379")
        port_text = str(default_port)
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ConfigError(f"{what}: port {port_text!r} is not a number in 1..65535")
    if not host or any(c.isspace() or c in "/?#@" for c in host):
        raise ConfigError(f"{what}: {host!r} is not a host name; expected HOST:PORT, e.g. 127.0.0.1:6379")
    return host, int(port_text)


_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # + empty SETTINGS


def probe(host: str, port: int, what: str, timeout_s: float = PROBE_TIMEOUT_S, speaks: str | None = None) -> None:
    """A TCP connect to `host:port` within `timeout_s`; `ConfigError` naming `what` when nothing answers.

    `speaks="grpc"` (Ray's GCS and Ray Client) or `"http"` (the Jobs API) also checks that the server answers in
    that protocol within the same time: a port that accepts and stays silent (a firewall's or a proxy's) or speaks
    something else would otherwise leave Ray retrying for a minute."""
    deadline = time.monotonic() + timeout_s
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as connection:
            if speaks is None:
                return
            connection.settimeout(max(0.1, deadline - time.monotonic()))
            if speaks == "grpc":  # an HTTP/2 server answers the client preface with a SETTINGS frame
                connection.sendall(_HTTP2_PREFACE)
                frame = _read(connection, 9)
                if len(frame) == 9 and frame[3] == 4:
                    return
                expected = "a Ray cluster (its GCS speaks gRPC)"
            else:
                connection.sendall(f"GET /api/version HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
                if _read(connection, 5) == b"HTTP/":
                    return
                expected = "the Ray Jobs API (the dashboard's HTTP port, 8265 by default)"
            raise ConfigError(f"{what}: {host}:{port} accepts connections but does not answer as {expected}")
    except socket.gaierror:
        reason = f"unknown host {host!r}"
    except TimeoutError:
        reason = f"no answer from {host}:{port} within {timeout_s:g} s"
    except OSError as exc:
        reason = f"nothing answers at {host}:{port} ({exc.strerror or exc})"
    raise ConfigError(f"{what}: {reason}")


def _read(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def check_ray_address(address: str, source: str = "--address", timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Fail fast (within `timeout_s`) on a Ray address that is malformed or where nothing listens.

    `auto` and `local` are Ray's own words and pass through; `ray://HOST:PORT` (Ray Client) and `HOST:PORT` (the
    GCS) are parsed and probed, so a wrong address says so in seconds instead of Ray retrying for a minute.
    """
    what = f"{source} {address!r}"
    if address in {"auto", "local"}:
        return
    rest = address.removeprefix("ray://")
    if "://" in rest:
        raise ConfigError(f"{what}: expected HOST:PORT or ray://HOST:PORT (a Jobs address http://... is for submit)")
    host, port = _host_port(rest, None, what)
    probe(host, port, what, timeout_s, speaks="grpc")


def jobs_url(address: str, source: str = "--address", timeout_s: float = PROBE_TIMEOUT_S) -> str:
    """A Ray Jobs API address as a URL (`HOST:PORT` → `http://HOST:PORT`), checked and probed like above."""
    what = f"{source} {address!r}"
    url = address if "://" in address else f"http://{address}"
    scheme, _, rest = url.partition("://")
    if scheme not in {"http", "https"}:
        raise ConfigError(f"{what}: scheme {scheme!r}; expected http://HOST:PORT (the dashboard, port 8265)")
    netloc = rest.split("/", 1)[0]
    host, port = _host_port(netloc, 443 if scheme == "https" else 80, what)
    probe(host, port, what, timeout_s, speaks="http" if scheme == "http" else None)
    return url.rstrip("/")


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


def connect(
    address: str | None = None, num_cpus: int | None = None, verbose: bool = False, source: str | None = None
) -> ClusterInfo:
    """Start or join Ray once per process; returns what was connected to.

    A given or `RAY_ADDRESS` address is probed first (`check_ray_address`: `ConfigError` within seconds, naming
    `source`, the option or key the address came from); a cluster that answers but cannot be joined raises
    `ConnectionError`."""
    import ray

    for key, value in {**_QUIET_ENV, **_PATIENT_START_ENV}.items():
        os.environ.setdefault(key, value)
    if not verbose:  # Ray's C++ core logs its retries on stderr, around raygent's own one-line error
        os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "error")
    source = source or ("--address" if address else "RAY_ADDRESS")
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address:
        check_ray_address(address, source)
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
            try:
                ray.init(address=address, **kwargs)
            except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise ConnectionError(f"{source} {address!r}: Ray could not join the cluster ({first})") from None
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
