"""NKR (Guan et al., arXiv 2606.11913): a long video as a LoRA-like Neural Knowledge Representation.

One trial: the frozen backbone (pre-trained once to read captions in context, cached; or a local checkpoint at
`base_path`), one generated long video of `frames` frames (the seed's), the agent's AKD corpus at QA `budget`
(the swept knob; descriptions + QA pairs in the two agent wordings), the NKR (a rank-`lora_rank` adapter distilled
from it), and on the video's held-out question bank (every fact, asked in the paraphrase the distillation never
used; four options each) the multiple-choice accuracy of: NKR (question only), the backbone with no adapter, the
captions in context (truncated to the `context`-token window) and the top-k retrieved captions in context. Then
the cost of one query: the prefill FLOPs (and wall time) of NKR's question-only prompt and of reading the whole
caption track in context, for videos of each length in `latency_frames`.

`analyze` checks, over seeds: NKR ≥ no adapter + 30 points (every budget ≥ the middle one); NKR ≥ in context in
the long-video regime (captions longer than the window); NKR's query FLOPs flat (± 20 %) from the shortest to the
longest video while in-context FLOPs grow ≥ 3×; mean NKR accuracy non-decreasing in the AKD budget.

`scale: paper` is the same code with the notes' sizes (a 4-layer 256-wide backbone, a 512-token window, 2,000-frame
videos, budgets 50/200/1,000 in the sweep); `base_path` mounts the adapter on a real local model instead.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
import torch
from pydantic import Field

from raygent.jobs.nkr.base import BaseSpec, cached_base, closed_prompt, context_prompt, ids, load_base
from raygent.jobs.nkr.knowledge import DistilSettings, accuracy, akd_corpus, encode, prefill_cost
from raygent.jobs.nkr.video import FRAMES_PER_EVENT, HELD_OUT_FORM, KINDS, TEMPLATES, Video, make_video, question_bank
from raygent.platform import session
from raygent.platform.study import StudyParams, Verdict, by_seed, completed, figure, mean_std, trial_counts, verdict

ACC_NKR = "acc_nkr"
ACC_NO_ADAPTER = "acc_no_adapter"
ACC_CONTEXT = "acc_context"
ACC_RETRIEVAL = "acc_retrieval"
ACC_NKR_AGENT_FORM = "acc_nkr_agent_form"
ACC_CONTEXT_SHORT = "acc_context_short"
CONTEXT_COVERAGE = "context_coverage"
CAPTION_TOKENS = "caption_tokens"
ENCODE_SECONDS = "encode_seconds"
DISTIL_LOSS = "distil_loss"
QA_PAIRS = "qa_pairs"
NKR_FLOPS_PREFIX = "nkr_flops_"
CONTEXT_FLOPS_PREFIX = "context_flops_"
NKR_MS_PREFIX = "nkr_ms_"
CONTEXT_MS_PREFIX = "context_ms_"
REQUIRED = (ACC_NKR, ACC_NO_ADAPTER, ACC_CONTEXT)
"""The columns a trial must have reported to count as completed."""
METRICS = (ACC_NKR, ACC_NO_ADAPTER, ACC_CONTEXT, ACC_RETRIEVAL, ACC_NKR_AGENT_FORM, ACC_CONTEXT_SHORT, CONTEXT_COVERAGE,
           CAPTION_TOKENS, ENCODE_SECONDS, DISTIL_LOSS, QA_PAIRS)
GAIN_OVER_NO_ADAPTER = 0.30
FLAT_TOLERANCE = 0.20
CONTEXT_GROWTH = 3.0
PAPER_SIZES: dict[str, Any] = {"frames": 2000, "context": 512, "base_hidden": 256, "base_layers": 4,
                               "base_intermediate": 688, "pretrain_steps": 6000, "distil_steps": 1500}


class NkrParams(StudyParams):
    """Every knob of one NKR trial. `base_*` and `pretrain_*` only apply to the tiny backbone (no `base_path`)."""

    budget: int = Field(100, ge=0, description="AKD QA pairs synthesised per video (the swept knob)")
    frames: int = Field(600, ge=20, description="frames of the test video (one event per 10 frames)")
    descriptions: bool = Field(True, description="distil the dense descriptions too, not only the QA pairs")
    lora_rank: int = Field(8, ge=1)
    lora_alpha: int = Field(16, gt=0)
    lora_targets: tuple[str, ...] = ("q_proj", "v_proj", "gate_proj", "up_proj", "down_proj")
    distil_steps: int = Field(400, ge=1)
    distil_batch: int = Field(32, ge=1)
    distil_lr: float = Field(5e-3, gt=0)
    context: int = Field(256, ge=32, description="the backbone's context window for the in-context baseline")
    retrieval_k: int = Field(4, ge=1)
    latency_frames: tuple[int, ...] = Field((200, 2000), min_length=2)
    base_path: str = Field("", description="a local checkpoint to mount the NKR on; empty: the tiny backbone")
    cache_dir: str = Field("", description="where the tiny backbone is cached; empty: ~/.cache/raygent/nkr")
    base_hidden: int = Field(96, ge=8)
    base_layers: int = Field(3, ge=1)
    base_heads: int = Field(4, ge=1)
    base_intermediate: int = Field(192, ge=8)
    base_seed: int = Field(0, description="the backbone is one fixed pre-trained model; seeds vary the videos")
    pretrain_steps: int = Field(1500, ge=1)
    pretrain_batch: int = Field(24, ge=1)
    pretrain_lr: float = Field(3e-3, gt=0)

    paper_sizes: ClassVar[dict[str, Any]] = PAPER_SIZES

    def base_spec(self) -> BaseSpec:
        return BaseSpec(hidden_size=self.base_hidden, num_layers=self.base_layers, num_heads=self.base_heads,
                        intermediate_size=self.base_intermediate, context=self.context, steps=self.pretrain_steps,
                        batch_size=self.pretrain_batch, lr=self.pretrain_lr, seed=self.base_seed)


class NkrStudy:
    """NKR vs no adapter, captions in context and retrieval, over the AKD budget."""

    name: ClassVar[str] = "nkr"
    summary: ClassVar[str] = "NKR: a long video distilled into a LoRA on a frozen backbone; accuracy vs AKD budget"
    claim: ClassVar[str] = (
        "A video distilled into a LoRA adapter by agentic QA synthesis answers held-out questions far better than "
        "the backbone alone (+30 points) and at least as well as reading the captions in context when they exceed "
        "the window; its query cost is flat in video length while in-context cost grows; accuracy is "
        "non-decreasing in the AKD budget."
    )
    params_model: ClassVar[type[StudyParams]] = NkrParams
    metric: ClassVar[str] = ACC_NKR
    mode: ClassVar[Literal["min", "max"]] = "max"

    def trainable(self, config: dict[str, Any]) -> None:
        params = NkrParams.model_validate(config).resolved()
        torch.set_num_threads(1)
        path = params.base_path or str(cached_base(params.base_spec(), params.cache_dir or None))
        model, tokenizer = load_base(path)
        rng = np.random.default_rng([params.seed, 1])
        video = make_video(rng, params.frames)
        bank = question_bank(video, HELD_OUT_FORM, np.random.default_rng([params.seed, 2]))
        seen_form = question_bank(video, 0, np.random.default_rng([params.seed, 3]))
        caption_tokens = len(ids(tokenizer, " ".join(video.captions())))
        no_adapter = accuracy(model, tokenizer, video, bank, "closed")
        in_context = accuracy(model, tokenizer, video, bank, "context", params.context)
        retrieval = accuracy(model, tokenizer, video, bank, "retrieval", params.context, params.retrieval_k)
        short = _short_video(tokenizer, params.context, params.seed)  # the backbone's reading skill, all in view
        in_context_short = accuracy(model, tokenizer, short, question_bank(
            short, HELD_OUT_FORM, np.random.default_rng([params.seed, 6])), "context", params.context)
        corpus = akd_corpus(video, params.budget, params.descriptions, np.random.default_rng([params.seed, 4]))
        started = time.perf_counter()
        settings = DistilSettings(params.lora_rank, params.lora_alpha, params.lora_targets, params.distil_steps,
                                  params.distil_batch, params.distil_lr, params.descriptions)
        nkr, losses = encode(model, tokenizer, corpus, settings, params.seed)
        encode_seconds = time.perf_counter() - started
        acc = accuracy(nkr, tokenizer, video, bank, "closed")
        acc_seen = accuracy(nkr, tokenizer, video, seen_form, "closed")
        costs: dict[str, float] = {}
        for frames in params.latency_frames:
            long_video = make_video(np.random.default_rng([params.seed, 5, frames]), frames)
            asked = TEMPLATES["place"][HELD_OUT_FORM].format(e=long_video.events[0].entity)
            flops, seconds, _ = prefill_cost(nkr, tokenizer, closed_prompt(asked))
            costs[f"{NKR_FLOPS_PREFIX}{frames}"] = float(flops)
            costs[f"{NKR_MS_PREFIX}{frames}"] = 1000 * seconds
            with nkr.disable_adapter():
                flops, seconds, _ = prefill_cost(nkr, tokenizer, context_prompt(long_video.captions(), asked))
            costs[f"{CONTEXT_FLOPS_PREFIX}{frames}"] = float(flops)
            costs[f"{CONTEXT_MS_PREFIX}{frames}"] = 1000 * seconds
        session.report({
            ACC_NKR: acc["all"], ACC_NO_ADAPTER: no_adapter["all"], ACC_CONTEXT: in_context["all"],
            ACC_RETRIEVAL: retrieval["all"], ACC_NKR_AGENT_FORM: acc_seen["all"], ACC_CONTEXT_SHORT: in_context_short[
                "all"],
            **{f"{ACC_NKR}_{kind}": acc[kind] for kind in KINDS},
            **{f"{ACC_CONTEXT}_{kind}": in_context[kind] for kind in KINDS},
            CONTEXT_COVERAGE: _coverage(tokenizer, video.captions(), params.context),
            CAPTION_TOKENS: float(caption_tokens), ENCODE_SECONDS: encode_seconds, DISTIL_LOSS: float(np.mean(
                losses[-4:])), QA_PAIRS: float(len(corpus) - (len(video.events) if params.descriptions else 0)),
            **costs,
        })

    def analyze(self, results: pd.DataFrame) -> Verdict:
        done = completed(results, REQUIRED, METRICS)
        evidence: dict[str, Any] = trial_counts(results, done)
        budgets = sorted(int(b) for b in done["budget"].unique()) if not done.empty else []
        if len(budgets) < 2:
            evidence["budgets"] = budgets
            return verdict(self.claim, {"grid_complete": False}, evidence)
        by_budget = done.groupby("budget")
        curve = {str(int(b)): mean_std(frame, ACC_NKR) for b, frame in by_budget}
        means = [curve[str(b)]["mean"] for b in budgets]
        upper = done[done["budget"] >= budgets[len(budgets) // 2]]
        gain = float((upper[ACC_NKR] - upper[ACC_NO_ADAPTER]).mean())
        long_video = done[done[CONTEXT_COVERAGE] < 1.0]
        best = done[done["budget"] == budgets[-1]]
        lengths = sorted(int(c[len(NKR_FLOPS_PREFIX):]) for c in done if c.startswith(NKR_FLOPS_PREFIX))
        short, longest = lengths[0], lengths[-1]
        nkr_ratio = float((done[f"{NKR_FLOPS_PREFIX}{longest}"] / done[f"{NKR_FLOPS_PREFIX}{short}"]).max())
        context_ratio = float((done[f"{CONTEXT_FLOPS_PREFIX}{longest}"] / done[f"{CONTEXT_FLOPS_PREFIX}{short}"]).min())
        checks = {
            "nkr_beats_no_adapter_by_30pts": gain >= GAIN_OVER_NO_ADAPTER,
            "nkr_at_least_in_context_long_video": bool(not long_video.empty and float(
                long_video[long_video["budget"] == budgets[-1]][ACC_NKR].mean()) >= float(
                long_video[long_video["budget"] == budgets[-1]][ACC_CONTEXT].mean())),
            "nkr_query_flops_flat": abs(nkr_ratio - 1.0) <= FLAT_TOLERANCE,
            "context_query_flops_grow_3x": context_ratio >= CONTEXT_GROWTH,
            "accuracy_non_decreasing_in_budget": all(b >= a for a, b in itertools.pairwise(means)),
        }
        evidence.update({
            "seeds": sorted(int(s) for s in done["seed"].unique()),
            "budgets": budgets,
            "acc_nkr_by_budget": curve,
            "acc_nkr_per_seed": {str(int(b)): by_seed(frame, ACC_NKR) for b, frame in by_budget},
            "acc_nkr_agent_form_by_budget": {str(int(b)): mean_std(f, ACC_NKR_AGENT_FORM) for b, f in by_budget},
            "acc_no_adapter": mean_std(done, ACC_NO_ADAPTER),
            "acc_context": mean_std(done, ACC_CONTEXT),
            "acc_context_short_video": mean_std(done, ACC_CONTEXT_SHORT),
            "acc_retrieval": mean_std(done, ACC_RETRIEVAL),
            "acc_nkr_best_budget_by_kind": {k: mean_std(best, f"{ACC_NKR}_{k}") for k in KINDS
                                            if f"{ACC_NKR}_{k}" in best},
            "acc_context_by_kind": {k: mean_std(done, f"{ACC_CONTEXT}_{k}") for k in KINDS
                                    if f"{ACC_CONTEXT}_{k}" in done},
            "gain_over_no_adapter": gain,
            "context_coverage": float(done[CONTEXT_COVERAGE].mean()),
            "nkr_flops_ratio": nkr_ratio,
            "context_flops_ratio": context_ratio,
            "latency_ms": {f"{name}_{n}": float(done[f"{prefix}{n}"].mean()) for n in lengths
                           for name, prefix in (("nkr", NKR_MS_PREFIX), ("context", CONTEXT_MS_PREFIX))
                           if f"{prefix}{n}" in done},
            "encode_seconds": mean_std(done, ENCODE_SECONDS),
        })
        return verdict(self.claim, checks, evidence)

    def plot(self, results: pd.DataFrame, path: Path) -> None:
        done = completed(results, REQUIRED, METRICS)
        with figure(path, 1, 2, figsize=(11.0, 4.0), gridspec_kw={"width_ratios": [3, 2]}) as (fig, (ax, ax_cost)):
            budgets = sorted(int(b) for b in done["budget"].unique())
            for column, label, colour in ((ACC_NKR, "NKR (question only)", "tab:blue"),
                                          (ACC_CONTEXT, "captions in context (truncated)", "tab:orange"),
                                          (ACC_RETRIEVAL, "top-k retrieved captions", "tab:green"),
                                          (ACC_NO_ADAPTER, "no adapter", "tab:gray")):
                stats = [mean_std(done[done["budget"] == b], column) for b in budgets]
                ax.errorbar(budgets, [s["mean"] for s in stats], yerr=[s["std"] for s in stats], fmt="o-", capsize=3,
                            color=colour, label=label)
            ax.set_xscale("log")
            ax.set_xlabel("AKD budget (QA pairs per video)")
            ax.set_ylabel("held-out MC accuracy (4 options), mean ± std")
            ax.axhline(0.25, color="black", linestyle=":", linewidth=0.8)
            ax.legend(fontsize=8)
            ax.grid(alpha=0.3)
            lengths = sorted(int(c[len(NKR_FLOPS_PREFIX):]) for c in done if c.startswith(NKR_FLOPS_PREFIX))
            for prefix, label, colour in ((NKR_FLOPS_PREFIX, "NKR", "tab:blue"),
                                          (CONTEXT_FLOPS_PREFIX, "in context", "tab:orange")):
                ax_cost.plot(lengths, [float(done[f"{prefix}{n}"].mean()) for n in lengths], "o-", color=colour,
                             label=label)
            ax_cost.set_xscale("log")
            ax_cost.set_yscale("log")
            ax_cost.set_xlabel("video length (frames)")
            ax_cost.set_ylabel("prefill FLOPs per query")
            ax_cost.legend()
            ax_cost.grid(alpha=0.3)
            fig.suptitle("NKR: long video as a LoRA on a frozen backbone")


def _short_video(tokenizer: Any, context: int, seed: int) -> Video:
    """The longest generated video (in events) whose captions all fit in the window with a question."""
    from raygent.jobs.nkr.knowledge import truncate

    for events in range(30, 1, -1):
        video = make_video(np.random.default_rng([seed, 7, events]), events * FRAMES_PER_EVENT)
        if len(truncate(tokenizer, video.captions(), "the x y was followed by whom ?", context)) == events:
            return video
    return make_video(np.random.default_rng([seed, 7]), 2 * FRAMES_PER_EVENT)


def _coverage(tokenizer: Any, captions: list[str], context: int) -> float:
    """Fraction of the video's captions that fit in the context window (1.0: the short-video regime)."""
    from raygent.jobs.nkr.knowledge import truncate

    return len(truncate(tokenizer, captions, "the x y was seen where ?", context)) / len(captions)
