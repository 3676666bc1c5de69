"""grpo_toy: a language-model agent learns ToolCalc (calculator tool, multi-turn) with SFT, then GRPO.

`jobs/configs/grpo_toy.yaml` trains SmolLM2-135M-Instruct (the `smollm2-135m-instruct` preset, its own tokenizer
and chat template; the prompts are chat messages, so they render through any template) with the small-model recipe:
LoRA, bf16, 5 SFT steps on expert demonstrations, then 10 GRPO steps with the checker's reward on groups that carry
reward variance (dynamic sampling). `jobs/configs/grpo_toy_tiny.yaml` is the same job on a `tiny-qwen2` model
(~2.3 M parameters) with a byte-level BPE tokenizer trained on ToolCalc text, built from the preset and saved in the
run directory when `policy.model` is unset, then loaded through the same `load_policy` path a real checkpoint takes.
Claim: GRPO raises held-out success (tasks whose parameters are never trained on) by at least `MIN_GAIN` over the
SFT model. Cluster scale is the same job: `policy.model=/path/to/model policy.backend=vllm rollout.num_workers=...`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from raygent.environments.toolcalc import corpus
from raygent.platform.rl.recipe import AgentRecipe, Setup

MIN_GAIN = 0.15


class GRPOToy(AgentRecipe):
    name = "grpo_toy"
    summary = "SFT then GRPO of a tiny LM agent on a multi-turn calculator-tool task (the RL core's proof job)"
    claim = f"GRPO raises held-out success by >= {MIN_GAIN} over the SFT model"
    min_gain = MIN_GAIN

    def prepare(self, agent: Any, run_dir: Path, console: Console) -> Setup:
        # only a tiny model built here needs the ToolCalc text to train its tokenizer (a real model keeps its own)
        return Setup(tokenizer_text=corpus(n_tasks=2000, seed=agent.trainer.seed) if agent.policy.model is None else [])
