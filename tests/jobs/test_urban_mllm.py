"""UrbanMLLM study: SynthCity views, documents and tasks, the perceiver and the projector, config, claim."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from raygent.jobs.urban_mllm import UrbanMLLMParams, UrbanMLLMStudy
from raygent.jobs.urban_mllm.city import COLOURS, HEADINGS, TILE, ahead, make_city, satellite, street
from raygent.jobs.urban_mllm.model import UrbanMLLM, answer
from raygent.jobs.urban_mllm.study import CROSS_ACC, METRICS, SINGLE_ACC, task_column
from raygent.jobs.urban_mllm.tokens import STREET, TASKS, VOCAB, WORDS, Corpus
from raygent.jobs.urban_mllm.train import CHOICES, StageSettings, evaluate, instruction_tune, pretrain
from raygent.platform.cli import main
from raygent.platform.config import ConfigError, load_config
from raygent.platform.session import grid_locally

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus(0, 2, 8)


# --- SynthCity ----------------------------------------------------------------------------------------


def test_ahead_is_front_left_front_front_right_for_each_heading() -> None:
    assert ahead(2, 2, 0) == [(1, 1), (1, 2), (1, 3)]  # north: left is west
    assert ahead(2, 2, 1) == [(1, 3), (2, 3), (3, 3)]  # east: left is north
    assert ahead(2, 2, 2) == [(3, 3), (3, 2), (3, 1)]  # south: left is east
    assert ahead(2, 2, 3) == [(3, 1), (2, 1), (1, 1)]  # west: left is south


def test_views_show_the_cells_they_claim() -> None:
    rng = np.random.default_rng(0)
    city = make_city(rng, 10)
    assert city.land_use.shape == (10, 10) and city.height.min() >= 0 and city.height.max() <= 10
    tile = satellite(city, 3, 4, rng)
    assert tile.shape == (3, 16, 16)
    # each cell's block is its land-use colour scaled by its height
    for r in range(TILE):
        for c in range(TILE):
            shade = 0.55 + 0.045 * city.height[3 + r, 4 + c]
            expected = np.clip(COLOURS[city.land_use[3 + r, 4 + c]] * shade, 0, 1)
            np.testing.assert_allclose(tile[:, 4 * r + 2, 4 * c + 2], expected, atol=0.15)
    view = street(city, 5, 5, 1, rng)
    for slot, (r, c) in enumerate(ahead(5, 5, 1)):  # the bar's foot: land-use colour, or green for greenery
        foot = view[:, 12, (2, 7, 13)[slot]]
        expected = (0.1, 0.6, 0.1) if city.greenery[r, c] > 0.5 else COLOURS[city.land_use[r, c]]
        np.testing.assert_allclose(foot, expected, atol=0.15)
        sky = np.abs(view[:, :13, (2, 7, 13)[slot]] - np.array([0.65, 0.8, 0.95])[:, None]).max(axis=0) < 0.15
        assert 13 - sky.sum() == max(1, round(1.2 * float(city.height[r, c])))  # bar height = building height


def test_documents_and_tasks(corpus: Corpus) -> None:
    rng = np.random.default_rng(1)
    pairs = corpus.pretrain_batch("pairs", rng, 4)
    assert len(pairs.images) == 1 and VOCAB["facing"] not in pairs.text
    doc = corpus.pretrain_batch("interleaved", rng, 4)
    assert [k for k, _ in doc.layout].count("img") == 3 and doc.kinds[1:] == [STREET, STREET]
    assert doc.context == [-1, 0, 0]  # the street views may look at the tile
    facing = np.flatnonzero(doc.text[0] == VOCAB["facing"])
    assert len(facing) == 2 and all(WORDS[doc.text[0, i + 1]] in HEADINGS for i in facing)
    assert doc.loss_mask[1:].all() and not doc.loss_mask[0]
    for task in TASKS:
        batch, truth = corpus.task_batch(task, rng, 6)
        assert (batch.text[:, -1] == truth).all() and batch.loss_mask.sum() == 1 and batch.loss_mask[-1]
        assert set(truth.tolist()) <= set(CHOICES[task])
    match, truth = corpus.task_batch("cross_match", rng, 8)
    slots = truth - VOCAB["A"]
    for b in range(8):  # the true view is a street view inside the tile; no distractor sees only the tile's cells
        assert any(np.array_equal(match.images[1 + int(slots[b])][b], v) for v in corpus.street.reshape(-1, 3, 16, 16))
    with pytest.raises(ValueError, match="unknown task"):
        corpus.task_batch("ocr", rng, 2)


# --- the model ----------------------------------------------------------------------------------------


def test_perceiver_gives_k_tokens_per_image_and_concat_sixteen(corpus: Corpus) -> None:
    batch, _ = corpus.task_batch("cross_heading", np.random.default_rng(2), 3)
    torch.manual_seed(0)
    for latents, width in ((0, 16), (4, 4)):
        model = UrbanMLLM(latents, vision_dim=16, hidden=32, layers=1, heads=2)
        tokens = model.visual_tokens(batch)
        assert [t.shape for t in tokens] == [torch.Size([3, width, 32])] * 2
        logits, target, mask = model(batch)
        assert logits.shape[:2] == target.shape and mask.shape == (target.shape[1],) and int(mask.sum()) == 1


def test_the_answer_does_not_see_itself_and_the_street_latents_see_the_tile(corpus: Corpus) -> None:
    batch, _ = corpus.task_batch("cross_heading", np.random.default_rng(3), 4)
    torch.manual_seed(0)
    model = UrbanMLLM(4, vision_dim=16, hidden=32, layers=1, heads=2).eval()
    first = answer(model, batch, CHOICES["cross_heading"])
    batch.text[:, -1] = VOCAB["north"]
    torch.testing.assert_close(answer(model, batch, CHOICES["cross_heading"]), first)
    street_tokens = model.visual_tokens(batch)[1]
    batch.images[0] = np.zeros_like(batch.images[0])  # another tile changes the street view's latents
    assert not torch.allclose(model.visual_tokens(batch)[1], street_tokens)


def test_training_stages_lower_their_losses(corpus: Corpus) -> None:
    torch.manual_seed(0)
    model = UrbanMLLM(4, vision_dim=16, hidden=32, layers=1, heads=2)
    chance = float(np.log(len(VOCAB)))
    assert pretrain(model, corpus, "interleaved", StageSettings(50, 8, 3e-3), seed=0)[0] < chance
    losses = instruction_tune(model, corpus, StageSettings(100, 8, 3e-3), seed=0)
    assert len(losses) == 2 and losses[-1] < losses[0]
    scores = evaluate(model, corpus, 20, seed=1)
    assert set(scores) == set(TASKS) and all(0.0 <= v <= 1.0 for v in scores.values())


# --- config, analysis and the claim -------------------------------------------------------------------


def test_yaml_config_validates_and_sweeps_k_and_pretraining() -> None:
    config = load_config("urban_mllm")
    assert config.entry == "raygent.jobs.urban_mllm.study:UrbanMLLMStudy"
    space = config.sweep.space
    assert {0, 16} <= set(space["latents"].grid) and set(space["pretrain"].grid) == {"pairs", "interleaved"}
    assert len(space["seed"].grid) >= 3
    assert config.study == UrbanMLLMParams()
    assert not set(METRICS) & set(UrbanMLLMParams.model_fields)
    paper = UrbanMLLMParams(scale="paper").resolved()
    assert paper.city_size == 32 and paper.hidden == 128
    assert UrbanMLLMParams(scale="paper", hidden=96).resolved().hidden == 96


def test_a_bad_config_exits_2_naming_the_key(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError, match="pretrain"):
        load_config("urban_mllm", ["study.pretrain=captions"])
    with pytest.raises(SystemExit) as exit_info:
        main(["sweep", "urban_mllm", "study.latents=-1"])
    assert exit_info.value.code == 2
    assert "latents" in capsys.readouterr().err


def fake_results(cross: dict[tuple[int, str], float], single: dict[tuple[int, str], float]) -> pd.DataFrame:
    rows = []
    for seed in (0, 1):
        for (k, mode), value in cross.items():
            row: dict[str, object] = {"status": "TERMINATED", "latents": k, "pretrain": mode, "seed": seed}
            row.update({name: 0.5 for name in METRICS})
            row[CROSS_ACC], row[SINGLE_ACC] = value + 0.01 * seed, single[(k, mode)]
            rows.append(row)
    return pd.DataFrame(rows)


CELLS = [(0, "pairs"), (0, "interleaved"), (8, "interleaved"), (16, "pairs"), (16, "interleaved")]


def test_analyze_checks_each_part_of_the_claim() -> None:
    study = UrbanMLLMStudy()
    single = dict.fromkeys(CELLS, 0.8)
    good = study.analyze(fake_results(dict(zip(CELLS, (0.3, 0.32, 0.35, 0.33, 0.4), strict=True)), single))
    assert good.holds and good.evidence["cross_view_gain"] == pytest.approx(0.1)
    assert good.evidence["cross_view_by_K_interleaved"] == pytest.approx({"0": 0.325, "8": 0.355, "16": 0.405})
    small = study.analyze(fake_results(dict(zip(CELLS, (0.3, 0.32, 0.33, 0.33, 0.34), strict=True)), single))
    assert not small.checks["cross_view_gain_5pts"] and small.checks["cross_view_nondecreasing_in_K"]
    dip = study.analyze(fake_results(dict(zip(CELLS, (0.3, 0.32, 0.45, 0.33, 0.4), strict=True)), single))
    assert not dip.checks["cross_view_nondecreasing_in_K"] and not dip.holds
    hurt = study.analyze(
        fake_results(dict(zip(CELLS, (0.3, 0.32, 0.35, 0.33, 0.4), strict=True)), {**single, (16, "interleaved"): 0.77})
    )
    assert not hurt.checks["single_view_not_hurt_2pts"]
    missing = study.analyze(fake_results({(0, "pairs"): 0.3}, {(0, "pairs"): 0.8}))
    assert not missing.holds and missing.checks == {"grid_complete": False}
    assert task_column("cross_match") == "acc_cross_match"


REDUCED = {"cities": 3, "eval_cities": 1, "city_size": 10, "pretrain_steps": 120, "tune_steps": 200, "n_eval": 100}


@pytest.fixture(scope="module")
def reduced_grid() -> pd.DataFrame:
    fixed = {**load_config("urban_mllm").study.model_dump(), **REDUCED}
    arms = [
        grid_locally(UrbanMLLMStudy(), fixed, {"latents": [k], "pretrain": [p], "seed": [0, 1]})
        for k, p in ((0, "pairs"), (16, "interleaved"))
    ]
    return pd.concat(arms, ignore_index=True)


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="the cross-view gain is absent on the reduced grid (seed 0: 0.22 vs 0.21); "
    "not established at laptop scale, docs/study_urban_mllm.md",
)
def test_claim_shape_on_a_reduced_grid(reduced_grid: pd.DataFrame) -> None:
    assert (reduced_grid["status"] == "TERMINATED").all()
    by = reduced_grid.set_index(["latents", "pretrain", "seed"])
    for seed in (0, 1):
        assert by.loc[(16, "interleaved", seed), CROSS_ACC] >= by.loc[(0, "pairs", seed), CROSS_ACC] + 0.05


@pytest.mark.slow
def test_plot_writes_a_png(reduced_grid: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "urban_mllm.png"
    UrbanMLLMStudy().plot(reduced_grid, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
