"""Clipped ASGD study: the clip rule, sub-Weibull tails, exact simulated delays, the staleness excursion,
objectives and data loading, the config, the claim's shape on a reduced grid, and the Ray mode."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import ray
from scipy.special import erfc

from raygent.jobs.clipped_asgd.method import ClippedStep, clip, clipped_step
from raygent.jobs.clipped_asgd.noise import NoisyGradient, sub_weibull
from raygent.jobs.clipped_asgd.objective import load_dataset, make_logistic, make_ripple
from raygent.jobs.clipped_asgd.params import ClippedASGDParams
from raygent.jobs.clipped_asgd.simulator import simulate, straggler_slowdowns
from raygent.jobs.clipped_asgd.study import ClippedASGDStudy
from raygent.platform.config import load_config
from raygent.platform.session import grid_locally, run_locally

INF = math.inf


def test_clip_hand_values_norm_and_direction() -> None:
    np.testing.assert_allclose(clip(np.array([3.0, 4.0]), 1.0), [0.6, 0.8])
    np.testing.assert_allclose(clip(np.array([3.0, 4.0]), 10.0), [3.0, 4.0])
    np.testing.assert_allclose(clip(np.array([3.0, 4.0]), INF), [3.0, 4.0])
    np.testing.assert_allclose(clipped_step(np.array([1.0, 1.0]), np.array([3.0, 4.0]), 0.5, 1.0), [0.7, 0.6])
    rng = np.random.default_rng(0)
    for _ in range(50):
        g = rng.standard_normal(7) * rng.exponential(5.0)
        c = rng.exponential(1.0)
        clipped = clip(g, c)
        assert np.linalg.norm(clipped) <= c + 1e-12
        cosine = clipped @ g / (np.linalg.norm(clipped) * np.linalg.norm(g))
        assert cosine == pytest.approx(1.0)
    with pytest.raises(ValueError):
        clip(np.ones(2), 0.0)


def test_sub_weibull_matches_exact_tail_and_gets_heavier_with_theta() -> None:
    rng = np.random.default_rng(1)
    thetas = [0.5, 1.0, 2.0, 3.0]
    samples = {theta: sub_weibull(rng, 200_000, theta, 1.0) for theta in thetas}
    assert np.std(samples[0.5]) == pytest.approx(1.0, rel=0.02)  # θ = ½ is N(0, K²)
    for theta, xi in samples.items():
        assert abs(np.mean(np.sign(xi))) < 0.01  # symmetric
        for t in (1.0, 4.0):
            exact = erfc(t ** (1.0 / (2.0 * theta)) / math.sqrt(2.0))  # P(|z|^{2θ} > t)
            assert np.mean(np.abs(xi) > t) == pytest.approx(exact, abs=0.005)
    tail = [np.mean(np.abs(samples[theta]) > 20.0) for theta in thetas]
    assert tail == sorted(tail) and tail[0] == 0.0 and tail[-1] > 0.02
    kurtosis = [np.mean(samples[t] ** 4) / np.mean(samples[t] ** 2) ** 2 for t in thetas]
    assert kurtosis == sorted(kurtosis)


def _half_square_grad(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return x  # f(x) = ½‖x‖², noiseless


def _half_square(x: np.ndarray) -> float:
    return float(x @ x)


def test_simulator_delays_exact_on_hand_built_schedule() -> None:
    # w0 finishes at 1, 2, 3 (delays 0), w1 (pulled at version 0) at 3.5 (delay 3), w0 (pulled at 3) at 4
    # (delay 1), w1 (pulled at 4) at 4.5 (delay 1).
    trace = simulate(
        ClippedStep(gamma=0.5),
        _half_square_grad,
        _half_square,
        np.array([1.0]),
        slowdowns=[1.0, 1.0],
        max_updates=100,
        seed=0,
        schedule=[[1.0, 1.0, 1.0, 1.0], [3.5, 1.0]],
    )
    assert trace.workers.tolist() == [0, 0, 0, 1, 0, 1]
    assert trace.delays.tolist() == [0, 0, 0, 3, 1, 1]
    np.testing.assert_allclose(trace.finish_times, [1.0, 2.0, 3.0, 3.5, 4.0, 4.5])
    # gradients are taken at the pulled x: 1 → .5 → .25 → .125 → .125−.5·1 → −.375−.5·.125 → −.4375+.5·.375
    expected_x = [1.0, 0.5, 0.25, 0.125, -0.375, -0.4375, -0.25]
    np.testing.assert_allclose(trace.grad_sq, np.square(expected_x))
    np.testing.assert_allclose(trace.x, [-0.25])


def test_simulator_ties_go_to_lower_worker_and_target_stops() -> None:
    trace = simulate(
        ClippedStep(gamma=0.5),
        _half_square_grad,
        _half_square,
        np.array([1.0]),
        [1.0, 1.0],
        100,
        0,
        schedule=[[2.0], [2.0]],
    )
    assert trace.workers.tolist() == [0, 1] and trace.delays.tolist() == [0, 1]
    stopped = simulate(
        ClippedStep(gamma=0.5), _half_square_grad, _half_square, np.array([1.0]), [1.0], 100, 0, target=0.01
    )
    assert len(stopped.delays) == 4 and stopped.grad_sq[-1] <= 0.01 < stopped.grad_sq[-2]


def test_simulated_stragglers_raise_observed_delays() -> None:
    objective = make_ripple(np.random.default_rng(0), 5, 10.0, 0.02, 2.0, 3.0)
    oracle = NoisyGradient(objective, theta=0.5, scale=0.01)
    delays = {}
    for slowdown in (1.0, 100.0):
        trace = simulate(
            ClippedStep(0.03, 0.2),
            oracle,
            objective.grad_norm_sq,
            objective.x0,
            straggler_slowdowns(8, 2, slowdown),
            1500,
            seed=3,
        )
        delays[slowdown] = trace.delays
        assert len(trace.delays) == 1500
    assert delays[100.0].max() > 10 * delays[1.0].max()
    assert np.median(delays[100.0]) <= np.median(delays[1.0])  # fast workers carry the run


@pytest.mark.parametrize("distance", [5.0, 50.0])
def test_bounded_staleness_excursion(distance: float) -> None:
    """One stale gradient taken at x0 (far from the optimum) lands after T fresh steps: clipped, the
    jump is at most γc; unclipped it is γ‖∇f(x0)‖, which grows with the distance travelled since."""
    objective = make_ripple(np.random.default_rng(2), 10, 10.0, 0.02, 2.0, distance)
    oracle = NoisyGradient(objective, theta=0.5, scale=0.0)
    gamma, c, steps = 0.05, 0.2, 40
    g0 = float(np.linalg.norm(objective.grad(objective.x0)))
    assert g0 > c
    jumps = {}
    for threshold in (c, INF):
        trace = simulate(
            ClippedStep(gamma, threshold),
            oracle,
            objective.grad_norm_sq,
            objective.x0,
            [1.0, 1.0],
            max_updates=steps + 1,
            seed=0,
            schedule=[[1.0] * steps, [steps + 0.5]],
        )
        assert trace.workers[-1] == 1 and trace.delays[-1] == steps
        before = simulate(
            ClippedStep(gamma, threshold),
            oracle,
            objective.grad_norm_sq,
            objective.x0,
            [1.0, 1.0],
            max_updates=steps,
            seed=0,
            schedule=[[1.0] * steps, []],
        )
        jumps[threshold] = float(np.linalg.norm(trace.x - before.x))
    assert jumps[c] == pytest.approx(gamma * c)
    assert jumps[INF] == pytest.approx(gamma * g0)
    assert jumps[INF] > 5 * jumps[c]


def test_objective_gradients_match_finite_differences() -> None:
    rng = np.random.default_rng(4)
    for objective in (make_ripple(rng, 6, 20.0, 0.3, 3.0, 2.0), make_logistic(rng, 50, 6, 0.01, 2.0)):
        x = objective.x0 + 0.1 * rng.standard_normal(6)
        numeric = np.array([(objective.value(x + 1e-6 * e) - objective.value(x - 1e-6 * e)) / 2e-6 for e in np.eye(6)])
        np.testing.assert_allclose(objective.grad(x), numeric, rtol=1e-5, atol=1e-8)
        assert objective.grad_norm_sq(x) == pytest.approx(float(numeric @ numeric), rel=1e-5)
    ripple = make_ripple(rng, 6, 20.0, 0.3, 3.0, 2.0)
    assert ripple.grad_norm_sq(ripple.center) == pytest.approx(0.0)


def test_load_dataset_npz_and_svmlight(tmp_path: Path) -> None:
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(5)
    features = rng.standard_normal((30, 4)) * 3.0
    labels = (rng.random(30) < 0.5).astype(float)  # {0, 1}
    np.savez(tmp_path / "data.npz", features=features, labels=labels)
    dump_svmlight_file(features, labels, str(tmp_path / "data.svm"))
    for name in ("data.npz", "data.svm"):
        loaded_features, loaded_labels = load_dataset(tmp_path / name)
        assert loaded_features.shape == (30, 4)
        np.testing.assert_allclose(np.linalg.norm(loaded_features, axis=1), 1.0)
        np.testing.assert_allclose(loaded_labels, np.where(labels == 1.0, 1.0, -1.0))
    params = ClippedASGDParams(objective="logistic", data_path=str(tmp_path / "data.npz"), replicates=1, max_updates=50)
    reports = run_locally(ClippedASGDStudy().trainable, params.model_dump())
    assert reports[-1]["final_grad_sq_p50"] < reports[-1]["initial_grad_sq"]
    with pytest.raises(FileNotFoundError):
        load_dataset(tmp_path / "missing.npz")


def test_yaml_config_validates() -> None:
    config = load_config("clipped_asgd")
    assert config.entry.endswith(":ClippedASGDStudy")
    space = config.sweep.space
    assert {1, 100} <= set(space["slowdown"].grid) and {0.2, INF} <= set(space["clip"].grid)
    assert min(space["theta"].grid) <= 0.5 and max(space["theta"].grid) >= 2.0
    assert config.study.mode == "simulate"
    with pytest.raises(ValueError):
        ClippedASGDParams(n_workers=2, n_slow=3)


def test_trainable_checkpoints_and_is_deterministic() -> None:
    study = ClippedASGDStudy()
    config = ClippedASGDParams(replicates=4, max_updates=300, checkpoint_every=2).model_dump()
    reports = run_locally(study.trainable, config)
    again = run_locally(study.trainable, {**config, "checkpoint_every": 0})
    assert len(reports) == 2 and len(again) == 1
    for key in ("iters_to_target_p50", "tau_max", "final_grad_sq_p90", "runs"):
        assert reports[-1][key] == again[-1][key]


def test_claim_shape_on_reduced_grid(tmp_path: Path) -> None:
    study = ClippedASGDStudy()
    grid = {"slowdown": [1.0, 100.0], "clip": [0.2, INF], "theta": [0.5, 3.0], "seed": [0]}
    results = grid_locally(study, {"replicates": 5}, grid)
    verdict = study.analyze(results)
    assert verdict.checks == {
        "clipped_iterations_flat": True,
        "tau_max_grows": True,
        "clipping_lowers_heavy_tail_p90": True,
    }
    assert verdict.holds
    study.plot(results, tmp_path / "clipped_asgd.png")
    assert (tmp_path / "clipped_asgd.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.ray
def test_ray_mode_runs_the_same_study(local_ray: None) -> None:
    study = ClippedASGDStudy()
    fixed = {
        "mode": "ray",
        "dim": 5,
        "n_workers": 4,
        "n_slow": 1,
        "slowdown": 50.0,
        "max_updates": 200,
        "replicates": 1,
        "base_time": 0.005,
        "timeout_s": 120.0,
    }
    results = grid_locally(study, fixed, {"clip": [0.2]})
    row = results.iloc[0]
    assert row["status"] == "TERMINATED" and row["runs"] == 1
    assert row["final_grad_sq_p50"] < row["initial_grad_sq"]
    assert row["slow_push_fraction"] > 0 and row["tau_max_run"] >= 10
    simulated = grid_locally(study, {**fixed, "mode": "simulate"}, {"clip": [0.2]})
    assert set(simulated.columns) == set(results.columns)
    assert simulated.iloc[0]["initial_grad_sq"] == pytest.approx(row["initial_grad_sq"])  # same problem
