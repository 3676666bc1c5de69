"""grpo_toy: a tiny language-model agent learns ToolCalc (calculator tool, multi-turn) with SFT, then GRPO.

The policy is a `tiny-qwen2` model (~2.3 M parameters) with a byte-level BPE tokenizer trained on ToolCalc
text, built from the preset and saved in the run directory when `policy.model` is unset, then loaded through
the same `load_policy` path a real checkpoint takes. SFT uses expert demonstrations of some task types only
(`sft.task_kwargs`); GRPO then trains on every type with the checker's reward. Claim: GRPO raises held-out
success (tasks whose parameters are never trained on) by at least `MIN_GAIN` over the SFT model.

A pretrained model is the same job: `policy.model=smollm2-135m-instruct` (SmolLM2-135M-Instruct, its own
tokenizer and chat template; the recipe's prompts are chat messages, so they render through any template); see
`jobs/configs/grpo_toy.yaml` for the smaller batch and learning rates it is run with on 2 cores. Cluster scale is
the same job: `policy.model=/path/to/model policy.backend=vllm rollout.num_workers=...`.
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
