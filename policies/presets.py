"""Tiny causal-LM presets built from transformers configs, saved as ordinary checkpoint directories.

At laptop scale the policy is one of these, created by the project and saved with `save_pretrained`; the rest of
the platform then loads it through `raygent.policies.loading.load_policy`, the same path a real Qwen2.5 or UI-TARS
directory takes (docs/design.md §1). Two families, Llama and Qwen2 (Qwen2 adds q/k/v biases), two sizes:

| preset | layers × hidden | params (vocab 2048) | for |
|---|---|---|---|
| `tiny-llama`, `tiny-qwen2` | 3 × 256 | ≈ 2.3 M | tests, the toy GRPO job on 2 cores |
| `small-llama`, `small-qwen2` | 9 × 512 | ≈ 29.4 M | throughput benchmarks |

Head dimension is 64 everywhere, a size every vLLM attention backend (CPU included) supports. Input and output
embeddings are tied, as in the small Qwen2.5 models. The vocabulary is exactly `len(tokenizer)`, not rounded up:
a randomly initialised row that no token owns would be sampled and could not be decoded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import torch
from pydantic import BaseModel, ConfigDict, Field
from transformers import (
    AutoModelForCausalLM,
    GenerationConfig,
    LlamaConfig,
    PretrainedConfig,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Qwen2Config,
)


class ModelPreset(BaseModel):
    """The architecture of one tiny causal LM; the vocabulary comes from the tokenizer it is built with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: Literal["llama", "qwen2"]
    hidden_size: int = Field(gt=0)
    intermediate_size: int = Field(gt=0)
    num_hidden_layers: int = Field(gt=0)
    num_attention_heads: int = Field(gt=0)
    num_key_value_heads: int = Field(gt=0)
    max_position_embeddings: int = Field(default=4096, gt=0)
    rope_theta: float = Field(default=10000.0, gt=0)
    tie_word_embeddings: bool = True

    def config(
        self,
        vocab_size: int,
        pad_token_id: int | None = None,
        bos_token_id: int | None = None,
        eos_token_id: int | None = None,
    ) -> PretrainedConfig:
        """The transformers config of this architecture with the given vocabulary and special-token ids."""
        config_class = LlamaConfig if self.family == "llama" else Qwen2Config
        config = config_class(
            vocab_size=vocab_size,
            hidden_size=self.hidden_size,
            intermediate_size=self.intermediate_size,
            num_hidden_layers=self.num_hidden_layers,
            num_attention_heads=self.num_attention_heads,
            num_key_value_heads=self.num_key_value_heads,
            max_position_embeddings=self.max_position_embeddings,
            tie_word_embeddings=self.tie_word_embeddings,
            pad_token_id=pad_token_id,
            bos_token_id=bos_token_id,
            eos_token_id=eos_token_id,
            rope_parameters={"rope_type": "default", "rope_theta": self.rope_theta},
        )
        return config

    def num_parameters(self, vocab_size: int) -> int:
        """The parameter count with this vocabulary (tied weights counted once), without allocating the model."""
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(self.config(vocab_size))
        return sum(parameter.numel() for parameter in model.parameters())


_TINY = {
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_hidden_layers": 3,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
}
_SMALL = {
    "hidden_size": 512,
    "intermediate_size": 1536,
    "num_hidden_layers": 9,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
}

PRESETS: dict[str, ModelPreset] = {
    "tiny-llama": ModelPreset(family="llama", **_TINY),
    "tiny-qwen2": ModelPreset(family="qwen2", **_TINY),
    "small-llama": ModelPreset(family="llama", **_SMALL),
    "small-qwen2": ModelPreset(family="qwen2", **_SMALL),
}
"""The presets by name (docs/design.md §7.3: an explicit registry)."""


def get_preset(preset: str | ModelPreset) -> ModelPreset:
    """A preset by name (or the preset itself); a `KeyError` names the known presets."""
    if isinstance(preset, ModelPreset):
        return preset
    try:
        return PRESETS[preset]
    except KeyError:
        raise KeyError(f"unknown model preset {preset!r}; known presets: {', '.join(sorted(PRESETS))}") from None


def create_model(preset: str | ModelPreset, tokenizer: PreTrainedTokenizerBase, seed: int = 0) -> PreTrainedModel:
    """A freshly initialised float32 model of `preset` sized to `tokenizer`, its weights a function of `seed` only.

    The model's `generation_config` carries the tokenizer's EOS/PAD/BOS ids and nothing else, so generation
    defaults never hide in the checkpoint (the backends take every sampling knob from `SamplingParams`).
    """
    spec = get_preset(preset)
    if tokenizer.eos_token_id is None or tokenizer.pad_token_id is None:
        raise ValueError("the tokenizer needs an eos_token and a pad_token (see raygent.policies.tokenizer)")
    config = spec.config(
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return model.eval()


def build_tiny_model(
    preset: str | ModelPreset, tokenizer: PreTrainedTokenizerBase, directory: str | Path, seed: int = 0
) -> Path:
    """Creates a `preset` model for `tokenizer` and saves model + tokenizer to `directory`; returns the directory.

    The directory is a complete checkpoint (`config.json`, `generation_config.json`, `model.safetensors`,
    tokenizer files) that `load_policy`, `AutoModelForCausalLM.from_pretrained` and vLLM all accept.
    """
    model = create_model(preset, tokenizer, seed=seed)
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path
