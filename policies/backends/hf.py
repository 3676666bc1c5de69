"""The transformers backend: batched `model.generate` with token ids and sampling log-probabilities.

Many prompts are generated together: they are sorted by length, cut into micro-batches of `max_batch_size`,
left-padded, and decoded with the KV cache. Log-probabilities are recorded while generating, not recomputed
from text: a logits processor placed before the sampling warpers sees each step's raw logits, keeps
log_softmax(logits / temperature) for one step, and gathers the entry of the token sampled from it (memory
O(batch × vocab), not O(batch × length × vocab) as `output_logits` would be).

Departures from `model.generate`'s defaults, so that `SamplingParams` alone decides sampling:

- The checkpoint's `generation_config.json` sampling defaults (Qwen2.5 ships top_k=20, repetition_penalty=1.05)
  are dropped when the backend takes the model; only its EOS/PAD/BOS ids are kept. vLLM does the same with
  `generation_config="vllm"`.
- A seeded prompt (`SamplingParams.prompt_seeds`) draws from its own `torch.Generator` (`SeededSampler`, the last
  processor: it samples each row itself and leaves `generate` a one-hot choice), so its tokens do not depend on
  the other prompts of the call or on how they are cut into micro-batches. Unseeded prompts use torch's global
  generator, as `generate` does.
- Stop strings are matched on the decoded response (all of it, each step), not with transformers'
  `StopStringCriteria`, so a stop string that ends inside a token or spans several tokens is always caught.

Adapter-only sync (`lora=`, a `policies.adapters.LoraSpec`; the trainer passes `learner.lora`): the backend
injects the learner's peft adapters into its model once at start (B is zero, so version 0 is the base) and each
`load_weights` of adapter tensors copies them into those adapters; the base is loaded once and never sent again.
peft's unmerged forward costs generation ~2 % here (SmolLM2-135M, rank 16 on every linear layer, 8 prompts × 32
tokens, 2 threads: 3.35 s against 3.28 s without adapters, 2026-12-08), less than a merge from a kept base copy
would cost in memory, so the adapters stay unmerged — and the engine's forward is the learner's, op for op.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor
from transformers import (
    GenerationConfig,
    LogitsProcessor,
    LogitsProcessorList,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    StoppingCriteria,
    StoppingCriteriaList,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from raygent.policies.adapters import LoraSpec, inject_lora, is_adapter_state
from raygent.policies.backends.base import Completion, Prompt, SamplingParams
from raygent.policies.loading import load_policy


class LogprobRecorder(LogitsProcessor):
    """Records log π_T(token) of every sampled token, π_T = softmax(raw logits / temperature).

    Called once per generation step with the raw logits of that step; the token sampled from them only shows up
    as the last input id of the next call, so each call scores the previous step's token and `collect` scores the
    last one. Returns the scores unchanged.
    """

    def __init__(self, temperature: float) -> None:
        self.temperature = temperature
        self.recorded: list[Tensor] = []
        self._pending: Tensor | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self._pending is not None:
            self.recorded.append(self._pending.gather(-1, input_ids[:, -1:]).squeeze(-1))
        self._pending = torch.log_softmax(scores.float() / self.temperature, dim=-1)
        return scores

    def collect(self, new_tokens: Tensor) -> Tensor:
        """`[B, n]` log-probabilities of `new_tokens` (`[B, n]`, the generated part of the sequences)."""
        steps = new_tokens.shape[1]
        if len(self.recorded) < steps and self._pending is not None:
            self.recorded.append(self._pending.gather(-1, new_tokens[:, len(self.recorded)].unsqueeze(-1)).squeeze(-1))
        if len(self.recorded) < steps:
            raise RuntimeError(f"recorded {len(self.recorded)} logprobs for {steps} generated tokens")
        return torch.stack(self.recorded[:steps], dim=1)


class SeededSampler(LogitsProcessor):
    """Samples row `i` from softmax(the warped scores) with its own generator (seeded `seeds[i]`) and returns
    scores that keep only that token, so `generate`'s own draw from them is that token whatever its generator."""

    def __init__(self, seeds: Sequence[int], device: torch.device) -> None:
        self.generators = [torch.Generator(device=device).manual_seed(seed) for seed in seeds]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        probs = torch.softmax(scores.float(), dim=-1)
        chosen = torch.cat([torch.multinomial(probs[row], 1, generator=g) for row, g in enumerate(self.generators)])
        only = torch.full_like(scores, float("-inf"))
        return only.scatter_(1, chosen.unsqueeze(-1), 0.0)  # type: ignore[return-value]


class StopOnText(StoppingCriteria):
    """Finishes a sequence once its decoded response contains a stop string; remembers at which length."""

    def __init__(
        self, tokenizer: PreTrainedTokenizerBase, stops: Sequence[str], prompt_length: int, eos_ids: Sequence[int]
    ) -> None:
        self.tokenizer = tokenizer
        self.stops = tuple(stops)
        self.prompt_length = prompt_length
        self.eos_ids = torch.tensor(list(eos_ids), dtype=torch.long)
        self.stopped_at: dict[int, int] = {}
        """row → number of response tokens when a stop string first appeared."""

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor | None, **kwargs: object) -> Tensor:
        new_tokens = input_ids[:, self.prompt_length :]
        ended = torch.isin(new_tokens, self.eos_ids.to(new_tokens.device)).any(dim=1).tolist()
        rows = [row for row in range(input_ids.shape[0]) if row not in self.stopped_at and not ended[row]]
        if rows:
            texts = self.tokenizer.batch_decode(new_tokens[rows].tolist(), skip_special_tokens=True)
            for row, text in zip(rows, texts, strict=True):
                if any(stop in text for stop in self.stops):
                    self.stopped_at[row] = new_tokens.shape[1]
        done = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        done[list(self.stopped_at)] = True
        return done


class HFBackend:
    """`InferenceBackend` over a transformers causal LM (see the module docstring).

    The backend owns `model`: it replaces its `generation_config` and updates its weights in place.
    """

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        version: int = 0,
        max_batch_size: int = 64,
        lora: LoraSpec | Mapping[str, Any] | None = None,
    ) -> None:
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be >= 1, got {max_batch_size}")
        self.lora: LoraSpec | None = None if lora is None else LoraSpec.model_validate(lora)
        """The adapters this engine applies (adapter-only sync), or None (full-weight sync)."""
        if self.lora is not None:
            inject_lora(model, self.lora)
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.max_batch_size = max_batch_size
        self._version = version
        self.eos_ids = _eos_ids(model, tokenizer)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.eos_ids[0]
        self.pad_id = int(pad)
        self.model.generation_config = GenerationConfig(
            eos_token_id=self.eos_ids, pad_token_id=self.pad_id, bos_token_id=tokenizer.bos_token_id
        )

    @classmethod
    def from_pretrained(
        cls,
        path: str | Path,
        dtype: str | torch.dtype = "float32",
        device: str | torch.device = "cpu",
        version: int = 0,
        max_batch_size: int = 64,
        threads: int | None = None,
        lora: LoraSpec | Mapping[str, Any] | None = None,
    ) -> HFBackend:
        """A backend over the checkpoint directory `path` (or a pretrained preset's name), loaded by `load_policy`.
        `threads`: torch's intra-op threads in this process (None keeps its setting; Ray gives an actor one per
        reserved CPU, and a sync run's engine may use the cores the learner leaves idle while it generates).
        `lora`: the learner's adapters, for adapter-only sync (see the module docstring)."""
        if threads is not None:
            if threads < 1:
                raise ValueError(f"threads must be >= 1, got {threads}")
            torch.set_num_threads(threads)
        model, tokenizer = load_policy(path, dtype=dtype, device=device)
        return cls(model, tokenizer, version=version, max_batch_size=max_batch_size, lora=lora)

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
        """One completion per prompt, in order; prompts of similar length share a micro-batch."""
        encoded = [self.encode(prompt) for prompt in prompts]
        seeds = params.prompt_seeds(len(encoded))
        order = sorted(range(len(encoded)), key=lambda index: -len(encoded[index]))
        results: list[Completion | None] = [None] * len(encoded)
        for start in range(0, len(order), self.max_batch_size):
            chunk = order[start : start + self.max_batch_size]
            chunk_seeds = None if seeds is None else [seeds[i] for i in chunk]
            for index, completion in zip(
                chunk, self._generate_batch([encoded[i] for i in chunk], params, chunk_seeds), strict=True
            ):
                results[index] = completion
        return [completion for completion in results if completion is not None]

    def load_weights(self, state: Mapping[str, Tensor], version: int) -> None:
        """Copies `state` into the model's parameters in place (dtype/device converted) and sets the version.

        `state` may name a subset of the parameters (e.g. only the trained ones); an unknown name or a shape
        mismatch raises and leaves the version unchanged. With `lora`, a sync carries the adapters' tensors
        (`policies.adapters.is_adapter_state`), which are this model's adapter parameters by name.
        """
        if version < 0:
            raise ValueError(f"version must be >= 0, got {version}")
        if is_adapter_state(state) and self.lora is None:
            raise KeyError("load_weights: adapter tensors for a backend built without lora (pass lora=...)")
        with torch.no_grad():
            result = self.model.load_state_dict(dict(state), strict=False)
        if result.unexpected_keys:
            raise KeyError(f"load_weights: the model has no parameters named {result.unexpected_keys[:5]}")
        self._version = version

    def _generate_batch(
        self, prompts: list[list[int]], params: SamplingParams, seeds: list[int] | None
    ) -> list[Completion]:
        device = self.model.device
        width = max(len(ids) for ids in prompts)
        input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, ids in enumerate(prompts):
            input_ids[row, width - len(ids) :] = torch.tensor(ids)
            attention_mask[row, width - len(ids) :] = 1
        recorder = LogprobRecorder(params.logprob_temperature)
        processors: list[LogitsProcessor] = [recorder]
        if not params.greedy:
            processors.append(TemperatureLogitsWarper(params.temperature))
            if params.top_k > 0:
                processors.append(TopKLogitsWarper(params.top_k))
            if params.top_p < 1.0:
                processors.append(TopPLogitsWarper(params.top_p))
            if seeds is not None:
                processors.append(SeededSampler(seeds, device))
        stop = StopOnText(self.tokenizer, params.stop, width, self.eos_ids) if params.stop else None
        # Our processors do all the warping; transformers' own are switched off (its global default is top_k=50).
        sampling = {"do_sample": True, "temperature": 1.0, "top_k": 0, "top_p": 1.0} if not params.greedy else {}
        config = GenerationConfig(
            **sampling,
            num_beams=1,
            max_new_tokens=params.max_new_tokens,
            use_cache=True,
            return_dict_in_generate=True,
            eos_token_id=self.eos_ids,
            pad_token_id=self.pad_id,
            bos_token_id=self.tokenizer.bos_token_id,
        )
        with torch.inference_mode():
            output = self.model.generate(
                input_ids=input_ids.to(device),
                attention_mask=attention_mask.to(device),
                past_key_values=self._shared_prefill(prompts, input_ids.to(device), attention_mask.to(device)),
                generation_config=config,
                logits_processor=LogitsProcessorList(processors),
                stopping_criteria=StoppingCriteriaList([stop] if stop else []),
            )
        new_tokens = output.sequences[:, width:]
        logprobs = recorder.collect(new_tokens).cpu()
        new_tokens = new_tokens.cpu()
        return [
            self._completion(
                prompts[row], new_tokens[row], logprobs[row], params, stop.stopped_at.get(row) if stop else None
            )
            for row in range(len(prompts))
        ]

    def _shared_prefill(self, prompts: list[list[int]], input_ids: Tensor, attention_mask: Tensor) -> Any:
        """The KV cache of each row's prompt but its last token, every distinct prompt computed once and its cache
        copied to the rows that repeat it (a GRPO group's completions); `generate` then runs from each prompt's
        last token. None when no prompt repeats (`generate` prefills them itself). The cache is the one `generate`
        would build: the same left-padded rows at the positions it gives them (attention mask cumsum − 1)."""
        first: dict[tuple[int, ...], int] = {}
        rows = [first.setdefault(tuple(ids), len(first)) for ids in prompts]
        if len(first) == len(prompts) or input_ids.shape[1] < 2:
            return None
        distinct = torch.tensor([rows.index(k) for k in range(len(first))], device=input_ids.device)
        mask = attention_mask[distinct, :-1]
        positions = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 1)
        cache = self.model(
            input_ids=input_ids[distinct, :-1], attention_mask=mask, position_ids=positions, use_cache=True
        ).past_key_values
        cache.reorder_cache(torch.tensor(rows, device=input_ids.device))
        return cache

    def _completion(
        self, prompt: list[int], tokens: Tensor, logprobs: Tensor, params: SamplingParams, stopped_at: int | None
    ) -> Completion:
        ids = tokens.tolist()
        end, reason = len(ids), "length"
        eos_positions = [position for position, token in enumerate(ids) if token in self.eos_ids]
        if eos_positions:
            end, reason = eos_positions[0] + 1, "stop"
        if stopped_at is not None and stopped_at <= end:
            end, reason = stopped_at, "stop"
        response = ids[:end]
        text = str(self.tokenizer.decode(response, skip_special_tokens=True))
        return Completion(
            prompt_ids=prompt,
            response_ids=response,
            logprobs=logprobs[:end].tolist(),
            text=cut_at_stop(text, params.stop, params.include_stop_str_in_output),
            finish_reason="stop" if reason == "stop" else "length",
            policy_version=self._version,
        )


def cut_at_stop(text: str, stops: Sequence[str], include: bool = False) -> str:
    """`text` up to its earliest stop string (kept when `include`), or unchanged when it holds none."""
    hits = [(text.find(stop), stop) for stop in stops if stop in text]
    if not hits:
        return text
    position, stop = min(hits)
    return text[: position + len(stop)] if include else text[:position]


def _eos_ids(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> list[int]:
    """The checkpoint's EOS ids (generation config, then model config) plus the tokenizer's, deduplicated."""
    ids: list[int] = []
    for source in (getattr(model, "generation_config", None), model.config):
        value = getattr(source, "eos_token_id", None) if source is not None else None
        ids.extend([value] if isinstance(value, int) else list(value or []))
    if tokenizer.eos_token_id is not None:
        ids.append(int(tokenizer.eos_token_id))
    unique = list(dict.fromkeys(int(token) for token in ids))
    if not unique:
        raise ValueError("neither the model nor the tokenizer defines an EOS token")
    return unique
