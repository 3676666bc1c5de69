"""4RC (Luo, Zhou, Lan, Pan, Loy; arXiv 2602.10094): encode once, query 3D geometry and motion anywhere, anytime.

One trial generates the seed's dynamic clips (`scenes.py`), trains one model (`variant` factorised: base geometry +
relative motion, or direct: P^{τ} in one head; `model.py`) on integer query times, and reports on held-out clips
the 3D end-point error at integer and at fractional (never trained) query times, the error against the temporal
distance |τ − t_i|, and the cost of one query against one encode (FLOPs counted, wall time measured).

`analyze` checks the claim over seeds: factorised EPE < direct EPE (integer queries); the factorised model's EPE
at fractional τ ≤ 1.5 × its integer-τ EPE; a query costs ≤ 0.2 × an encode (FLOPs).

`scale: paper` is the same code with the notes' clip size (32 × 32, 2k clips, width 128, longer training);
real data (Kubric, PointOdyssey) would replace `scenes.make_clips` by a local loader with the same `Clips` fields.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar, Literal

import pandas as pd
import torch
from pydantic import Field

from raygent.jobs.four_rc.model import FourRC
from raygent.jobs.four_rc.scenes import make_clips
from raygent.jobs.four_rc.train import TrainSettings, costs, evaluate, train
from raygent.platform import session
from raygent.platform.study import StudyParams, Verdict, by_seed, completed, figure, summarize, trial_counts, verdict

EPE_INTEGER = "epe_integer"
EPE_FRACTIONAL = "epe_fractional"
EPE_DYNAMIC = "epe_dynamic"
FRACTIONAL_RATIO = "fractional_ratio"
QUERY_FLOP_RATIO = "query_flop_ratio"
QUERY_TIME_RATIO = "query_time_ratio"
TRAIN_SECONDS = "train_seconds"
FINAL_LOSS = "final_loss"
OFFSET_PREFIX = "epe_offset_"
REQUIRED = (EPE_INTEGER, EPE_FRACTIONAL, QUERY_FLOP_RATIO)
"""The columns a trial must have reported to count as completed."""
METRICS = (EPE_INTEGER, EPE_FRACTIONAL, EPE_DYNAMIC, FRACTIONAL_RATIO, QUERY_FLOP_RATIO, QUERY_TIME_RATIO,
           TRAIN_SECONDS, FINAL_LOSS)
FRACTIONAL_LIMIT = 1.5
QUERY_COST_LIMIT = 0.2
PAPER_SIZES = {"image_size": 32, "n_clips": 2000, "width": 128, "steps": 6000}


class FourRCParams(StudyParams):
    """Every knob of one 4RC trial."""

    variant: Literal["factorised", "direct"] = Field("factorised", description="P_i + ΔP (4RC) or P^τ directly")
    frames: int = Field(8, ge=2, description="frames T per clip")
    image_size: int = Field(16, ge=4)
    patch: int = Field(4, ge=1)
    n_clips: int = Field(1000, ge=1, description="training clips")
    n_test: int = Field(100, ge=1, description="held-out clips")
    width: int = Field(64, ge=8)
    encoder_layers: int = Field(4, ge=1)
    decoder_layers: int = Field(2, ge=1)
    steps: int = Field(1200, ge=1)
    batch_size: int = Field(16, ge=1)
    queries: int = Field(4, ge=1, description="queries per clip per step, decoded from one encoding")
    lr: float = Field(3e-3, gt=0.0)

    paper_sizes: ClassVar[dict[str, Any]] = PAPER_SIZES


class FourRCStudy:
    """Factorised (base + relative motion) vs direct conditional querying of 4D geometry."""

    name: ClassVar[str] = "four_rc"
    summary: ClassVar[str] = "4RC: encode a video once, query 3D points of any frame at any time; factorised vs direct"
    claim: ClassVar[str] = (
        "The factorised decoder (base geometry + relative motion) beats direct prediction on 3D end-point error; "
        "its error at fractional query times is at most 1.5x the integer-time error; a query costs at most 0.2x "
        "an encode."
    )
    params_model: ClassVar[type[StudyParams]] = FourRCParams
    metric: ClassVar[str] = EPE_INTEGER
    mode: ClassVar[Literal["min", "max"]] = "min"

    def trainable(self, config: dict[str, Any]) -> None:
        params = FourRCParams.model_validate(config).resolved()
        if params.image_size % params.patch:
            raise ValueError(f"image_size {params.image_size} is not a multiple of patch {params.patch}")
        torch.set_num_threads(1)
        torch.manual_seed(params.seed)
        started = time.perf_counter()
        clips = make_clips(1000 * params.seed + 1, params.n_clips, params.frames, params.image_size)
        test = make_clips(1000 * params.seed + 2, params.n_test, params.frames, params.image_size)
        model = FourRC(params.variant, params.frames, params.image_size, params.patch, params.width,
                       params.encoder_layers, params.decoder_layers)
        losses = train(model, clips, TrainSettings(params.steps, params.batch_size, params.queries, params.lr),
                       params.seed)
        metrics = evaluate(model, test)
        cost = costs(model, test.video[:1])
        by_offset = metrics.pop("epe_by_offset")
        assert isinstance(by_offset, dict)
        session.report({
            **metrics,
            FRACTIONAL_RATIO: float(metrics[EPE_FRACTIONAL]) / float(metrics[EPE_INTEGER]),
            QUERY_FLOP_RATIO: cost["query_flops"] / cost["encode_flops"],
            QUERY_TIME_RATIO: cost["query_seconds"] / cost["encode_seconds"],
            FINAL_LOSS: losses[-1],
            TRAIN_SECONDS: time.perf_counter() - started,
            **{offset_column(float(offset)): value for offset, value in by_offset.items()},
        })

    def analyze(self, results: pd.DataFrame) -> Verdict:
        done = completed(results, REQUIRED, METRICS)
        evidence: dict[str, Any] = trial_counts(results, done)
        variants = {v: done[done["variant"] == v] for v in ("factorised", "direct")}
        if any(frame.empty for frame in variants.values()):
            evidence["missing_variants"] = [v for v, frame in variants.items() if frame.empty]
            return verdict(self.claim, {"grid_complete": False}, evidence)
        factorised = variants["factorised"]
        summary = {v: summarize(frame, METRICS) for v, frame in variants.items()}
        checks = {
            "factorised_beats_direct": summary["factorised"][EPE_INTEGER]["mean"] < summary["direct"][EPE_INTEGER][
                "mean"],
            "fractional_within_1.5x": float(factorised[FRACTIONAL_RATIO].max()) <= FRACTIONAL_LIMIT,
            "query_cost_below_0.2x_encode": float(done[QUERY_FLOP_RATIO].max()) <= QUERY_COST_LIMIT,
        }
        evidence.update({
            "seeds": sorted(int(s) for s in done["seed"].unique()),
            "summary": summary,
            "epe_integer_per_seed": {v: by_seed(frame, EPE_INTEGER) for v, frame in variants.items()},
            "epe_gain_vs_direct": 1.0 - summary["factorised"][EPE_INTEGER]["mean"] / summary["direct"][EPE_INTEGER][
                "mean"],
            "epe_by_offset": {v: _offset_curve(frame) for v, frame in variants.items()},
            "factorised_epe_rises_with_offset": _rises(_offset_curve(factorised)),
        })
        return verdict(self.claim, checks, evidence)

    def plot(self, results: pd.DataFrame, path: Path) -> None:
        done = completed(results, REQUIRED, METRICS)
        with figure(path, 1, 2, figsize=(11.0, 4.0), gridspec_kw={"width_ratios": [2, 1]}) as (fig, (ax, ax_cost)):
            for variant, colour in (("factorised", "tab:blue"), ("direct", "tab:orange")):
                rows = done[done["variant"] == variant]
                columns = sorted((c for c in rows if c.startswith(OFFSET_PREFIX)), key=_offset)
                offsets = [_offset(c) for c in columns]
                means = [float(rows[c].mean()) for c in columns]
                stds = [float(rows[c].std(ddof=0)) for c in columns]
                ax.errorbar(offsets, means, yerr=stds, fmt="o-", capsize=3, color=colour, label=variant, alpha=0.85)
                fractional = [o for o in offsets if o != int(o)]
                ax.scatter(fractional, [m for o, m in zip(offsets, means, strict=True) if o != int(o)], marker="D",
                           s=40, facecolors="none", edgecolors=colour)
            ax.set_xlabel("|τ − t_i| (frames; hollow diamonds: fractional τ, never trained on)")
            ax.set_ylabel("3D end-point error (m), mean ± std over seeds")
            ax.legend()
            ax.grid(alpha=0.3)
            ratios = [float(done[QUERY_FLOP_RATIO].mean()), float(done[QUERY_TIME_RATIO].mean())]
            ax_cost.bar(["FLOPs", "wall time"], ratios, color=["tab:green", "tab:gray"])
            ax_cost.axhline(QUERY_COST_LIMIT, color="red", linestyle="--", label="0.2")
            ax_cost.set_ylabel("one query / one encode")
            ax_cost.legend()
            fig.suptitle("4RC: encode once, query anywhere and anytime")


def offset_column(offset: float) -> str:
    """The metric name of the EPE at temporal distance `offset` (no '.' in Tune metric names): 1.5 → epe_offset_1p5."""
    return f"{OFFSET_PREFIX}{offset:g}".replace(".", "p")


def _offset(column: str) -> float:
    return float(column[len(OFFSET_PREFIX):].replace("p", "."))


def _offset_curve(frame: pd.DataFrame) -> dict[str, float]:
    columns = sorted((c for c in frame if c.startswith(OFFSET_PREFIX)), key=_offset)
    return {f"{_offset(c):g}": float(frame[c].astype(float).mean()) for c in columns}


def _rises(curve: dict[str, float]) -> bool:
    values = list(curve.values())
    return bool(len(values) > 1 and values[-1] > values[0])
