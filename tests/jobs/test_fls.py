"""FLS study: pure functions, the GD protocol, the data paths, the config, and the claim's shape on a small grid."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from raygent.jobs.fls import FLSParams, FLSStudy
from raygent.jobs.fls.analysis import METRICS, PARTICIPATION_RATIO, TEST_ERROR, curve_checks
from raygent.jobs.fls.data import binary_labels, load_npz, make_clusters
from raygent.jobs.fls.descent import descend_to_target
from raygent.jobs.fls.model import (
    TwoLayerReLU,
    effective_lr,
    logistic_loss,
    neuron_direction_pr,
    participation_ratio,
    zero_one_error,
)
from raygent.platform import session
from raygent.platform.config import load_config
from raygent.platform.session import grid_locally, run_locally

CLUSTERS = {"n_train": 100, "n_test": 200, "d": 30, "n_clusters": 12, "noise": 0.6, "centre_norm": 2.0}


def small_net(alpha: float = 0.3, seed: int = 0, width: int = 64) -> TwoLayerReLU:
    data = make_clusters(seed=seed, **CLUSTERS)
    return TwoLayerReLU.init(data.x_train, data.y_train, width, alpha, seed)


# --- pure functions -------------------------------------------------------------------------------------


def test_participation_ratio_of_known_vectors() -> None:
    orthogonal = np.eye(5)[:3] * 2.0
    assert participation_ratio(orthogonal) == pytest.approx(3.0)
    parallel = np.outer([1.0, -2.0, 3.0], [0.6, 0.8, 0.0])
    assert participation_ratio(parallel) == pytest.approx(1.0)
    unequal = np.array([[1.0, 0.0], [0.0, 2.0]])  # eigenvalues 1 and 4
    assert participation_ratio(unequal) == pytest.approx(25.0 / 17.0)


def test_neuron_direction_pr_uses_directions_weighted_by_abs_a() -> None:
    w = np.array([[5.0, 0.0, 0.0], [0.0, 0.1, 0.0], [0.0, 0.0, 3.0]])
    assert neuron_direction_pr(w, np.array([1.0, -1.0, 0.0])) == pytest.approx(2.0)
    assert neuron_direction_pr(w, np.array([0.0, 0.0, -4.0])) == pytest.approx(1.0)
    assert neuron_direction_pr(w, np.array([1.0, 1.0, 1.0])) == pytest.approx(3.0)


def test_logistic_loss_and_error() -> None:
    assert logistic_loss(np.zeros(4)) == pytest.approx(math.log(2.0))
    assert logistic_loss(np.array([800.0])) == pytest.approx(0.0)
    assert logistic_loss(np.array([-800.0])) == pytest.approx(800.0)
    assert zero_one_error(np.array([1.0, -2.0, 0.0, 3.0]), np.array([1.0, 1.0, -1.0, -1.0])) == pytest.approx(0.5)


def test_effective_lr() -> None:
    assert effective_lr(0.2, 0.01, "stable") == pytest.approx(0.2)
    assert effective_lr(0.2, 10.0, "stable") == pytest.approx(0.002)
    assert effective_lr(0.2, 10.0, "none") == pytest.approx(0.2)


def test_init_scale_and_shared_directions_across_alpha() -> None:
    d, width, alpha = 50, 4000, 0.7
    x = np.ones((2, d))
    net = TwoLayerReLU.init(x, np.array([1.0, -1.0]), width, alpha, seed=3)
    assert net.w.std() == pytest.approx(alpha / math.sqrt(d), rel=0.02)
    assert net.a.std() == pytest.approx(alpha / math.sqrt(width), rel=0.05)
    bigger = TwoLayerReLU.init(x, np.array([1.0, -1.0]), width, 4 * alpha, seed=3)
    np.testing.assert_allclose(bigger.w, 4 * net.w)
    np.testing.assert_allclose(bigger.a, 4 * net.a)


def test_gradients_match_finite_differences() -> None:
    net = small_net(alpha=1.0, width=8)
    _, grad_w, grad_a = net.loss_and_grads()
    rng = np.random.default_rng(0)
    for _ in range(5):
        j, k = int(rng.integers(8)), int(rng.integers(30))
        for array, grad, index in ((net.w, grad_w, (j, k)), (net.a, grad_a, (j,))):
            old = array[index]
            array[index] = old + 1e-6
            up = net.loss_and_grads()[0]
            array[index] = old - 1e-6
            down = net.loss_and_grads()[0]
            array[index] = old
            assert grad[index] == pytest.approx((up - down) / 2e-6, rel=1e-4, abs=1e-9)


# --- the GD protocol ------------------------------------------------------------------------------------


def test_gd_stops_at_the_first_iterate_below_target() -> None:
    descent = descend_to_target(small_net(), lr=0.2, target=0.1, max_iters=5000)
    assert descent.reached_target and descent.train_loss <= 0.1 and descent.steps > 10
    short_net = small_net()
    short = descend_to_target(short_net, lr=0.2, target=0.1, max_iters=descent.steps - 1)
    assert not short.reached_target and short.train_loss > 0.1 and short.steps == descent.steps - 1
    # the weights returned are those whose loss is reported (no extra step at the cap)
    assert short_net.loss_and_grads()[0] == pytest.approx(short.train_loss)


def test_gd_resumes_from_a_checkpoint_exactly() -> None:
    saved: list[tuple[int, dict[str, np.ndarray]]] = []
    full_net = small_net()
    full = descend_to_target(
        full_net,
        lr=0.2,
        target=0.1,
        max_iters=5000,
        checkpoint_every=25,
        on_checkpoint=lambda step, _: saved.append((step, full_net.get_state())),
    )
    step, state = saved[0]
    resumed_net = small_net(alpha=5.0)
    resumed_net.set_state(state)
    resumed = descend_to_target(resumed_net, lr=0.2, target=0.1, max_iters=5000, start_step=step)
    assert resumed == full
    np.testing.assert_allclose(resumed_net.w, full_net.w)


def test_trainable_resumes_from_its_reported_state(monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"alpha": 0.3, "n_test": 500, "width": 64, "checkpoint_every": 40}
    reports = run_locally(FLSStudy().trainable, config)
    assert len(reports) > 1 and reports[-1]["reached_target"] == 1
    states: list[dict] = []
    monkeypatch.setattr(session, "report", lambda metrics, state=None: states.append(state))
    monkeypatch.setattr(session, "restore", lambda: None)
    FLSStudy().trainable(config)
    monkeypatch.undo()
    monkeypatch.setattr(session, "restore", lambda: states[0])
    resumed = run_locally(FLSStudy().trainable, config)
    assert resumed[-1] == pytest.approx(reports[-1])


# --- data -----------------------------------------------------------------------------------------------


def test_clusters_follow_the_seed_only() -> None:
    data = make_clusters(seed=1, **CLUSTERS)
    assert data.x_train.shape == (100, 30) and data.x_test.shape == (200, 30)
    assert set(np.unique(data.y_train)) == {-1.0, 1.0}
    again = make_clusters(seed=1, **CLUSTERS)
    np.testing.assert_array_equal(data.x_train, again.x_train)
    other = make_clusters(seed=2, **CLUSTERS)
    assert not np.allclose(data.x_train, other.x_train)
    noiseless = make_clusters(seed=1, **{**CLUSTERS, "noise": 0.0})
    np.testing.assert_allclose(np.linalg.norm(noiseless.x_train, axis=1), 2.0)


def test_binary_labels() -> None:
    np.testing.assert_array_equal(binary_labels(np.array([0, 1, 1]), (8,)), [-1.0, 1.0, 1.0])
    np.testing.assert_array_equal(binary_labels(np.array([-1, 1]), (8,)), [-1.0, 1.0])
    np.testing.assert_array_equal(binary_labels(np.array([0, 3, 8, 9, 2]), (0, 1, 8, 9)), [1, -1, 1, 1, -1])


def write_fake_cifar(path: Path, n: int = 600, seed: int = 0) -> None:
    """CIFAR-shaped (n, 3, 4, 4) images from ten class means, labels 0..9, saved as the loader expects."""
    rng = np.random.default_rng(seed)
    means = rng.normal(0.0, 1.0, size=(10, 3, 4, 4))
    arrays: dict[str, np.ndarray] = {}
    for split in ("train", "test"):
        labels = rng.integers(0, 10, size=n)
        arrays[f"x_{split}"] = (128 + 40 * (means[labels] + 0.3 * rng.normal(size=(n, 3, 4, 4)))).astype(np.uint8)
        arrays[f"y_{split}"] = labels
    np.savez(
        path, x_train=arrays["x_train"], y_train=arrays["y_train"], x_test=arrays["x_test"], y_test=arrays["y_test"]
    )


def test_npz_loader_and_the_paper_scale_trial(tmp_path: Path) -> None:
    path = tmp_path / "cifar_small.npz"
    write_fake_cifar(path)
    data = load_npz(path, seed=0, n_train=300, n_test=100, positive_labels=(0, 1, 8, 9))
    assert data.x_train.shape == (300, 48) and data.x_test.shape == (100, 48)
    np.testing.assert_allclose(data.x_train.mean(axis=0), 0.0, atol=1e-9)
    np.testing.assert_allclose(data.x_train.std(axis=0), 1.0, atol=1e-9)
    assert set(np.unique(data.y_train)) == {-1.0, 1.0}
    config = {"scale": "paper", "data_path": str(path), "n_train": 300, "n_test": 100, "width": 32}
    result = run_locally(FLSStudy().trainable, {**config, "alpha": 1.0, "eps_target": 0.1, "max_iters": 2000})[-1]
    assert result["reached_target"] == 1 and result["train_error"] < 0.05
    assert 1.0 <= result[PARTICIPATION_RATIO] <= 32.0
    with pytest.raises(FileNotFoundError):
        load_npz(tmp_path / "missing.npz", seed=0, n_train=1, n_test=1, positive_labels=(0,))


# --- config, analysis and the claim ---------------------------------------------------------------------


def test_yaml_config_validates_and_sweeps_alpha_log_spaced() -> None:
    config = load_config("fls")
    assert config.entry == "raygent.jobs.fls.study:FLSStudy"
    alphas = np.array(config.sweep.space["alpha"].grid, dtype=float)
    assert len(alphas) >= 8 and alphas.min() >= 1e-4 and alphas.max() <= 10.0
    ratios = np.log(alphas[1:] / alphas[:-1])
    assert np.all(ratios > 0) and np.allclose(ratios, ratios.mean(), rtol=0.02)
    assert len(config.sweep.space["seed"].grid) >= 4
    assert not set(METRICS) & set(FLSParams.model_fields)


def fake_results(errors: list[float], prs: list[float], eps: float = 0.05) -> pd.DataFrame:
    alphas = np.logspace(-4, 1, len(errors))
    return pd.DataFrame(
        {
            "status": "TERMINATED",
            "alpha": alphas,
            "seed": 0,
            "eps_target": eps,
            TEST_ERROR: errors,
            PARTICIPATION_RATIO: prs,
        }
    )


def test_analyze_fails_curves_without_the_shape() -> None:
    study = FLSStudy()
    monotone = study.analyze(fake_results([0.30, 0.25, 0.22, 0.21, 0.20], [3, 5, 9, 20, 22]))
    assert not monotone.holds and not monotone.checks["interior_minimum"] and not monotone.checks["overfitting_side"]
    falling_pr = study.analyze(fake_results([0.25, 0.22, 0.20, 0.22, 0.30], [3, 5, 9, 20, 18]))
    assert falling_pr.checks["interior_minimum"] and not falling_pr.checks["pr_monotone"] and not falling_pr.holds
    weak_small_side = curve_checks(
        pd.DataFrame(
            {"alpha": [1e-4, 0.1, 10], TEST_ERROR: [0.203, 0.200, 0.30], PARTICIPATION_RATIO: [3, 9, 22]}
        ).assign(n_seeds=4)
    )[0]
    assert not weak_small_side["interior_minimum"] and weak_small_side["overfitting_side"]


def test_analyze_splits_a_sweep_over_eps_target() -> None:
    good = fake_results([0.25, 0.22, 0.20, 0.22, 0.30], [3, 5, 9, 20, 22], eps=0.05)
    flat = fake_results([0.25, 0.25, 0.25, 0.25, 0.25], [3, 5, 9, 20, 22], eps=0.1)
    verdict = FLSStudy().analyze(pd.concat([good, flat], ignore_index=True))
    assert verdict.checks["interior_minimum[eps_target=0.05]"]
    assert not verdict.checks["interior_minimum[eps_target=0.1]"] and not verdict.holds
    assert verdict.evidence["argmin_alpha_by_group"]["eps_target=0.05"] == pytest.approx(10 ** (-4 + 5 * 2 / 4))


@pytest.fixture(scope="module")
def reduced_grid() -> pd.DataFrame:
    fixed = {**load_config("fls").study.model_dump(), "n_test": 5000}
    return grid_locally(FLSStudy(), fixed, {"alpha": [1e-4, 1e-2, 0.3, 1.0, 10.0], "seed": [0, 1, 2, 3]})


def test_claim_shape_on_a_reduced_grid(reduced_grid: pd.DataFrame) -> None:
    assert (reduced_grid["status"] == "TERMINATED").all() and (reduced_grid["reached_target"] == 1).all()
    verdict = FLSStudy().analyze(reduced_grid)
    assert verdict.checks == {"interior_minimum": True, "overfitting_side": True, "pr_monotone": True}
    assert verdict.holds
    evidence = verdict.evidence
    assert 1e-4 < evidence["argmin_alpha"] < 10.0
    assert evidence["large_alpha_margin"] > evidence["small_alpha_margin"] > 0.005
    assert evidence["mean_participation_ratio"][-1] > 2 * evidence["mean_participation_ratio"][0]


def test_plot_writes_a_png(reduced_grid: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "fls.png"
    FLSStudy().plot(reduced_grid, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
