"""Inference backends behind one protocol (`base.InferenceBackend`), chosen by name in config.

`BACKENDS` maps a name to the `"module:attr"` of a class with a `from_pretrained(path, **options)` constructor;
`make_backend` imports it only when asked, so choosing `hf` never imports vLLM (docs/design.md §7.3: explicit registry,
no import-time magic).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, cast

from raygent.policies.backends.base import Completion, InferenceBackend, Prompt, SamplingParams

BACKENDS: dict[str, str] = {
    "hf": "raygent.policies.backends.hf:HFBackend",
    "vllm": "raygent.policies.backends.vllm:VLLMBackend",
}


def make_backend(name: str, path: str | Path, **options: Any) -> InferenceBackend:
    """The backend `name` over the checkpoint directory `path`; `options` go to its `from_pretrained`."""
    try:
        target = BACKENDS[name]
    except KeyError:
        raise KeyError(f"unknown inference backend {name!r}; known backends: {', '.join(BACKENDS)}") from None
    module_name, _, attribute = target.partition(":")
    backend_class = getattr(importlib.import_module(module_name), attribute)
    return cast(InferenceBackend, backend_class.from_pretrained(path, **options))


__all__ = ["BACKENDS", "Completion", "InferenceBackend", "Prompt", "SamplingParams", "make_backend"]
