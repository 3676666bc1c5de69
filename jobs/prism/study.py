"""PRISM (depth-sensor noise synthesis: sensing invalidation vs measurement inaccuracy) as a Tune study [rec].

The paper was not found in any readable source; the study is the reconstruction of docs/studies.md (PRISM).
One trial renders the seed's scenes (`scenes.py`), captures them with the sensor oracle, trains one noise model
(`heads` dual or single, positive weight `gamma`, `levels` pyramid scales), and reports on held-out scenes:

- the invalid-mask precision, recall and F1 of the synthesis against the sensor;
- `w1_dz`: the Wasserstein-1 distance between the synthesised and the sensor's depth-error distributions;
- the downstream shape-classifier accuracy on sensor captures when it is trained on clean depth, on depth plus
  Gaussian noise, on depth synthesised by this trial's noise model (masks sampled), and, as the ceiling, on the
  sensor's own captures of the training scenes.

`analyze` checks the claim at the parameter model's default positive weight (γ = 0.5) against γ = 0, averaging
over seeds: weighting raises invalid recall and F1 (dual head); the dual head's W1 is below the single head's;
PRISM-synthesised training beats Gaussian-noise and clean training downstream.

`scale: paper` is the same code with the sizes of §9 of the notes (64 × 64 scenes, 3k training images, wider
U-Net); real sensor data would replace `scenes.make_batch` by a loader of (RGB, clean depth, sensor depth)
triples, which this reconstruction does not ship.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
import torch
from pydantic import Field

from raygent.jobs.prism.scenes import make_batch
from raygent.jobs.prism.train import (
    NoiseSettings,
    downstream_accuracy,
    error_w1,
    gaussian_noise,
    mask_scores,
    predict_mask,
    synthesise,
    train_noise_model,
)
from raygent.platform import session
from raygent.platform.study import StudyParams, Verdict, completed, figure, summarize, trial_counts, verdict

MASK_F1 = "mask_f1"
MASK_RECALL = "mask_recall"
MASK_PRECISION = "mask_precision"
W1_DZ = "w1_dz"
ACC_CLEAN = "downstream_clean"
ACC_GAUSSIAN = "downstream_gaussian"
ACC_SYNTH = "downstream_synth"
ACC_SENSOR = "downstream_sensor"
INVALID_FRACTION = "invalid_fraction"
TRAIN_SECONDS = "train_seconds"
REQUIRED = (MASK_F1, W1_DZ, ACC_SYNTH)
"""The columns a trial must have reported to count as completed."""
METRICS = (MASK_F1, MASK_RECALL, MASK_PRECISION, W1_DZ, ACC_CLEAN, ACC_GAUSSIAN, ACC_SYNTH, ACC_SENSOR,
           INVALID_FRACTION, TRAIN_SECONDS)
SUMMARY = (MASK_F1, MASK_RECALL, MASK_PRECISION, W1_DZ, ACC_SYNTH)
"""The metrics the verdict's evidence gives mean and spread of, per cell."""
BASELINES = (ACC_CLEAN, ACC_GAUSSIAN, ACC_SENSOR)
"""Downstream classifiers trained without the noise model: a function of the seed alone, so only the trials of the
reference cell (`REFERENCE`: dual heads at the default γ) train them; the evidence gives them beside that cell."""
PAPER_SIZES = {"image_size": 64, "n_train": 3000, "n_test": 500, "n_downstream": 3000, "width": 24, "epochs": 30}


class PrismParams(StudyParams):
    """Every knob of one PRISM trial."""

    heads: Literal["dual", "single"] = Field("dual", description="disentangled invalidation + Δz heads, or one")
    gamma: float = Field(0.5, ge=0.0, le=2.0, description="positive weight w+ = (#neg/#pos)^gamma; 0: plain BCE")
    levels: int = Field(3, ge=1, le=4, description="pyramid scales of the mask supervision (1: full resolution)")
    image_size: int = Field(32, ge=16, description="pixels per side (a multiple of 4)")
    n_train: int = Field(1500, ge=10, description="scenes to train the noise model on")
    n_test: int = Field(300, ge=10, description="held-out scenes for the mask and W1 metrics")
    n_downstream: int = Field(2000, ge=10, description="training scenes of the downstream classifier")
    n_downstream_test: int = Field(500, ge=10, description="sensor captures the classifier is tested on")
    width: int = Field(12, ge=4, description="U-Net base channels")
    epochs: int = Field(16, ge=1)
    batch_size: int = Field(32, ge=1)
    lr: float = Field(3e-3, gt=0.0)
    downstream_epochs: int = Field(20, ge=1)

    paper_sizes: ClassVar[dict[str, Any]] = PAPER_SIZES


REFERENCE = ("dual", PrismParams().gamma)
"""(heads, gamma) of the reference cell: its trials alone train the `BASELINES` classifiers."""


class PrismStudy:
    """Positive-prioritised hierarchical invalidation supervision and disentangled heads for depth-noise synthesis."""

    name: ClassVar[str] = "prism"
    summary: ClassVar[str] = "PRISM [rec]: depth-sensor noise synthesis, invalidation vs inaccuracy heads"
    claim: ClassVar[str] = (
        "Positive weighting raises invalid-pixel recall and F1; the dual head matches the depth-error distribution "
        "better (Wasserstein) than one head; a classifier trained on PRISM-synthesised noise beats ones trained on "
        "Gaussian noise and on clean depth, on sensor-like test data."
    )
    params_model: ClassVar[type[StudyParams]] = PrismParams
    metric: ClassVar[str] = MASK_F1
    mode: ClassVar[Literal["min", "max"]] = "max"

    def trainable(self, config: dict[str, Any]) -> None:
        params = PrismParams.model_validate(config).resolved()
        if params.image_size % 4:
            raise ValueError(f"image_size must be a multiple of 4, got {params.image_size}")
        torch.set_num_threads(1)
        started = time.perf_counter()
        base = 1000 * params.seed
        train = make_batch(base + 1, params.n_train, params.image_size)
        test = make_batch(base + 2, params.n_test, params.image_size)
        downstream_train = make_batch(base + 3, params.n_downstream, params.image_size)
        downstream_test = make_batch(base + 4, params.n_downstream_test, params.image_size)
        settings = NoiseSettings(heads=params.heads, gamma=params.gamma, levels=params.levels, width=params.width,
                                 epochs=params.epochs, batch_size=params.batch_size, lr=params.lr)
        model = train_noise_model(train, settings, params.seed)
        scores = mask_scores(predict_mask(model, test), test.invalid)
        synth, synth_invalid = synthesise(model, test, params.seed)
        w1 = error_w1(test.depth, test.real, test.invalid, synth, synth_invalid)
        synth_train, _ = synthesise(model, downstream_train, params.seed + 1)

        def accuracy(depth: np.ndarray) -> float:
            return downstream_accuracy(depth, downstream_train.label, downstream_test.real, downstream_test.label,
                                       params.downstream_epochs, params.seed)

        report = {
            MASK_F1: scores["f1"],
            MASK_RECALL: scores["recall"],
            MASK_PRECISION: scores["precision"],
            W1_DZ: w1,
            ACC_SYNTH: accuracy(synth_train),
            INVALID_FRACTION: float(test.invalid.mean()),
        }
        if (params.heads, params.gamma) == REFERENCE:
            report[ACC_CLEAN] = accuracy(downstream_train.depth)
            report[ACC_GAUSSIAN] = accuracy(gaussian_noise(downstream_train, params.seed))
            report[ACC_SENSOR] = accuracy(downstream_train.real)
        session.report({**report, TRAIN_SECONDS: time.perf_counter() - started})

    def analyze(self, results: pd.DataFrame) -> Verdict:
        done = completed(results, REQUIRED, METRICS)
        evidence: dict[str, Any] = trial_counts(results, done)
        defaults = PrismParams()
        cells = {
            ("dual", 0.0): _cell(done, "dual", 0.0, defaults.levels),
            ("dual", defaults.gamma): _cell(done, "dual", defaults.gamma, defaults.levels),
            ("single", defaults.gamma): _cell(done, "single", defaults.gamma, defaults.levels),
        }
        if any(frame.empty for frame in cells.values()):
            missing = [f"{h} gamma={g}" for (h, g), frame in cells.items() if frame.empty]
            evidence["missing_cells"] = missing
            return verdict(self.claim, {"grid_complete": False}, evidence)
        unweighted, prism, single = cells[("dual", 0.0)], cells[("dual", defaults.gamma)], cells[
            ("single", defaults.gamma)]
        mean = {name: summarize(frame, SUMMARY) for name, frame in
                (("dual_gamma0", unweighted), (f"dual_gamma{defaults.gamma:g}", prism),
                 (f"single_gamma{defaults.gamma:g}", single))}
        prism_mean = mean[f"dual_gamma{defaults.gamma:g}"]
        prism_mean.update(summarize(prism, BASELINES))
        checks = {
            "weighting_raises_recall": prism_mean[MASK_RECALL]["mean"] > mean["dual_gamma0"][MASK_RECALL]["mean"],
            "weighting_raises_f1": prism_mean[MASK_F1]["mean"] > mean["dual_gamma0"][MASK_F1]["mean"],
            "dual_head_w1_below_single": prism_mean[W1_DZ]["mean"] < mean[f"single_gamma{defaults.gamma:g}"][W1_DZ][
                "mean"],
            "downstream_synth_beats_gaussian": prism_mean[ACC_SYNTH]["mean"] > prism_mean[ACC_GAUSSIAN]["mean"],
            "downstream_synth_beats_clean": prism_mean[ACC_SYNTH]["mean"] > prism_mean[ACC_CLEAN]["mean"],
        }
        evidence.update({
            "reference_gamma": defaults.gamma,
            "levels": defaults.levels,
            "seeds": sorted(int(s) for s in prism["seed"].unique()),
            "cells": mean,
            "grid": _grid_table(done),
        })
        return verdict(self.claim, checks, evidence)

    def plot(self, results: pd.DataFrame, path: Path) -> None:
        done = completed(results, REQUIRED, METRICS)
        with figure(path, 1, 3, figsize=(13.0, 3.8)) as (fig, axes):
            for heads, colour in (("dual", "tab:blue"), ("single", "tab:orange")):
                rows = done[done["heads"] == heads]
                for ax, column in ((axes[0], MASK_RECALL), (axes[0], MASK_F1), (axes[1], W1_DZ)):
                    stats = rows.groupby("gamma")[column].agg(["mean", "std"]).fillna(0.0)
                    style = "s--" if column == MASK_RECALL else "o-"
                    ax.errorbar(stats.index, stats["mean"], yerr=stats["std"], fmt=style, capsize=3, color=colour,
                                label=f"{heads}: {column}")
            axes[0].set_xlabel("positive weight γ")
            axes[0].set_ylabel("invalid mask (mean ± std over seeds)")
            axes[0].legend(fontsize=7)
            axes[1].set_xlabel("positive weight γ")
            axes[1].set_ylabel("W1 of Δz vs sensor (m)")
            axes[1].set_yscale("log")
            axes[1].legend(fontsize=7)
            labels, means, stds = [], [], []
            reference = done[(done["heads"] == REFERENCE[0]) & (done["gamma"] == REFERENCE[1])]
            for label, column, rows in (("clean", ACC_CLEAN, reference), ("Gaussian", ACC_GAUSSIAN, reference),
                                        ("sensor (ceiling)", ACC_SENSOR, reference),
                                        *((f"{h} γ={g:g}", ACC_SYNTH, r) for (h, g), r in done.groupby(["heads",
                                                                                                         "gamma"]))):
                labels.append(label)
                means.append(float(rows[column].mean()))
                stds.append(float(rows[column].std()) if len(rows) > 1 else 0.0)
            axes[2].bar(range(len(labels)), means, yerr=stds, capsize=3, color="tab:green")
            axes[2].set_xticks(range(len(labels)), labels, rotation=30, fontsize=7)
            axes[2].set_ylabel("shape accuracy on sensor captures")
            fig.suptitle("PRISM [rec]: invalidation supervision, heads, and downstream training data")


def _cell(done: pd.DataFrame, heads: str, gamma: float, levels: int) -> pd.DataFrame:
    if done.empty:
        return done
    return done[(done["heads"] == heads) & np.isclose(done["gamma"].astype(float), gamma) & (done["levels"] == levels)]


def _grid_table(done: pd.DataFrame) -> list[dict[str, Any]]:
    table = done.groupby(["heads", "gamma", "levels"])[[MASK_F1, MASK_RECALL, W1_DZ, ACC_SYNTH]].mean().reset_index()
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()} for row in table.to_dict("records")]
