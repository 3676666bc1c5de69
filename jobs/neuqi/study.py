"""The NeUQI study: Min-Max vs integer-zero-point grid vs NeUQI initialisation of uniform quantisers.

One trial = one (bits, group size, seed). It measures all three inits on

1. a synthetic layer (outlier weights, log-normal activation scales): relative weighted error `err_*`;
2. a causal LM (laptop: a tiny Llama trained on grammar text, cached on disk per seed; paper: the local
   checkpoint at `model_path`, with local `calib_text_path` / `eval_text_path`): every linear layer,
   `lm_head` included (`include_lm_head: false` gives GPTQ's convention), RTN-quantised under each init;
   held-out perplexity `ppl_*` and the mean per-layer relative weighted error `layer_err_*`.

The claim (docs/studies.md): NeUQI's weighted error is below the grid's, which is below Min-Max's, at
every bit width; NeUQI's perplexity is no worse than Min-Max's at 2 and 3 bits. The exact float zero-point
solve is a reconstruction; `zero_solver: alternating` switches to the approximate one (see `quantize.py`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
import torch
import transformers
from pydantic import Field, model_validator

from raygent.jobs.neuqi.corpus import generate_text, read_text
from raygent.jobs.neuqi.lm import TinyLMSpec, cached_tiny_lm, load_lm, perplexity, token_blocks
from raygent.jobs.neuqi.matrix import init_errors, synthetic_layer
from raygent.jobs.neuqi.model_quant import calibrate, quantize_linears, restore, snapshot
from raygent.jobs.neuqi.quantize import INITS, ScaleSearch, ZeroSolver
from raygent.platform import session
from raygent.platform.study import StudyParams, Verdict, figure, verdict

PPL_CLAIM_BITS = (2, 3)


class NeuqiParams(StudyParams):
    """Every knob of a NeUQI trial. Model-size knobs only apply to the tiny LM (no `model_path`)."""

    bits: int = Field(3, ge=1, le=8)
    group_size: int = Field(0, ge=0, description="0: one (scale, zero) per output channel")
    zero_solver: ZeroSolver = "exact"
    coarse_low: float = Field(0.1, gt=0)
    coarse_high: float = Field(1.2, gt=0)
    coarse_points: int = Field(40, ge=1)
    fine_points: int = Field(40, ge=0)
    grid_points: int = Field(100, ge=1)
    grid_max_shrink: float = Field(0.8, gt=0, le=1)
    # matrix level
    matrix_rows: int = Field(64, ge=1)
    matrix_cols: int = Field(256, ge=1)
    outlier_frac: float = Field(0.01, ge=0, le=1)
    outlier_scale: float = Field(8.0, gt=0)
    act_log_sigma: float = Field(1.0, ge=0)
    matrix_calib_tokens: int = Field(512, ge=1)
    # model level
    model_level: bool = True
    model_path: str | None = None
    calib_text_path: str | None = None
    eval_text_path: str | None = None
    cache_dir: str | None = None
    hidden_size: int = Field(128, ge=8)
    num_layers: int = Field(2, ge=1)
    num_heads: int = Field(4, ge=1)
    intermediate_size: int = Field(256, ge=8)
    seq_len: int = Field(64, ge=8)
    train_words: int = Field(120_000, ge=1000)
    preference: float = Field(0.9, ge=0, le=1)
    init_std: float = Field(0.02, gt=0)
    weight_decay: float = Field(0.01, ge=0)
    train_steps: int = Field(300, ge=1)
    batch_size: int = Field(32, ge=1)
    lr: float = Field(3e-3, gt=0)
    calib_sequences: int = Field(64, ge=1)
    eval_sequences: int = Field(128, ge=1)
    include_lm_head: bool = True
    device: str = Field("cpu", description="where the LM runs and is quantised: 'cpu', or 'cuda' at paper scale")
    damp: float = Field(0.01, ge=0)

    @model_validator(mode="after")
    def _paper_needs_local_model(self) -> NeuqiParams:
        if self.scale == "paper" and self.model_level and self.model_path is None:
            raise ValueError("scale 'paper' needs model_path: a local LLaMA/Qwen save_pretrained directory")
        if self.coarse_low >= self.coarse_high:
            raise ValueError("coarse_low must be below coarse_high")
        return self

    def search(self) -> ScaleSearch:
        return ScaleSearch(
            grid_points=self.grid_points,
            grid_max_shrink=self.grid_max_shrink,
            coarse_low=self.coarse_low,
            coarse_high=self.coarse_high,
            coarse_points=self.coarse_points,
            fine_points=self.fine_points,
            solver=self.zero_solver,
        )

    def lm_spec(self) -> TinyLMSpec:
        return TinyLMSpec(
            hidden_size=self.hidden_size,
            num_layers=self.num_layers,
            num_heads=self.num_heads,
            intermediate_size=self.intermediate_size,
            seq_len=self.seq_len,
            train_words=self.train_words,
            preference=self.preference,
            init_std=self.init_std,
            weight_decay=self.weight_decay,
            train_steps=self.train_steps,
            batch_size=self.batch_size,
            lr=self.lr,
            seed=self.seed,
        )


def _text(path: str | None, p: NeuqiParams, stream: int, n_words: int) -> str:
    return read_text(path) if path else generate_text((p.seed, stream), n_words, p.preference)


def _sample_blocks(blocks: torch.Tensor, count: int, seed: int) -> torch.Tensor:
    order = torch.randperm(len(blocks), generator=torch.Generator().manual_seed(seed))
    return blocks[order[:count]]


def model_metrics(p: NeuqiParams) -> dict[str, float]:
    """Perplexity (FP and per init) and mean per-layer relative weighted error of the quantised LM."""
    path = p.model_path or cached_tiny_lm(p.lm_spec(), p.cache_dir)
    model, tokenizer = load_lm(path, p.device)
    words = 2 * p.seq_len * max(p.calib_sequences, p.eval_sequences)
    calib = token_blocks(tokenizer, _text(p.calib_text_path, p, 1, words), p.seq_len)
    calib = _sample_blocks(calib, p.calib_sequences, p.seed)
    held_out = token_blocks(tokenizer, _text(p.eval_text_path, p, 2, words), p.seq_len, p.eval_sequences)
    metrics = {"ppl_fp": perplexity(model, held_out)}
    hessians = calibrate(model, calib, p.include_lm_head)
    original = snapshot(model, list(hessians))
    for init in INITS:
        errors = quantize_linears(model, hessians, p.bits, init, p.group_size, p.search(), p.damp)
        metrics[f"ppl_{init}"] = perplexity(model, held_out)
        metrics[f"layer_err_{init}"] = float(np.mean(list(errors.values())))
        restore(model, original)
    return metrics


class NeuqiStudy:
    """NeUQI (arXiv 2505.17595): float zero-point + scale search vs Min-Max and the integer-z grid."""

    name: ClassVar[str] = "neuqi"
    summary: ClassVar[str] = "NeUQI quantizer init vs Min-Max and integer-z grid: weighted error and LM perplexity"
    claim: ClassVar[str] = (
        "NeUQI < integer-zero-point grid < Min-Max weighted error at every bit width; "
        "NeUQI perplexity <= Min-Max at 2 and 3 bits"
    )
    params_model: ClassVar[type[StudyParams]] = NeuqiParams
    metric: ClassVar[str] = "ppl_neuqi"
    mode: ClassVar[Literal["min", "max"]] = "min"

    def trainable(self, config: dict[str, Any]) -> None:
        p = NeuqiParams.model_validate(config)
        transformers.utils.logging.disable_progress_bar()
        torch.set_num_threads(1)
        torch.manual_seed(p.seed)
        np.random.seed(p.seed)
        started = time.perf_counter()
        weight, h = synthetic_layer(
            p.seed, p.matrix_rows, p.matrix_cols, p.outlier_frac, p.outlier_scale, p.act_log_sigma,
            p.matrix_calib_tokens,
        )
        errors = init_errors(weight, h, p.bits, p.group_size, p.search())
        metrics: dict[str, float] = {f"err_{name}": value for name, value in errors.items()}
        if p.model_level:
            metrics.update(model_metrics(p))
        metrics["trial_seconds"] = time.perf_counter() - started
        session.report(metrics)

    def analyze(self, results: pd.DataFrame) -> Verdict:
        if results.empty:
            return verdict(self.claim, {}, {"trials": 0})
        table = results.groupby(["group_size", "bits"]).mean(numeric_only=True)
        several_groups = table.index.get_level_values("group_size").nunique() > 1
        checks: dict[str, bool] = {}
        evidence: dict[str, Any] = {"seeds": int(results["seed"].nunique()), "trials": len(results)}
        for (group, bits), row in table.iterrows():
            tag = f"{int(bits)}bit" + (f"_g{int(group)}" if several_groups else "")
            err = {init: float(row[f"err_{init}"]) for init in INITS}
            checks[f"err_order_{tag}"] = err["neuqi"] < err["grid"] < err["minmax"]
            entry: dict[str, Any] = {"err": err, "err_neuqi_round_z": float(row["err_neuqi_round_z"])}
            if "ppl_neuqi" in row and not np.isnan(row["ppl_neuqi"]):
                entry["ppl"] = {init: float(row[f"ppl_{init}"]) for init in ("fp", *INITS)}
                entry["layer_err"] = {init: float(row[f"layer_err_{init}"]) for init in INITS}
                if int(bits) in PPL_CLAIM_BITS:
                    checks[f"ppl_neuqi_le_minmax_{tag}"] = entry["ppl"]["neuqi"] <= entry["ppl"]["minmax"]
            evidence[tag] = entry
        return verdict(self.claim, checks, evidence)

    def plot(self, results: pd.DataFrame, path: Path) -> None:
        has_ppl = "ppl_neuqi" in results and results["ppl_neuqi"].notna().any()
        panels, width = (2, 11) if has_ppl else (1, 5.5)
        with figure(path, 1, panels, figsize=(width, 4), squeeze=False) as (_, axes):
            styles = {"minmax": ("tab:red", "o"), "grid": ("tab:blue", "s"), "neuqi": ("tab:green", "^")}
            for group, part in results.groupby("group_size"):
                table = part.groupby("bits").mean(numeric_only=True).sort_index()
                dash = "-" if group == 0 else "--"
                label = "per-channel" if group == 0 else f"g{group}"
                for init, (color, marker) in styles.items():
                    axes[0, 0].plot(table.index, table[f"err_{init}"], dash, color=color, marker=marker,
                                    label=f"{init} ({label})")
                    if has_ppl:
                        axes[0, 1].plot(table.index, table[f"ppl_{init}"], dash, color=color, marker=marker,
                                        label=f"{init} ({label})")
                if has_ppl:
                    axes[0, 1].plot(table.index, table["ppl_fp"], ":", color="black", label="full precision")
            axes[0, 0].set(yscale="log", xlabel="bits", ylabel="relative weighted error Σh(w-ŵ)²/Σhw²",
                           title="Synthetic layer (mean over seeds)")
            if has_ppl:
                axes[0, 1].set(xlabel="bits", ylabel="held-out perplexity", title="Causal LM, RTN (mean over seeds)")
            for axis in axes[0]:
                axis.set_xticks(sorted(results["bits"].unique()))
                axis.legend(fontsize=7)
                axis.grid(alpha=0.3)
