"""PRISM study [rec]: the sensor oracle, the losses, the metrics, the config and the verdict's checks (the claim on a
reduced grid is `bench/prism_grid.py`: a study outcome moves with seeds, so it is measured, not asserted)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from raygent.jobs.prism import PrismParams, PrismStudy
from raygent.jobs.prism.model import (
    NoiseUNet,
    gaussian_nll,
    hierarchical_mask_loss,
    noise_loss,
    positive_weight,
    single_head_loss,
)
from raygent.jobs.prism.scenes import (
    DARK,
    MATTE,
    TRANSPARENT,
    Z_MAX,
    discontinuities,
    make_batch,
    render_scene,
    sensor,
    stereo_shadow,
)
from raygent.jobs.prism.study import (
    ACC_CLEAN,
    ACC_GAUSSIAN,
    ACC_SENSOR,
    ACC_SYNTH,
    MASK_F1,
    MASK_PRECISION,
    MASK_RECALL,
    METRICS,
    W1_DZ,
)
from raygent.jobs.prism.train import error_w1, mask_scores, synthesise
from raygent.platform.config import load_config

# --- scenes and the sensor oracle ---------------------------------------------------------------------


def test_batches_follow_the_seed_only() -> None:
    first, again, other = make_batch(3, 6, 16), make_batch(3, 6, 16), make_batch(4, 6, 16)
    np.testing.assert_array_equal(first.real, again.real)
    np.testing.assert_array_equal(first.rgb, again.rgb)
    assert not np.array_equal(first.depth, other.depth)
    assert first.inputs().shape == (6, 5, 16, 16) and first.inputs().dtype == np.float32
    assert set(np.unique(first.label)) <= {0, 1, 2}
    # invalid pixels read 0, valid ones stay near the clean depth
    assert (first.real[first.invalid] == 0).all()
    valid = ~first.invalid
    assert np.median(np.abs(first.real[valid] - first.depth[valid])) < 0.1


def _flat_scene(size: int = 16, depth: float = 2.0, material: int = MATTE) -> dict[str, np.ndarray | int]:
    return {
        "depth": np.full((size, size), depth),
        "material": np.full((size, size), material),
        "view_cos": np.full((size, size), 0.5),
        "rgb": np.zeros((3, size, size)),
        "label": 0,
    }


def test_sensor_invalidates_by_material_and_range() -> None:
    rng = np.random.default_rng(0)
    scene = _flat_scene()
    material = np.asarray(scene["material"]).copy()
    material[2:5, 2:5] = DARK
    material[8:10, 8:10] = TRANSPARENT
    depth = np.asarray(scene["depth"]).copy()
    depth[12:, 12:] = Z_MAX + 1.0
    real, invalid = sensor(rng, {**scene, "material": material, "depth": depth})
    assert invalid[2:5, 2:5].all() and invalid[8:10, 8:10].all()
    # the far corner is out of range; its step to the near plane is a discontinuity (its edge pixels may go too)
    assert invalid[13:, 13:].all()
    interior = np.zeros_like(invalid)
    interior[0:2, 6:12] = True
    assert not invalid[interior].any() and np.all(np.abs(real[interior] - 2.0) < 0.3)


def test_stereo_shadow_lies_right_of_a_near_surface() -> None:
    depth = np.full((4, 20), 4.0)
    depth[:, 5:10] = 1.0  # near strip; disparity 4 vs 1 px: pixels k < 3 px right of it are hidden
    shadow = stereo_shadow(depth, baseline_focal=4.0)
    assert shadow[:, 10:12].all() and not shadow[:, 12:].any() and not shadow[:, :10].any()
    assert discontinuities(depth)[:, [4, 5, 9, 10]].all() and not discontinuities(depth)[:, 15].any()


def test_render_scene_has_the_target_near_the_centre() -> None:
    rng = np.random.default_rng(1)
    for _ in range(5):
        scene = render_scene(rng, 32)
        depth = np.asarray(scene["depth"])
        assert depth.shape == (32, 32) and (depth > 0).all()
        assert depth[12:20, 12:20].min() < 2.8  # an object in front of the background (z ≥ 2.4 at the centre)


# --- losses and metrics -------------------------------------------------------------------------------


def test_positive_weight_is_the_class_ratio_to_gamma() -> None:
    invalid = torch.tensor([True, False, False, False])
    assert float(positive_weight(invalid, 0.0)) == 1.0
    assert float(positive_weight(invalid, 1.0)) == pytest.approx(3.0)
    assert float(positive_weight(invalid, 0.5)) == pytest.approx(3.0**0.5)
    assert float(positive_weight(torch.zeros(4, dtype=torch.bool), 1.0)) == 1.0


def test_hierarchical_loss_at_one_level_is_weighted_bce() -> None:
    torch.manual_seed(0)
    logit = torch.randn(2, 8, 8)
    invalid = torch.rand(2, 8, 8) < 0.2
    weight = positive_weight(invalid, 1.0)
    expected = F.binary_cross_entropy_with_logits(logit, invalid.float(), pos_weight=weight)
    assert float(hierarchical_mask_loss(logit, invalid, 1.0, 1)) == pytest.approx(float(expected), rel=1e-6)
    # coarser levels add terms: a prediction right at full resolution but wrong when pooled is penalised
    assert float(hierarchical_mask_loss(logit, invalid, 1.0, 3)) != pytest.approx(float(expected))
    with pytest.raises(ValueError, match="levels"):
        hierarchical_mask_loss(logit, invalid, 1.0, 0)


def test_positive_weighting_pushes_uncertain_pixels_to_invalid() -> None:
    # 100 surely-valid pixels and 10 uncertain ones (3 invalid): plain BCE's optimum for the uncertain class is
    # p = 0.3; with w+ = 107 / 3 it moves far above 0.5 (invalid recall up)
    invalid = torch.zeros(1, 1, 110, dtype=torch.bool)
    invalid[0, 0, 100:103] = True
    uncertain = torch.zeros(1, 1, 110, dtype=torch.bool)
    uncertain[0, 0, 100:] = True
    for gamma, expected in ((0.0, 0.3), (1.0, 107 * 0.3 / (107 * 0.3 + 3 * 0.7))):
        logits = torch.zeros(2, requires_grad=True)
        optimizer = torch.optim.Adam([logits], lr=0.1)
        for _ in range(400):
            loss = hierarchical_mask_loss(torch.where(uncertain, logits[1], logits[0]), invalid, gamma, 1)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        assert float(torch.sigmoid(logits[1])) == pytest.approx(expected, abs=0.02)


def test_gaussian_nll_is_minimal_at_the_target_and_ignores_invalid_pixels() -> None:
    target = torch.tensor([[1.0, -2.0]])
    valid = torch.tensor([[1.0, 0.0]])
    at = gaussian_nll(torch.tensor([[1.0, 5.0]]), torch.zeros(1, 2), target, valid)
    off = gaussian_nll(torch.tensor([[2.0, -2.0]]), torch.zeros(1, 2), target, valid)
    assert float(at) == pytest.approx(0.0) and float(off) == pytest.approx(0.5)


def test_single_head_loss_weights_invalid_targets() -> None:
    pred = torch.tensor([[0.5, 0.5]])
    real = torch.tensor([[0.0, 0.4]])
    invalid = torch.tensor([[True, False]])
    assert float(single_head_loss(pred, real, invalid, 0.0)) == pytest.approx((0.5 + 0.1) / 2)
    assert float(single_head_loss(pred, real, invalid, 1.0)) == pytest.approx((0.5 * 1.0 + 0.1) / 2)
    invalid4 = torch.tensor([[True, False, False, False]])
    loss = single_head_loss(torch.ones(1, 4), torch.zeros(1, 4), invalid4, 1.0)
    assert float(loss) == pytest.approx((3.0 + 3.0) / 4)


def test_network_heads_and_loss_shapes() -> None:
    batch = make_batch(0, 3, 16)
    for heads, channels in (("dual", 3), ("single", 1)):
        model = NoiseUNet(5, 4, heads)
        output = model(torch.from_numpy(batch.inputs()))
        assert output.shape == (3, channels, 16, 16)
        loss = noise_loss(
            output,
            torch.from_numpy(batch.real / Z_MAX),
            torch.from_numpy(batch.depth / Z_MAX),
            torch.from_numpy(batch.invalid),
            heads,
            0.5,
            2,
        )
        assert loss.ndim == 0 and torch.isfinite(loss)
        depth, invalid = synthesise(model, batch, seed=0)
        assert depth.shape == (3, 16, 16) and (depth[invalid] == 0).all()


def test_mask_scores_and_w1() -> None:
    actual = np.array([True, True, False, False])
    scores = mask_scores(np.array([True, False, True, False]), actual)
    assert scores == pytest.approx({"precision": 0.5, "recall": 0.5, "f1": 0.5})
    assert mask_scores(np.zeros(4, dtype=bool), actual)["f1"] == 0.0
    clean = np.ones(6)
    real = clean + np.array([0.1, -0.1, 0.2, 0.0, 0.0, 0.0])
    none = np.zeros(6, dtype=bool)
    assert error_w1(clean, real, none, real.copy(), none) == pytest.approx(0.0)
    assert error_w1(clean, real, none, clean + 0.05 + (real - clean), none) == pytest.approx(0.05)


# --- config, analysis and the claim -------------------------------------------------------------------


def test_yaml_config_validates_and_sweeps_the_ablation() -> None:
    config = load_config("prism")
    assert config.entry == "raygent.jobs.prism.study:PrismStudy"
    space = config.sweep.space
    assert set(space["heads"].grid) == {"dual", "single"}
    assert {0.0, PrismParams().gamma} <= set(space["gamma"].grid)
    assert len(space["seed"].grid) >= 3
    assert not set(METRICS) & set(PrismParams.model_fields)
    paper = PrismParams(scale="paper").resolved()
    assert paper.image_size == 64 and paper.n_train == 3000
    assert PrismParams(scale="paper", n_train=50).resolved().n_train == 50


def fake_results(recall0: float, recall: float, w1_single: float, synth: float) -> pd.DataFrame:
    rows = []
    for seed in (0, 1):
        for heads, gamma, rec, w1 in (
            ("dual", 0.0, recall0, 0.01),
            ("dual", 0.5, recall, 0.01),
            ("single", 0.5, 0.7, w1_single),
        ):
            rows.append(
                {
                    "status": "TERMINATED",
                    "heads": heads,
                    "gamma": gamma,
                    "levels": 3,
                    "seed": seed,
                    MASK_RECALL: rec,
                    MASK_PRECISION: 0.8,
                    MASK_F1: 2 * rec * 0.8 / (rec + 0.8),
                    W1_DZ: w1,
                    ACC_CLEAN: 0.4,
                    ACC_GAUSSIAN: 0.45,
                    ACC_SYNTH: synth,
                    ACC_SENSOR: 0.9,
                }
            )
    return pd.DataFrame(rows)


def test_analyze_checks_each_part_of_the_claim() -> None:
    study = PrismStudy()
    good = study.analyze(fake_results(0.7, 0.8, 0.05, 0.7))
    assert good.holds and all(good.checks.values())
    flat = study.analyze(fake_results(0.8, 0.8, 0.05, 0.7))
    assert not flat.holds and not flat.checks["weighting_raises_recall"] and not flat.checks["weighting_raises_f1"]
    single_better = study.analyze(fake_results(0.7, 0.8, 0.001, 0.7))
    assert not single_better.checks["dual_head_w1_below_single"] and not single_better.holds
    weak = study.analyze(fake_results(0.7, 0.8, 0.05, 0.42))
    assert weak.checks["downstream_synth_beats_clean"] and not weak.checks["downstream_synth_beats_gaussian"]
    missing = study.analyze(fake_results(0.7, 0.8, 0.05, 0.7).query("heads == 'dual'"))
    assert not missing.holds and missing.checks == {"grid_complete": False}


def test_plot_writes_a_png(tmp_path: Path) -> None:
    path = tmp_path / "prism.png"
    PrismStudy().plot(fake_results(0.7, 0.8, 0.05, 0.7), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
