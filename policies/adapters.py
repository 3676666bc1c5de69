"""LoRA adapters as both ends of weight sync see them: the learner trains them, the inference engines apply them.

Where this sits in the flow: with `learner.lora`, the learner (`raygent.platform.rl.learner`) injects the adapters
with `inject_lora` and weight sync sends only the adapters' tensors (`adapter_state`, under the names of the
learner's `state_dict`: `model.layers.0.self_attn.q_proj.lora_A.default.weight`); each engine was built on the
same base checkpoint with the same `LoraSpec` (the trainer passes it as the backend option `lora`) and holds the
base once:

- the `hf` backend injects the same adapters into its own model (`inject_lora`; B starts at zero, so version 0
  is the base) and copies each synced tensor into them: its parameter names are the learner's;
- the `vllm` backend writes the tensors in peft's format (`write_peft_adapter`) to its run-local directory and
  reloads its one adapter slot from there.

`LoraSpec` is what both sides must agree on (rank, alpha, target modules); the scaling alpha / rank of every
adapted module follows from it, so it is not sent with each version.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field
from torch import Tensor

ADAPTER = "default"
"""peft's name of the (only) adapter."""
LORA_MARK = ".lora_"
"""What the adapters' parameter names contain (`...q_proj.lora_A.default.weight`)."""
PEFT_PREFIX = "base_model.model."
"""What peft's saved adapter files put before the plain model's module names."""


class LoraSpec(BaseModel):
    """The adapters' shape: rank, alpha and the last names of the `nn.Linear` modules they sit on."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    rank: int = Field(ge=1)
    alpha: float = Field(gt=0)
    target_modules: tuple[str, ...]
    dropout: float = Field(default=0.0, ge=0, lt=1)

    @property
    def scaling(self) -> float:
        return self.alpha / self.rank


def inject_lora(model: torch.nn.Module, spec: LoraSpec) -> dict[str, float]:
    """Injects `peft` LoRA adapters into `model` in place (it stays the HF model: same forward, same `generate`)
    and returns each adapted module's scaling (alpha / rank) by name. A `ValueError` names
    `learner.lora.target_modules` when no module matches."""
    from peft import LoraConfig, inject_adapter_in_model
    from peft.tuners.lora import LoraLayer

    config = LoraConfig(
        r=spec.rank,
        lora_alpha=spec.alpha,  # type: ignore[arg-type]  # peft annotates int; a float scales as well
        lora_dropout=spec.dropout,
        target_modules=list(spec.target_modules),
        bias="none",
    )
    try:
        inject_adapter_in_model(config, model, adapter_name=ADAPTER)
    except ValueError as error:
        raise ValueError(f"learner.lora.target_modules {list(spec.target_modules)}: {error}") from None
    scaling: dict[str, float] = {}
    for name, module in model.named_modules():
        if isinstance(module, LoraLayer):
            if getattr(module, "fan_in_fan_out", False):
                raise ValueError(f"learner.lora: {name} stores its weight transposed (fan_in_fan_out); unsupported")
            scaling[name] = float(module.scaling[ADAPTER])
    if not scaling:
        raise ValueError(
            f"learner.lora.target_modules {list(spec.target_modules)} matched no linear layer of the model"
        )
    return scaling


def adapter_state(state: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """The adapters' tensors of a LoRA model's state dict (what adapter-only sync sends and a checkpoint keeps)."""
    return {name: tensor for name, tensor in state.items() if LORA_MARK in name}


def is_adapter_state(state: Mapping[str, Any]) -> bool:
    """Whether `state` holds adapter tensors only (an adapter-only sync) rather than full weights."""
    return bool(state) and all(LORA_MARK in name for name in state)


def peft_name(name: str) -> str:
    """A learner adapter name as peft's saved files spell it: `base_model.model.` in front, no adapter name
    (`model.layers.0.self_attn.q_proj.lora_A.default.weight` → `base_model.model.model.layers.0.self_attn.q_proj
    .lora_A.weight`)."""
    return PEFT_PREFIX + name.replace(f".{ADAPTER}.", ".")


def write_peft_adapter(state: Mapping[str, Tensor], spec: LoraSpec, directory: str | Path) -> Path:
    """`state` (adapter tensors, learner names) as a peft adapter directory: `adapter_config.json` and
    `adapter_model.safetensors` (float32), overwritten in place. What vLLM's LoRA requests load."""
    from safetensors.torch import save_file

    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    config = {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "r": spec.rank,
        "lora_alpha": spec.alpha,
        "lora_dropout": 0.0,
        "target_modules": list(spec.target_modules),
        "bias": "none",
        "fan_in_fan_out": False,
        "use_rslora": False,
        "modules_to_save": None,
    }
    tensors = {peft_name(n): t.detach().to("cpu", torch.float32).contiguous() for n, t in state.items()}
    save_file(tensors, str(path / "adapter_model.safetensors"))
    (path / "adapter_config.json").write_text(json.dumps(config, indent=1))
    return path


def state_bytes(state: Mapping[str, Any]) -> int:
    """Bytes of the tensors (or numpy arrays) in `state`: what one sync moves."""
    return int(sum(v.numel() * v.element_size() if isinstance(v, Tensor) else v.nbytes for v in state.values()))


def linear_module_names(config: Any) -> list[str]:
    """The names of every `nn.Linear` module of the causal LM that transformers `config` describes (built on the
    meta device: nothing is allocated)."""
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return [name for name, module in model.named_modules() if isinstance(module, torch.nn.Linear)]


def check_lora_targets(target_modules: list[str] | tuple[str, ...], config: Any) -> None:
    """A `ValueError` naming `learner.lora.target_modules` when one of the targets is no linear layer of the model
    (peft matches a target against a module's full name or its last components), before any actor is started;
    peft itself would adapt the others silently, or fail inside the learner actor when none matches."""
    names = linear_module_names(config)
    missing = [t for t in target_modules if not any(n == t or n.endswith(f".{t}") for n in names)]
    if missing:
        known = sorted({name.rsplit(".", 1)[-1] for name in names})
        raise ValueError(
            f"learner.lora.target_modules: {missing} is no linear layer of the model "
            f"({config.model_type}: its linear layers are {', '.join(known)})"
        )


def policy_config(model: str | None, preset: str, vocab_size: int) -> Any | None:
    """The transformers config of the policy a run starts from, read without loading weights: `model`'s
    `config.json` (a checkpoint directory, or a pretrained preset's directory once converted into the cache), or
    the tiny `preset`'s when `model` is None. None when it cannot be read here (a path that exists only on the
    cluster, a pretrained preset not converted yet, an unknown preset: refused elsewhere)."""
    from transformers import AutoConfig

    from raygent.policies.cache import cache_root
    from raygent.policies.presets import PRESETS
    from raygent.policies.pretrained import PRETRAINED

    if model is None:
        return PRESETS[preset].config(vocab_size) if preset in PRESETS else None
    directory = cache_root() / "models" / model if model in PRETRAINED else Path(model).expanduser()
    if not (directory / "config.json").is_file():
        return None
    return AutoConfig.from_pretrained(str(directory), local_files_only=True)
