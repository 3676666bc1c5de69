"""The one way a policy checkpoint is loaded: a local directory → (model, tokenizer).

Tiny presets saved by `raygent.policies.presets.build_tiny_model` and real checkpoints (a downloaded Qwen2.5 or
UI-TARS directory) take the same path: `AutoModelForCausalLM.from_pretrained` and `AutoTokenizer.from_pretrained`
with `local_files_only=True`, so nothing is ever fetched from a hub (docs/design.md §1). A path that is not a model
directory fails before transformers is asked, with a `PolicyLoadError` that says what is missing.

Wherever a model directory is taken, the name of a pretrained preset (`smollm2-135m-instruct`, see
`raygent.policies.pretrained`) may stand instead: `resolve_model` turns it into its converted directory in the
cache (converting it on first use). `check_model_reference` is the cheap form for config validation: it accepts
a preset whose file is installed or a model directory, and converts nothing.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from raygent.policies.pretrained import PRETRAINED, PretrainedError, gguf_path, pretrained_dir

WEIGHT_FILES: tuple[str, ...] = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
TOKENIZER_FILES: tuple[str, ...] = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
    "float16": torch.float16,
    "fp16": torch.float16,
}


class PolicyLoadError(ValueError):
    """The path does not hold a loadable causal-LM checkpoint."""


def check_model_dir(path: str | Path) -> Path:
    """Returns `path` resolved when it is a directory with a config, weights and a tokenizer; raises otherwise."""
    directory = Path(path).expanduser()
    if not directory.exists():
        raise PolicyLoadError(f"policy path {str(directory)!r} does not exist")
    if not directory.is_dir():
        raise PolicyLoadError(f"policy path {str(directory)!r} is a file; expected a model directory")
    missing = []
    if not (directory / "config.json").is_file():
        missing.append("config.json")
    if not any((directory / name).is_file() for name in WEIGHT_FILES) and not any(directory.glob("*.safetensors")):
        missing.append("weights (" + " or ".join(WEIGHT_FILES[::2]) + ")")
    if not any((directory / name).is_file() for name in TOKENIZER_FILES):
        missing.append("a tokenizer (tokenizer.json or tokenizer_config.json)")
    if missing:
        raise PolicyLoadError(
            f"{str(directory)!r} is not a model directory: missing {', '.join(missing)}. Point the policy at a "
            "directory written by save_pretrained (a real checkpoint, or one made by "
            "raygent.policies.presets.build_tiny_model)."
        )
    return directory.resolve()


def check_model_reference(model: str | Path) -> str:
    """`model` unchanged when it names a pretrained preset whose file is installed or a model directory; otherwise
    a `PolicyLoadError` that says it is neither (with the known presets, a "did you mean", and what the directory
    lacks). Converts nothing: cheap enough for config validation."""
    text = str(model)
    if text in PRETRAINED:
        try:
            gguf_path(text)
        except PretrainedError as exc:
            raise PolicyLoadError(str(exc)) from None
        return text
    try:
        check_model_dir(text)
    except PolicyLoadError as exc:
        close = difflib.get_close_matches(text, list(PRETRAINED), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise PolicyLoadError(
            f"{text!r} is neither a pretrained preset{hint} ({', '.join(sorted(PRETRAINED))}) nor a model "
            f"directory: {exc}"
        ) from None
    return text


def resolve_model(model: str | Path) -> Path:
    """The checkpoint directory `model` stands for: a pretrained preset's converted directory in the cache
    (converted on first use) or `model` itself once `check_model_dir` accepts it; `PolicyLoadError` otherwise."""
    text = str(model)
    check_model_reference(text)
    if text in PRETRAINED:
        try:
            return pretrained_dir(text)
        except PretrainedError as exc:
            raise PolicyLoadError(str(exc)) from None
    return check_model_dir(text)


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    """`"float32"`/`"bfloat16"`/`"float16"` (or the short forms, or a `torch.dtype`) as a `torch.dtype`."""
    if isinstance(dtype, torch.dtype):
        return dtype
    try:
        return DTYPES[dtype]
    except KeyError:
        raise PolicyLoadError(f"unknown dtype {dtype!r}; expected one of {', '.join(DTYPES)}") from None


def load_tokenizer(path: str | Path) -> PreTrainedTokenizerBase:
    """The checkpoint's tokenizer. A tokenizer without a pad token (Llama's) gets its EOS token as the pad token,
    which batched generation needs; padded positions are masked, so the choice does not change any output.
    `path` may also name a pretrained preset (`resolve_model`)."""
    directory = resolve_model(path)
    tokenizer = AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_policy(
    path: str | Path, dtype: str | torch.dtype = "float32", device: str | torch.device = "cpu"
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """(model, tokenizer) from a local checkpoint directory (or a pretrained preset's name, `resolve_model`); the
    model in eval mode on `device` in `dtype`.

    Raises `PolicyLoadError` when `path` is not a model directory (naming what is missing) or `dtype` is unknown.
    """
    directory = resolve_model(path)
    torch_dtype = resolve_dtype(dtype)
    tokenizer = load_tokenizer(directory)
    model = AutoModelForCausalLM.from_pretrained(str(directory), dtype=torch_dtype, local_files_only=True)
    torch.nn.Module.to(model, torch.device(device))
    model.eval()
    return model, tokenizer
