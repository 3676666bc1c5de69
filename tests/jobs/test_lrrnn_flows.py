"""Tests of the lrRNN-flows study: solver, flow matching, log-density, dynamics tools, loader, config, claim."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.linalg import expm

from raygent.jobs.lrrnn_flows import dynamics as dyn
from raygent.jobs.lrrnn_flows.fit import gauge_fix, identifiable_projection, latents, maxent_residuals, random_gauge
from raygent.jobs.lrrnn_flows.flow import (
    Flow,
    VectorField,
    cfm_loss,
    divergence,
    rk4,
    train_flow_matching,
)
from raygent.jobs.lrrnn_flows.ground_truth import kappa_grid, make_ground_truth, simulate_trials
from raygent.jobs.lrrnn_flows.recordings import load_recording, save_recording
from raygent.jobs.lrrnn_flows.study import LrrnnFlowsStudy
from raygent.platform.config import load_config
from raygent.platform.session import grid_locally


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


def _constant_field(dim: int, value: float = 0.0) -> VectorField:
    field = VectorField(dim, hidden=8, layers=1)
    with torch.no_grad():
        for param in field.parameters():
            param.zero_()
        field.net[-1].bias.fill_(value)
    return field


def test_rk4_matches_linear_ode_and_is_fourth_order() -> None:
    a = torch.tensor([[-0.5, 2.0], [-2.0, -0.5]], dtype=torch.float64)
    y0 = torch.tensor([[1.0, 0.5]], dtype=torch.float64)
    exact = y0 @ torch.tensor(expm(2.0 * a.numpy())).T
    errors = [float((rk4(lambda t, y: y @ a.T, y0, 0.0, 2.0, steps) - exact).norm()) for steps in (20, 40)]
    assert errors[0] < 1e-4
    assert 12 < errors[0] / errors[1] < 20  # halving h divides the error by ~2^4


def test_rk4_integrates_backwards_and_tuples() -> None:
    y0 = (torch.tensor([2.0], dtype=torch.float64), torch.tensor([0.0], dtype=torch.float64))
    y, s = rk4(lambda t, y: (-y[0], torch.ones_like(y[1]) * t), y0, 1.0, 0.0, 50)
    assert float(y) == pytest.approx(2.0 * math.e, rel=1e-8)
    assert float(s) == pytest.approx(-0.5, rel=1e-8)  # integral of t from 1 to 0


def test_cfm_loss_hand_value() -> None:
    field = _constant_field(2, value=1.0)
    z1, z0 = torch.tensor([[3.0, 1.0]]), torch.tensor([[1.0, 1.0]])
    # target z1 - z0 = (2, 0), prediction (1, 1): |(-1, 1)|^2 = 2
    assert float(cfm_loss(field, z1, z0, torch.tensor([0.3])).detach()) == pytest.approx(2.0)


def test_identity_flow_log_density_is_gaussian() -> None:
    flow = Flow(field=_constant_field(3), mean=torch.tensor([1.0, -2.0, 0.5]), std=torch.tensor([2.0, 0.5, 1.0]))
    x = torch.randn(64, 3, generator=torch.Generator().manual_seed(0)) * 2
    z = (x - flow.mean) / flow.std
    expected = (-0.5 * z**2 - 0.5 * math.log(2 * math.pi) - torch.log(flow.std)).sum(dim=1)
    assert torch.allclose(flow.log_prob(x), expected, atol=1e-5)


def test_linear_flow_log_density_and_divergence() -> None:
    """v(z) = c z moves N(0, I) to N(0, e^{2c} I): log p(x) = log N(x e^{-c}) - d c."""
    field = VectorField(2, hidden=4, layers=1)
    c = 0.4

    class Linear(torch.nn.Module):
        dim = 2

        def forward(self, z: torch.Tensor, t: float, cond: torch.Tensor | None = None) -> torch.Tensor:
            return c * z

    flow = Flow(field=field, mean=torch.zeros(2), std=torch.ones(2), steps=40)
    flow.field = Linear()  # type: ignore[assignment]
    x = torch.randn(32, 2, generator=torch.Generator().manual_seed(1))
    expected = -0.5 * (x * math.exp(-c)).pow(2).sum(1) - math.log(2 * math.pi) - 2 * c
    assert torch.allclose(flow.log_prob(x), expected, atol=1e-4)
    hutch = torch.stack([divergence(flow.field, x, 0.5, trace="hutchinson")[1] for _ in range(3)])
    assert torch.allclose(hutch, torch.full_like(hutch, 2 * c), atol=1e-5)  # exact for a multiple of I


def test_flow_matching_learns_gaussian_mixture_moments() -> None:
    rng = np.random.default_rng(0)
    side = rng.integers(0, 2, 1500)
    data = np.stack(
        [
            np.where(side == 0, -2.0, 2.0) + 0.4 * rng.standard_normal(1500),
            np.where(side == 0, 1.0, -0.5) + 0.3 * rng.standard_normal(1500),
        ],
        axis=1,
    )
    gen = torch.Generator().manual_seed(0)
    flow = train_flow_matching(data, gen, iters=800, batch=256, hidden=48)
    sample = flow.sample(3000, gen).numpy()
    assert np.allclose(sample.mean(0), data.mean(0), atol=0.15)
    assert np.allclose(sample.std(0), data.std(0), rtol=0.1)
    assert abs(np.corrcoef(sample.T)[0, 1] - np.corrcoef(data.T)[0, 1]) < 0.1
    assert 0.4 < (sample[:, 0] > 0).mean() < 0.6
    assert (np.abs(sample[:, 0]) < 0.8).mean() < 0.1  # bimodal, not a single Gaussian (which puts ~29% there)


def test_fixed_points_of_bistable_ground_truth() -> None:
    gt = make_ground_truth("bistable", 384, np.random.default_rng(0))
    fps = dyn.find_fixed_points(gt.m, gt.n)
    assert len(fps.points) == 3 and fps.n_stable == 2
    stable = np.sort(fps.points[fps.stable, 0])
    assert stable[0] == pytest.approx(-stable[1], rel=0.05) and stable[1] > 1.0
    unstable = fps.points[~fps.stable, 0]
    assert abs(unstable[0]) < 0.05
    assert np.abs(dyn.latent_velocity(fps.points, gt.m, gt.n)).max() < 1e-6


def test_limit_cycle_period_and_ring_drift_of_ground_truths() -> None:
    rng = np.random.default_rng(1)
    cycle = make_ground_truth("limit_cycle", 384, rng)
    assert dyn.limit_cycle_period(cycle.m, cycle.n) == pytest.approx(2 * np.pi * 2.0 / 2.5, rel=0.05)
    ring = make_ground_truth("ring", 384, rng)
    assert dyn.ring_drift(ring.m, ring.n).drift_deg < 1.0
    multi = make_ground_truth("multistable", 384, rng)
    assert dyn.find_fixed_points(multi.m, multi.n).n_stable == 4
    assert dyn.ring_drift(multi.m, multi.n).drift_deg > 10.0  # four point attractors are no ring


def test_resampled_ring_drift_is_a_finite_size_floor() -> None:
    ring = make_ground_truth("ring", 384, np.random.default_rng(4))
    small = dyn.resampled_ring_drift(ring.m, ring.n, 300, 4, np.random.default_rng(0))
    large = dyn.resampled_ring_drift(ring.m, ring.n, 12000, 4, np.random.default_rng(0))
    assert small.shape == large.shape == (4,)
    assert large.mean() < small.mean()  # disorder-driven drift shrinks with N'
    again = dyn.resampled_ring_drift(ring.m, ring.n, 300, 4, np.random.default_rng(0))
    assert np.array_equal(small, again)
    multi = make_ground_truth("multistable", 384, np.random.default_rng(4))
    assert dyn.resampled_ring_drift(multi.m, multi.n, 12000, 2, np.random.default_rng(0)).min() > large.max()


def _ring_table(sampled: list[float], null_mean: float, null_sd: float) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "trial_id": f"t{seed}",
                "status": "TERMINATED",
                "case": "ring",
                "rank_offset": 0,
                "entropy_weight": 1.0,
                "seed": seed,
                "sampled/ring_drift_deg": drift,
                "sampled/ring_radius": 1.4,
                "fit/ring_radius": 1.4,
                "null/ring_drift_deg": null_mean,
                "null/ring_drift_sd": null_sd,
                "fit/ring_drift_deg": 4.0,
                "gt/ring_drift_deg": 0.01,
                "flow/residual_ks_p": 0.5,
                "point/residual_ks_p": 1e-5,
                "fit/heldout_mse": 0.01,
                "flow/entropy": 1.0,
            }
            for seed, drift in enumerate(sampled)
        ]
    )


def test_ring_check_is_judged_against_the_resampling_noise_floor(tmp_path) -> None:
    study = LrrnnFlowsStudy()
    within = study.analyze(_ring_table([6.0, 7.0, 6.5], null_mean=4.0, null_sd=1.5))  # limit 4 + 2 * 1.5 = 7
    assert within.checks["ring"] and within.evidence["ring/drift_limit_deg"] == pytest.approx(7.0)
    beyond = study.analyze(_ring_table([7.0, 8.0, 7.5], null_mean=4.0, null_sd=1.5))
    assert not beyond.checks["ring"] and not beyond.holds
    noisier = study.analyze(_ring_table([7.0, 8.0, 7.5], null_mean=5.0, null_sd=1.5))  # same drift, higher floor
    assert noisier.checks["ring"]
    study.plot(_ring_table([6.0, 7.0, 6.5], null_mean=4.0, null_sd=1.5), tmp_path / "curve.png")
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"


def test_planted_residual_is_dynamically_null_and_bimodal() -> None:
    gt = make_ground_truth("limit_cycle", 384, np.random.default_rng(2))
    kappa = kappa_grid(2, radius=2.5, per_axis=9)
    with_spur = dyn.latent_velocity(kappa, gt.m, gt.n)
    without = dyn.latent_velocity(kappa, gt.m, gt.n - gt.spurious)
    assert np.abs(with_spur - without).max() < 1e-3 * np.abs(without).max()
    assert dyn.residual_ks_p(gt.spurious) < 1e-4


def test_gauge_fix_is_canonical_and_keeps_connectivity() -> None:
    rng = np.random.default_rng(3)
    gt = make_ground_truth("multistable", 256, rng)
    x = simulate_trials(gt, 8, 40, 0.1, rng)
    a = random_gauge(2, rng)
    m1, n1 = gauge_fix(gt.m, gt.n, x)
    m2, n2 = gauge_fix(gt.m @ a, gt.n @ np.linalg.inv(a).T, x)
    assert np.allclose(m1 @ n1.T, gt.m @ gt.n.T, atol=1e-8)
    assert np.allclose(np.abs(m1), np.abs(m2), atol=1e-6) and np.allclose(m1 @ n1.T, m2 @ n2.T, atol=1e-8)
    kappa = latents(x.reshape(-1, 256), m1)
    assert np.allclose(np.cov(kappa.T), np.eye(2), atol=1e-8)
    gram = m1.T @ m1
    assert abs(gram[0, 1]) < 1e-6 * gram[0, 0] and gram[0, 0] >= gram[1, 1]


def test_identifiable_projection_and_maxent_residuals() -> None:
    rng = np.random.default_rng(4)
    gt = make_ground_truth("bistable", 384, rng)
    x = simulate_trials(gt, 10, 60, 0.1, rng)
    g = identifiable_projection(gt.m, gt.n, latents(x.reshape(-1, 384), gt.m), 24, rng)
    residual = gt.n - g(gt.m)
    assert np.corrcoef(residual[:, 0], gt.spurious[:, 0])[0, 1] > 0.95  # the null part is what is left
    same = maxent_residuals(residual, 0.0, 2, rng)
    assert np.allclose(same[0], residual) and np.allclose(same[1], residual)
    fresh = maxent_residuals(residual, 1.0, 4, rng).reshape(-1, 1)
    assert fresh.std() == pytest.approx(residual.std(), rel=0.05)
    assert dyn.residual_ks_p(residual) < 1e-6 < dyn.residual_ks_p(fresh[:384])
    assert dyn.kurtosis(rng.standard_t(3, 20000)) > 5 > dyn.kurtosis(rng.standard_normal(20000))


def test_recording_round_trip(tmp_path) -> None:
    rng = np.random.default_rng(5)
    activity = rng.standard_normal((6, 20, 50)).astype(np.float32)  # trials x neurons x time
    path = save_recording(tmp_path / "session1", activity, dt=0.05)
    rec = load_recording(path)
    assert rec.dt == pytest.approx(0.05)
    assert rec.activity.shape == (6, 50, 20)
    assert np.allclose(rec.activity, activity.transpose(0, 2, 1))
    z = load_recording(path, zscore=True).activity.reshape(-1, 20)
    assert np.allclose(z.mean(0), 0, atol=1e-6) and np.allclose(z.std(0), 1, atol=1e-6)
    np.savez(tmp_path / "bad.npz", activity=np.zeros((3, 4)))
    with pytest.raises(ValueError, match="trials, neurons, time"):
        load_recording(tmp_path / "bad.npz")


def test_recorded_case_runs_from_a_local_file(tmp_path) -> None:
    rng = np.random.default_rng(6)
    gt = make_ground_truth("bistable", 64, rng)
    trials = simulate_trials(gt, 6, 40, 0.1, rng)
    path = save_recording(tmp_path / "rec.npz", trials.transpose(0, 2, 1), dt=0.1)
    from raygent.platform.session import run_locally

    config = dict(
        case="recorded",
        data_path=str(path),
        rank=1,
        zscore_recording=False,
        fit_iters=20,
        flow_iters=20,
        n_sample_neurons=64,
        n_sample_nets=1,
        n_features=8,
    )
    reports = run_locally(LrrnnFlowsStudy().trainable, config)
    final = reports[-1]
    assert final["fit/rank"] == 1 and math.isnan(final["fit/fidelity_mse"])
    assert np.isfinite(final["fit/heldout_mse"]) and np.isfinite(final["flow/entropy"])


def test_yaml_config_validates() -> None:
    config = load_config("lrrnn_flows")
    assert config.entry.endswith(":LrrnnFlowsStudy")
    assert set(config.sweep.space) == {"case", "rank_offset", "entropy_weight", "seed"}
    assert config.sweep.max_concurrent_trials == 2


@pytest.mark.slow  # a reduced sweep: in `make test`, not in the edit loop
def test_claim_shape_on_reduced_grid() -> None:
    """Two cases x lambda {0, 1} x 2 seeds: dynamics kept, spurious residual removed, tail kept, entropy up."""
    study = LrrnnFlowsStudy()
    fixed = dict(
        n_neurons=256, n_trials=16, n_steps=80, fit_iters=150, flow_iters=600, n_sample_neurons=600, n_sample_nets=2
    )
    grid = {"case": ["bistable", "heavy_tailed"], "entropy_weight": [0.0, 1.0], "seed": [0, 1]}
    results = grid_locally(study, fixed, grid)
    verdict = study.analyze(results)
    assert set(verdict.checks) == {"fixed_points", "spurious_removed", "heavy_tail", "entropy_rises_with_lambda"}
    assert verdict.holds, verdict.evidence
    for case in ("bistable", "heavy_tailed"):  # the lambda = 0 flow keeps the planted bimodality
        assert verdict.evidence[f"{case}/ks_p_learned_lambda_min"] < verdict.evidence[f"{case}/ks_p_learned"]


def test_direct_variant_penalty_and_smoke() -> None:
    from raygent.jobs.lrrnn_flows.direct import dynamics_penalty
    from raygent.platform.session import run_locally

    gen = torch.Generator().manual_seed(0)
    m, n = torch.randn(200, 2, generator=gen), torch.randn(200, 2, generator=gen)
    kappas = torch.randn(8, 2, generator=gen)
    second = n.T @ n / 200
    assert float(dynamics_penalty(m, n, n, kappas, second)) == pytest.approx(0.0, abs=1e-10)
    assert float(dynamics_penalty(m, 2 * n, n, kappas, second)) > 1.0
    config = dict(
        case="bistable",
        objective="direct",
        entropy_weight=1.0,
        n_neurons=64,
        n_trials=4,
        n_steps=30,
        fit_iters=10,
        flow_iters=10,
        direct_iters=3,
        direct_batch=32,
        n_sample_neurons=64,
        n_sample_nets=1,
        n_features=8,
    )
    final = run_locally(LrrnnFlowsStudy().trainable, config)[-1]
    assert np.isfinite(final["flow/entropy"]) and 0.0 <= final["flow/residual_ks_p"] <= 1.0
