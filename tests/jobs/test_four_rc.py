"""4RC study: the generated clips' 4D ground truth, the factorised and direct decoders, costs, config, claim shape."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from raygent.jobs.four_rc import FourRCParams, FourRCStudy
from raygent.jobs.four_rc.model import FourRC, epe, epe_loss, fourier
from raygent.jobs.four_rc.scenes import BACKGROUND, DEPTH_OFFSET, make_clips
from raygent.jobs.four_rc.study import (
    EPE_DYNAMIC,
    EPE_FRACTIONAL,
    EPE_INTEGER,
    FRACTIONAL_RATIO,
    METRICS,
    QUERY_FLOP_RATIO,
    QUERY_TIME_RATIO,
    offset_column,
)
from raygent.jobs.four_rc.train import TrainSettings, costs, evaluate, train
from raygent.platform.config import load_config
from raygent.platform.session import grid_locally

# --- generated clips ----------------------------------------------------------------------------------


def test_clips_follow_the_seed_and_carry_rgbd_points() -> None:
    clips, again = make_clips(5, 4, 3, 8), make_clips(5, 4, 3, 8)
    np.testing.assert_array_equal(clips.video, again.video)
    assert clips.video.shape == (4, 3, 6, 8, 8) and clips.points.shape == (4, 3, 8, 8, 3)
    # the last three input channels are the unprojected depth, offset in z
    unprojected = clips.video[:, :, 3:].transpose(0, 1, 3, 4, 2) + np.array([0, 0, DEPTH_OFFSET])
    np.testing.assert_allclose(unprojected, clips.points, atol=1e-5)
    assert not np.array_equal(make_clips(6, 4, 3, 8).video, clips.video)


def test_targets_move_sphere_pixels_with_their_sphere_and_keep_the_background() -> None:
    clips = make_clips(0, 16, 4, 16)
    n = len(clips)
    frame = np.zeros(n, dtype=int)
    np.testing.assert_allclose(clips.target(frame, np.zeros(n)), clips.points[:, 0], atol=1e-6)
    tau = np.full(n, 2.5)
    target = clips.target(frame, tau)
    background = clips.owner[:, 0] == BACKGROUND
    np.testing.assert_allclose(target[background], clips.points[:, 0][background], atol=1e-6)
    # a sphere pixel moves by exactly its sphere's centre displacement: distance to the centre is preserved
    centres_then, centres_now = clips.centres(0.0), clips.centres(tau)
    for n_index, y, x in zip(*np.nonzero(~background), strict=True):
        s = clips.owner[n_index, 0, y, x]
        before = np.linalg.norm(clips.points[n_index, 0, y, x] - centres_then[n_index, s])
        after = np.linalg.norm(target[n_index, y, x] - centres_now[n_index, s])
        assert after == pytest.approx(before, abs=1e-4)
    # sphere pixels do move by frame 3
    integer = clips.target(frame, np.full(n, 3.0))
    moved = ~background
    assert np.abs(np.linalg.norm(integer - clips.points[:, 0], axis=-1)[moved]).max() > 0.05


# --- the model ----------------------------------------------------------------------------------------


def small_model(variant: str, seed: int = 0) -> FourRC:
    torch.manual_seed(seed)
    return FourRC(variant, frames=4, size=8, patch=4, width=16, encoder_layers=1, decoder_layers=1)


def test_fourier_features() -> None:
    features = fourier(torch.tensor([0.0, 1.0]), 3)
    assert features.shape == (2, 6)
    np.testing.assert_allclose(features[0].numpy(), [0, 0, 0, 1, 1, 1], atol=1e-7)


def test_factorised_motion_is_exactly_zero_at_the_query_frame_time() -> None:
    clips = make_clips(1, 3, 4, 8)
    model = small_model("factorised")
    encoding = model.encode(torch.from_numpy(clips.video))
    frame = torch.tensor([0, 2, 3])
    points, base = model.query(encoding, frame, frame.float())
    assert base is not None
    torch.testing.assert_close(points, base)
    later, _ = model.query(encoding, frame, frame.float() + 0.5)
    assert not torch.allclose(later, base)
    direct_points, direct_base = small_model("direct").query(
        small_model("direct").encode(torch.from_numpy(clips.video)), frame, frame.float()
    )
    assert direct_base is None and direct_points.shape == (3, 8, 8, 3)


def test_query_reads_the_cached_encoding_only() -> None:
    clips = make_clips(2, 2, 4, 8)
    model = small_model("direct").eval()
    encoding = model.encode(torch.from_numpy(clips.video))
    frame, tau = torch.tensor([1, 3]), torch.tensor([0.5, 2.0])
    first, _ = model.query(encoding, frame, tau)
    # the same encoding answers the query identically; each clip's answer does not depend on the other clip
    again, _ = model.query(encoding, frame, tau)
    torch.testing.assert_close(first, again)
    single = model.encode(torch.from_numpy(clips.video[1:]))
    alone, _ = model.query(single, frame[1:], tau[1:])
    torch.testing.assert_close(alone, first[1:], atol=1e-5, rtol=1e-5)


def test_epe_and_loss() -> None:
    a = torch.zeros(1, 2, 1, 3)
    b = torch.tensor([[[[3.0, 4.0, 0.0]], [[0.0, 0.0, 1.0]]]])
    assert float(epe(a, b)) == pytest.approx(3.0)
    assert float(epe_loss(a, None, b, a)) == pytest.approx(3.0)
    assert float(epe_loss(a, a, b, b)) == pytest.approx(6.0)


def test_training_lowers_the_error_and_queries_are_cheap() -> None:
    clips = make_clips(3, 32, 4, 8)
    test = make_clips(4, 8, 4, 8)
    model = small_model("factorised")
    before = evaluate(model, test)[EPE_INTEGER]
    losses = train(model, clips, TrainSettings(steps=50, batch_size=8, queries=2, lr=3e-3), seed=0)
    after = evaluate(model, test)
    assert after[EPE_INTEGER] < 0.5 * before and len(losses) == 1  # one loss logged every 50 steps
    assert set(after["epe_by_offset"]) == {"0.5", "1", "1.5", "2", "2.5", "3"}
    cost = costs(model, test.video[:1], repeats=2)
    assert 0 < cost["query_flops"] < cost["encode_flops"]


# --- config, analysis and the claim -------------------------------------------------------------------


def test_yaml_config_validates_and_sweeps_the_variant() -> None:
    config = load_config("four_rc")
    assert config.entry == "raygent.jobs.four_rc.study:FourRCStudy"
    assert set(config.sweep.space["variant"].grid) == {"factorised", "direct"}
    assert len(config.sweep.space["seed"].grid) >= 3
    assert not set(METRICS) & set(FourRCParams.model_fields)
    assert FourRCParams(scale="paper").resolved().image_size == 32
    assert offset_column(1.5) == "epe_offset_1p5" and offset_column(2.0) == "epe_offset_2"


def fake_results(factorised: float, direct: float, ratio: float, flops: float) -> pd.DataFrame:
    rows = []
    for seed in (0, 1, 2):
        for variant, value in (("factorised", factorised), ("direct", direct)):
            rows.append(
                {
                    "status": "TERMINATED",
                    "variant": variant,
                    "seed": seed,
                    EPE_INTEGER: value,
                    EPE_FRACTIONAL: value * ratio,
                    EPE_DYNAMIC: 2 * value,
                    FRACTIONAL_RATIO: ratio,
                    QUERY_FLOP_RATIO: flops,
                    QUERY_TIME_RATIO: 0.4,
                    "final_loss": 0.1,
                    "train_seconds": 1.0,
                    offset_column(0.5): value * 0.8,
                    offset_column(1.0): value,
                }
            )
    return pd.DataFrame(rows)


def test_analyze_checks_each_part_of_the_claim() -> None:
    study = FourRCStudy()
    good = study.analyze(fake_results(0.08, 0.10, 1.1, 0.07))
    assert good.holds and good.evidence["epe_gain_vs_direct"] == pytest.approx(0.2)
    assert not study.analyze(fake_results(0.10, 0.08, 1.1, 0.07)).checks["factorised_beats_direct"]
    assert not study.analyze(fake_results(0.08, 0.10, 1.6, 0.07)).checks["fractional_within_1.5x"]
    assert not study.analyze(fake_results(0.08, 0.10, 1.1, 0.3)).checks["query_cost_below_0.2x_encode"]
    missing = study.analyze(fake_results(0.08, 0.10, 1.1, 0.07).query("variant == 'direct'"))
    assert not missing.holds and missing.checks == {"grid_complete": False}


REDUCED = {
    "frames": 4,
    "image_size": 8,
    "n_clips": 300,
    "n_test": 30,
    "width": 32,
    "encoder_layers": 2,
    "decoder_layers": 1,
    "steps": 300,
    "batch_size": 16,
}


@pytest.fixture(scope="module")
def reduced_grid() -> pd.DataFrame:
    fixed = {**load_config("four_rc").study.model_dump(), **REDUCED}
    return grid_locally(FourRCStudy(), fixed, {"variant": ["factorised", "direct"], "seed": [0, 1]})


@pytest.mark.slow  # a reduced sweep: in `make test`, not in the edit loop
def test_claim_shape_on_a_reduced_grid(reduced_grid: pd.DataFrame) -> None:
    assert (reduced_grid["status"] == "TERMINATED").all()
    verdict = FourRCStudy().analyze(reduced_grid)
    assert verdict.checks["fractional_within_1.5x"] and verdict.checks["query_cost_below_0.2x_encode"]
    assert verdict.checks["factorised_beats_direct"]
    assert verdict.evidence["factorised_epe_rises_with_offset"]


@pytest.mark.slow  # a reduced sweep: in `make test`, not in the edit loop
def test_plot_writes_a_png(reduced_grid: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "four_rc.png"
    FourRCStudy().plot(reduced_grid, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
