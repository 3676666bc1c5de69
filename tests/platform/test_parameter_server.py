"""The asynchronous parameter server: exact delay bookkeeping, stragglers' larger delays, convergence."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest
import ray

from raygent.platform.parameter_server import ParameterServer, ServerTrace, run_parameter_server

pytestmark = pytest.mark.ray


def _quadratic(center: np.ndarray, step: float) -> tuple[Callable, Callable, Callable]:
    """f(x) = ½‖x − center‖²: (update, grad_fn, monitor). Closures, so Ray ships them by value."""

    def update(x: np.ndarray, g: np.ndarray) -> np.ndarray:
        return x - step * g

    def grad_fn(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return x - center

    def monitor(x: np.ndarray) -> float:
        return float((x - center) @ (x - center))

    return update, grad_fn, monitor


def test_server_counts_versions_and_delays_without_ray() -> None:
    update, _, monitor = _quadratic(np.zeros(2), step=0.5)
    server = ParameterServer(np.array([2.0, 0.0]), update, max_updates=3, monitor=monitor)
    x, version, done = server.pull()
    assert version == 0 and not done
    server.push(x, version, worker=0)  # fresh: delay 0, x → [1, 0]
    server.push(x, version, worker=1)  # pulled at version 0, applied at version 1: delay 1
    _, version_now, _ = server.pull()
    server.push(np.array([0.0, 2.0]), version_now, worker=0)
    server.push(np.array([9.0, 9.0]), version_now, worker=1)  # after max_updates: dropped
    trace = server.trace()
    assert trace["delays"].tolist() == [0, 1, 0]
    assert trace["workers"].tolist() == [0, 1, 0]
    assert trace["pushes_dropped"] == 1
    np.testing.assert_allclose(trace["x"], [0.0, -1.0])
    np.testing.assert_allclose(trace["grad_sq"], [4.0, 1.0, 0.0, 1.0])
    assert server.done()


def test_target_needs_monitor() -> None:
    update, _, _ = _quadratic(np.zeros(2), step=0.5)
    with pytest.raises(ValueError, match="monitor"):
        ParameterServer(np.zeros(2), update, max_updates=3, target=1e-3)


@pytest.fixture(scope="module")
def served() -> Iterator[ServerTrace]:
    """One run on a local 2-CPU Ray, driven from a task that holds both CPUs: the server and workers
    (num_cpus=0) must still start, as they do inside a 1-CPU Tune trial on a 2-core machine."""
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    center = np.array([3.0, -2.0, 1.0])
    update, grad_fn, monitor = _quadratic(center, step=0.02)

    @ray.remote(num_cpus=2)
    def drive() -> ServerTrace:
        return run_parameter_server(
            np.zeros(3),
            update,
            grad_fn,
            slowdowns=[1.0, 1.0, 1.0, 30.0],
            max_updates=5000,
            base_time=0.01,
            monitor=monitor,
            target=1e-4,
            seed=0,
            timeout_s=60.0,
        )

    try:
        yield ray.get(drive.remote(), timeout=90)
    finally:
        ray.shutdown()


def test_server_converges_on_quadratic(served: ServerTrace) -> None:
    assert served.grad_sq[0] == pytest.approx(14.0)
    assert served.grad_sq[-1] <= 1e-4
    assert len(served.delays) < 5000  # stopped by the target, not the update budget
    assert len(served.grad_sq) == len(served.delays) + 1


def test_delays_recorded_and_straggler_delays_larger(served: ServerTrace) -> None:
    assert len(served.delays) == len(served.workers) == len(served.apply_times)
    assert served.delays.min() >= 0
    assert set(served.workers.tolist()) == {0, 1, 2, 3}
    slow = served.delays[served.workers == 3]
    fast = served.delays[served.workers != 3]
    assert len(slow) >= 2  # sleeps 30x longer than the others, over ~280 updates
    assert slow.mean() > 3.0 * fast.mean()
    assert np.all(np.diff(served.apply_times) >= 0)
