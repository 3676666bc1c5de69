"""SPADE study: the losses on hand-computed values, the DDIM sampler, the tasks and their .npz loader, the
search, the analysis, the config, and the ablation claim's shape on a reduced grid."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from raygent.jobs.spade.evaluate import far_probes
from raygent.jobs.spade.params import PAPER_CONSTANTS, SpadeParams
from raygent.jobs.spade.regularizers import (
    KnnSupport,
    calibration_loss,
    moment_loss,
    ranking_loss,
    support_proximity_loss,
    support_transform,
)
from raygent.jobs.spade.search import evolutionary_search, lcb, top_k
from raygent.jobs.spade.study import (
    OOD_FRAC_BELOW,
    OOD_GAP,
    SCORE_MAX,
    SCORE_MEDIAN,
    SPEARMAN,
    TRAIN_EPOCH,
    SpadeStudy,
)
from raygent.jobs.spade.surrogate import ConditionalDiffusion
from raygent.jobs.spade.tasks import (
    load_npz_task,
    make_continuous_task,
    make_tfbind_task,
    onehot_to_tokens,
    save_npz_task,
    tokens_to_onehot,
)
from raygent.platform import session
from raygent.platform.config import load_config
from raygent.platform.session import grid_locally, run_locally


def softplus(v: float) -> float:
    return math.log1p(math.exp(v))


# --- losses ---------------------------------------------------------------------------------------------


def test_ranking_loss_counts_only_ordered_pairs() -> None:
    mu = torch.tensor([1.0, 0.0, 2.0])
    y = torch.tensor([3.0, 1.0, 2.0])
    first, second = torch.tensor([0, 1, 2, 1]), torch.tensor([1, 2, 1, 1])
    # ordered pairs: (0, 1) with μ-gap 1 and (2, 1) with μ-gap 2; (1, 2) and (1, 1) are not y_i > y_j
    expected = (softplus(-1.0) + softplus(-2.0)) / 2
    assert float(ranking_loss(mu, y, first, second)) == pytest.approx(expected, rel=1e-6)
    expected_t2 = (softplus(-2.0) + softplus(-4.0)) / 2
    assert float(ranking_loss(mu, y, first, second, temperature=2.0)) == pytest.approx(expected_t2, rel=1e-6)
    assert float(ranking_loss(mu, y, torch.tensor([1]), torch.tensor([0]))) == 0.0


def test_ranking_loss_falls_when_means_follow_the_labels() -> None:
    y = torch.tensor([0.0, 1.0, 2.0, 3.0])
    first, second = torch.tensor([3, 2, 1, 3]), torch.tensor([0, 1, 0, 2])
    right = ranking_loss(y.clone(), y, first, second)
    wrong = ranking_loss(-y, y, first, second)
    assert float(right) < math.log(2.0) < float(wrong)


def test_calibration_loss_is_moment_plus_rank() -> None:
    mu = torch.tensor([0.5, -1.0, 2.0])
    y = torch.tensor([1.0, 0.0, 2.0])
    assert float(moment_loss(mu, y)) == pytest.approx((0.25 + 1.0 + 0.0) / 3)
    assert float(calibration_loss(mu, y, n_pairs=0)) == pytest.approx(float(moment_loss(mu, y)))
    generator = torch.Generator().manual_seed(0)
    with_pairs = calibration_loss(mu, y, n_pairs=64, generator=generator)
    assert float(with_pairs) > float(moment_loss(mu, y))


def test_support_proximity_loss_relu_pieces() -> None:
    mu = torch.tensor([1.0, 0.0, 0.3])
    sigma = torch.tensor([0.0, 1.0, 0.01])
    neighbour_mean = torch.tensor([0.5, 0.5, 0.5])
    radius = torch.tensor([math.e, 1.0, 1.0])  # log r = 1, 0, 0
    loss = support_proximity_loss(mu, sigma, neighbour_mean, radius, tau_a=0.1, sigma_a0=0.02, sigma_a1=0.005)
    # design 0: mean shrink ReLU(1 − 0.5 − 0.1·1) = 0.4, variance floor ReLU(0.02 + 0.005 − 0) = 0.025
    # design 1: ReLU(0 − 0.5) = 0 and ReLU(0.02 − 1) = 0; design 2: ReLU(0.3 − 0.5) = 0, ReLU(0.02 − 0.01) = 0.01
    assert float(loss) == pytest.approx((0.425 + 0.0 + 0.01) / 3, rel=1e-5)
    mu = mu.clone().requires_grad_(True)
    sigma = sigma.clone().requires_grad_(True)
    support_proximity_loss(mu, sigma, neighbour_mean, radius, tau_a=0.1, sigma_a0=0.02, sigma_a1=0.005).backward()
    assert mu.grad.tolist() == pytest.approx([1 / 3, 0.0, 0.0])
    assert sigma.grad.tolist() == pytest.approx([-1 / 3, 0.0, -1 / 3])


def test_support_transform_shifts_mean_and_floors_std() -> None:
    samples = torch.tensor([[1.0, 0.0], [3.0, 0.001], [2.0, -0.001]])
    radius = torch.tensor([1.0, math.e])
    out = support_transform(samples, radius, tau_a=0.5, sigma_a0=0.1, sigma_a1=0.2)
    assert out.mean(dim=0).tolist() == pytest.approx([2.0, 0.0 - 0.5], abs=1e-6)
    std = out.std(dim=0, unbiased=False)
    assert float(std[0]) == pytest.approx(float(samples[:, 0].std(unbiased=False)), rel=1e-5)  # above floor
    assert float(std[1]) == pytest.approx(0.1 + 0.2, rel=1e-4)  # lifted to the floor σ_a0 + σ_a1·log r


def test_knn_support_counts_a_design_as_its_own_neighbour() -> None:
    knn = KnnSupport(torch.tensor([[0.0], [1.0], [3.0]]), torch.tensor([0.0, 1.0, 2.0]), k=2)
    assert knn.train_mean.tolist() == pytest.approx([0.5, 0.5, 1.5])
    assert knn.train_radius.tolist() == pytest.approx([1.0, 1.0, 2.0])
    mean, radius = knn.query(torch.tensor([[10.0]]))
    assert float(mean[0]) == pytest.approx(1.5) and float(radius[0]) == pytest.approx(9.0)
    assert knn.nearest(torch.tensor([[2.6], [-4.0]])).tolist() == [2, 0]


# --- surrogate and sampler ------------------------------------------------------------------------------


def small_model(steps: int = 20) -> ConditionalDiffusion:
    torch.manual_seed(0)
    return ConditionalDiffusion(3, hidden=16, t_dim=8, steps=steps, beta_start=1e-4, beta_end=0.05)


def test_ddim_sampler_shape_and_gradients() -> None:
    model = small_model()
    x = torch.randn(5, 3, requires_grad=True)
    samples = model.ddim_sample(x, n_samples=4, ddim_steps=6, generator=torch.Generator().manual_seed(0))
    assert samples.shape == (4, 5)
    samples.mean(dim=0).sum().backward()
    assert x.grad is not None and float(x.grad.abs().sum()) > 0
    grads = [p.grad for p in model.eps_net.parameters()]
    assert all(g is not None for g in grads) and sum(float(g.abs().sum()) for g in grads) > 0


def test_ddim_with_zero_noise_prediction_rescales_the_start() -> None:
    model = small_model()
    last = model.eps_net.trunk[-1]
    torch.nn.init.zeros_(last.weight)
    torch.nn.init.zeros_(last.bias)
    noise = torch.randn(3, 2)
    out = model.ddim_sample(torch.randn(2, 3), n_samples=3, ddim_steps=7, noise=noise)
    # ε̂ ≡ 0 ⇒ each DDIM step multiplies by √(ᾱ_prev/ᾱ_t); the product telescopes to 1/√ᾱ_{T−1}
    assert torch.allclose(out, noise / model.alpha_bars[-1].sqrt(), rtol=1e-5)


def test_diffusion_loss_is_a_differentiable_scalar() -> None:
    model = small_model()
    loss = model.diffusion_loss(torch.randn(8, 3), torch.randn(8, 1), torch.Generator().manual_seed(1))
    loss.backward()
    assert loss.ndim == 0 and math.isfinite(loss.item())
    assert model.eps_net.x_enc[0].weight.grad is not None


# --- acquisition and search -----------------------------------------------------------------------------


def test_lcb_is_mean_minus_beta_std() -> None:
    samples = torch.tensor([[1.0, 2.0], [3.0, 2.0]])
    assert lcb(samples, beta=0.5).tolist() == pytest.approx([2.0 - 0.5, 2.0])


def test_evolutionary_search_climbs_inside_the_box() -> None:
    rng = np.random.default_rng(0)
    x_init = rng.uniform(-1, 0, size=(200, 2)).astype(np.float32)

    def score(x: np.ndarray) -> np.ndarray:
        return -np.sum((x - 0.5) ** 2, axis=1)

    lower, upper = np.full(2, -1.0, dtype=np.float32), np.full(2, 0.3, dtype=np.float32)
    pop = evolutionary_search(score, x_init, score(x_init), lower, upper, rng, population=32, elites=16, generations=40)
    assert pop.shape == (32, 2)
    assert np.all(pop >= lower) and np.all(pop <= upper)
    best = top_k(score, pop, 4)
    assert score(best).max() > score(x_init).max() and np.allclose(best[0], 0.3, atol=0.1)


def test_far_probes_are_far_from_every_training_design() -> None:
    x = torch.randn(300, 4, generator=torch.Generator().manual_seed(0))
    far = far_probes(x, 16, 3.0, torch.Generator().manual_seed(1))
    assert float(torch.cdist(far, x).min()) >= 3.0 - 1e-5


# --- tasks ----------------------------------------------------------------------------------------------


def test_continuous_task_hides_the_top_and_punishes_leaving_the_ball() -> None:
    task = make_continuous_task(3, n_pool=4000, n_train=500, n_heldout=100)
    oracle = task.oracle
    assert np.allclose(oracle(task.x), task.y, atol=1e-5)
    assert task.y.max() < task.y_max and task.normalize(task.y).max() < 0.75
    assert task.bounds.shape == (8, 2) and np.all(task.x >= task.bounds[:, 0])
    edge = oracle.direction * oracle.radius
    inside, outside = oracle(np.stack([edge, edge * 1.3]))
    assert outside < inside - 2.0  # the trend still rises along u, but 5·dist² ≈ 4.5 wins 0.3 R outside


def test_tfbind_task_enumerates_and_projects() -> None:
    task = make_tfbind_task(0, n_train=300, n_heldout=50)
    assert task.is_discrete and task.x.shape == (300, 32)
    assert np.allclose(task.oracle(task.x), task.y, atol=1e-5)
    projected = task.project_fn(task.x + np.random.default_rng(0).normal(0, 0.3, size=task.x.shape))
    assert set(np.unique(projected)) == {0.0, 1.0} and np.all(projected.reshape(300, 8, 4).sum(axis=2) == 1)
    assert np.array_equal(task.project_fn(projected), projected)
    tokens = np.array([[0, 1, 2, 3, 3, 2, 1, 0]])
    assert np.array_equal(onehot_to_tokens(tokens_to_onehot(tokens, 4), 4), tokens)


def test_npz_loader_round_trip_discrete(tmp_path: Path) -> None:
    task = make_tfbind_task(1, n_train=200, n_heldout=20)
    every = np.stack(np.meshgrid(*[np.arange(4)] * 8, indexing="ij"), axis=-1).reshape(-1, 8)
    path = tmp_path / "tfbind.npz"
    save_npz_task(task, path, oracle_x=every, oracle_y=task.oracle(tokens_to_onehot(every, 4)))
    loaded = load_npz_task(path)
    assert loaded.is_discrete and loaded.name == "tfbind"
    assert np.array_equal(loaded.x, task.x) and np.allclose(loaded.y, task.y)
    assert loaded.y_min == pytest.approx(task.y_min) and loaded.y_max == pytest.approx(task.y_max)
    assert np.array_equal(loaded.bounds, task.bounds) and np.array_equal(loaded.x_heldout, task.x_heldout)
    probe = tokens_to_onehot(np.random.default_rng(2).integers(0, 4, size=(50, 8)), 4)
    assert np.allclose(loaded.oracle(probe), task.oracle(probe))
    assert np.allclose(loaded.score(probe * 0.9), task.score(probe))


def test_npz_loader_round_trip_continuous(tmp_path: Path) -> None:
    task = make_continuous_task(2, n_pool=3000, n_train=300, n_heldout=30)
    path = tmp_path / "continuous.npz"
    save_npz_task(task, path, oracle_x=task.x, oracle_y=task.y)
    loaded = load_npz_task(path)
    assert not loaded.is_discrete and loaded.project_fn is None
    assert np.array_equal(loaded.x, task.x) and np.array_equal(loaded.bounds, task.bounds)
    assert np.allclose(loaded.oracle(task.x[:10]), task.y[:10])
    with pytest.raises(KeyError, match="oracle_entry"):
        loaded.oracle(task.x[:1] + 1.0)
    np.savez(tmp_path / "bare.npz", x=task.x, y=task.y, y_min=0.0, y_max=1.0)
    with pytest.raises(ValueError, match="no oracle"):
        load_npz_task(tmp_path / "bare.npz")
    with_entry = load_npz_task(tmp_path / "bare.npz", oracle_entry="numpy:sum")
    assert with_entry.y_max == 1.0 and np.array_equal(with_entry.bounds[:, 0], task.x.min(axis=0))


# --- params, config, analysis ---------------------------------------------------------------------------


def test_paper_scale_restores_official_constants() -> None:
    laptop = SpadeParams()
    paper = SpadeParams(scale="paper").effective()
    assert laptop.effective() == laptop
    for key, value in PAPER_CONSTANTS.items():
        assert getattr(paper, key) == value
    assert (paper.lr, paper.batch_size, paper.knn_k, paper.cal_samples, paper.cal_pairs) == (1e-3, 64, 10, 4, 32)
    assert (paper.acq_beta, paper.sup_sigma_a0, paper.sup_sigma_a1, paper.ea_sigma) == (0.1, 0.02, 0.005, 0.12)


def test_config_validates() -> None:
    config = load_config("spade")
    assert config.job == "spade" and config.entry == "raygent.jobs.spade.study:SpadeStudy"
    space = config.sweep.space
    assert space["calib"].grid == [0.0, 1.0] and space["support"].grid == [0.0, 1.0]
    assert len(space["seed"].grid) >= 3
    assert config.sweep.max_concurrent_trials == 2
    # the YAML spells out the defaults, so the reduced claim test below is relative to what `raygent sweep` runs
    assert config.study == SpadeParams()


def fake_results(
    full: float, wo_calib: float, wo_prox: float, base: float, frac: float, rho_gain: float = 0.1
) -> pd.DataFrame:
    rows = []
    for seed in range(3):
        for calib, support, score in [(0, 0, base), (0, 1, wo_calib), (1, 0, wo_prox), (1, 1, full)]:
            rows.append(
                {
                    "trial_id": f"t{seed}{calib}{support}",
                    "status": "TERMINATED",
                    "seed": seed,
                    "calib": float(calib),
                    "support": float(support),
                    "task": "continuous",
                    SCORE_MAX: score + 0.01 * seed,
                    SCORE_MEDIAN: score - 0.1,
                    OOD_FRAC_BELOW: frac if support else 0.5,
                    OOD_GAP: -1.0 if support else 0.2,
                    SPEARMAN: 0.5 + rho_gain * calib + 0.05 * support,
                }
            )
    return pd.DataFrame(rows)


def test_analyze_checks_can_pass_and_fail() -> None:
    study = SpadeStudy()
    good = study.analyze(fake_results(full=0.80, wo_calib=0.805, wo_prox=0.6, base=0.5, frac=1.0))
    assert good.holds and all(good.checks.values())
    assert good.evidence["Full/norm_max_per_seed"] == pytest.approx([0.80, 0.81, 0.82])
    worse = study.analyze(fake_results(full=0.80, wo_calib=0.83, wo_prox=0.6, base=0.5, frac=1.0))
    assert not worse.holds and not worse.checks["full_ge_wo_calib"]
    assert worse.checks["full_ge_base"] and worse.checks["full_ge_wo_prox"]
    loose = study.analyze(fake_results(full=0.80, wo_calib=0.7, wo_prox=0.6, base=0.9, frac=0.5))
    assert not loose.checks["full_ge_base"] and not loose.checks["ood_lcb_below_nearest"]
    one_optimistic = fake_results(full=0.80, wo_calib=0.7, wo_prox=0.6, base=0.5, frac=1.0)
    one_optimistic.loc[one_optimistic.index[-1], OOD_GAP] = 0.05  # a support trial whose far LCB is higher
    assert not study.analyze(one_optimistic).checks["ood_lcb_below_nearest"]
    missing = study.analyze(fake_results(0.8, 0.7, 0.6, 0.5, 1.0).query("calib == 0 or support == 0"))
    assert not missing.holds and missing.evidence["missing_arms"] == ["Full"]
    # calibrated arms average 0.525 + gain vs 0.525 uncalibrated
    assert good.checks["calib_raises_heldout_spearman"]
    assert good.evidence["calib_heldout_spearman_mean"] == pytest.approx(0.625)
    flat = study.analyze(fake_results(full=0.80, wo_calib=0.7, wo_prox=0.6, base=0.5, frac=1.0, rho_gain=-0.02))
    assert not flat.holds and not flat.checks["calib_raises_heldout_spearman"]
    no_heldout = fake_results(full=0.80, wo_calib=0.7, wo_prox=0.6, base=0.5, frac=1.0).drop(columns=[SPEARMAN])
    skipped = study.analyze(no_heldout)  # e.g. a real-data export without held-out designs
    assert skipped.holds and "calib_raises_heldout_spearman" not in skipped.checks


# --- whole trials ---------------------------------------------------------------------------------------

TINY = {
    "n_train": 256,
    "n_heldout": 64,
    "hidden": 32,
    "t_dim": 16,
    "epochs": 2,
    "acq_samples": 8,
    "ea_population": 16,
    "ea_elites": 8,
    "ea_generations": 3,
    "top_k": 8,
    "ood_probes": 8,
    "report_every": 1,
}


def test_trial_reports_checkpoints_and_metrics_on_both_tasks() -> None:
    study = SpadeStudy()
    reports = run_locally(study.trainable, {**TINY, "task": "continuous", "seed": 1})
    assert len(reports) == 2 and reports[0][TRAIN_EPOCH] == 1
    assert all(SpadeStudy.metric in report for report in reports)  # Ray Tune rejects results without it
    final = reports[-1]
    for key in (SCORE_MAX, SCORE_MEDIAN, OOD_FRAC_BELOW, OOD_GAP):
        assert math.isfinite(final[key])
    assert final[SCORE_MEDIAN] <= final[SCORE_MAX]
    discrete = run_locally(study.trainable, {**TINY, "task": "tfbind", "seed": 0, "calib": 0.0})[-1]
    assert math.isfinite(discrete[SCORE_MAX])


def test_trial_runs_on_a_saved_npz_export(tmp_path: Path) -> None:
    """The cluster path: `task: npz` with `task_path` reads a local export instead of generating a task."""
    task = make_tfbind_task(4, n_train=256, n_heldout=64)
    every = np.stack(np.meshgrid(*[np.arange(4)] * 8, indexing="ij"), axis=-1).reshape(-1, 8)
    path = tmp_path / "tfbind8.npz"
    save_npz_task(task, path, oracle_x=every, oracle_y=task.oracle(tokens_to_onehot(every, 4)))
    config = {**TINY, "task": "npz", "task_path": str(path), "seed": 4}
    from_file = run_locally(SpadeStudy().trainable, config)[-1]
    generated = run_locally(SpadeStudy().trainable, {**config, "task": "tfbind", "task_path": None})[-1]
    assert from_file[SCORE_MAX] == pytest.approx(generated[SCORE_MAX])
    assert from_file[SPEARMAN] == pytest.approx(generated[SPEARMAN])


def test_trainable_resumes_from_its_reported_state(monkeypatch: pytest.MonkeyPatch) -> None:
    config = {**TINY, "epochs": 3, "seed": 2}
    reports = run_locally(SpadeStudy().trainable, config)
    states: list[dict] = []
    monkeypatch.setattr(session, "report", lambda metrics, state=None: states.append(copy.deepcopy(state)))
    monkeypatch.setattr(session, "restore", lambda: None)
    SpadeStudy().trainable(config)
    assert [s["epoch"] for s in states[:-1]] == [1, 2] and states[-1] is None
    monkeypatch.undo()
    monkeypatch.setattr(session, "restore", lambda: states[1])
    resumed = run_locally(SpadeStudy().trainable, config)
    assert len(resumed) == 1
    untimed = [key for key in reports[-1] if not key.startswith("time/")]
    assert {k: resumed[-1][k] for k in untimed} == pytest.approx({k: reports[-1][k] for k in untimed})


# --- the claim ------------------------------------------------------------------------------------------

# The laptop default halved where the signal allows: hidden 64 and 5 DDIM steps (training and acquisition),
# 32 acquisition samples; data size, epochs and the 64 × 100 evolutionary search are the YAML's.
REDUCED = {
    "hidden": 64,
    "t_dim": 32,
    "cal_ddim_steps": 5,
    "acq_ddim_steps": 5,
    "acq_samples": 32,
    "n_heldout": 200,
    "ood_probes": 32,
    "report_every": 100,
}


# Robustness, measured on four seed sets of this grid ({0,1,2}, {3,4,5}, {6,7,8}, {9,10,11}): the checks below
# held on all four, and so did "both support arms beat both arms without it". `full_ge_wo_calib` held on three:
# on {9,10,11} one Full trial escaped the support (Full −1.87 vs w/o Calib −0.97 on average), so the verdict
# reports it but this test does not assert it.
ROBUST_CHECKS = ("full_ge_base", "full_ge_wo_prox", "ood_lcb_below_nearest", "calib_raises_heldout_spearman")


@pytest.mark.slow
def test_ablation_claim_shape_on_a_reduced_grid(tmp_path: Path) -> None:
    study = SpadeStudy()
    grid = {"calib": [0.0, 1.0], "support": [0.0, 1.0], "seed": [0, 1, 2]}
    results = grid_locally(study, REDUCED, grid)
    assert (results["status"] == "TERMINATED").all() and len(results) == 12
    verdict = study.analyze(results)
    assert set(verdict.checks) == {*ROBUST_CHECKS, "full_ge_wo_calib"}
    assert {name: verdict.checks[name] for name in ROBUST_CHECKS} == dict.fromkeys(ROBUST_CHECKS, True)
    means = {label: verdict.evidence[f"{label}/norm_max_mean"] for label in ("Base", "w/o Calib", "w/o Prox", "Full")}
    assert min(means["Full"], means["w/o Calib"]) > max(means["Base"], means["w/o Prox"])
    # the conservatism comes from the support term: without it the far-out LCB is not reliably lower
    assert verdict.evidence["Full/ood_gap_mean"] < verdict.evidence["w/o Prox/ood_gap_mean"]
    study.plot(results, tmp_path / "spade.png")
    assert (tmp_path / "spade.png").stat().st_size > 10_000
