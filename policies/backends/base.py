"""The inference-backend seam (docs/design.md §4): `InferenceBackend`, its `SamplingParams` and its `Completion`s.

Conventions every backend keeps, and the trainer relies on:

- A prompt is either token ids (preferred: the rollout worker builds them with `raygent.policies.prompts
  .encode_prompt`) or text, which the backend encodes without adding special tokens. `Completion.prompt_ids` is
  exactly what the model saw.
- `response_ids` are all the tokens sampled, including the EOS token or the tokens that completed a stop
  string; `logprobs[i]` is the log-probability of `response_ids[i]` under softmax(logits / temperature) — the
  distribution at the sampling temperature before any top-p/top-k truncation, which is what the learner's
  `token_logprobs(logits, ids, temperature)` recomputes. With temperature 0 (greedy) it is temperature 1.
- `text` is the decoded response without special tokens, cut before the first stop string unless
  `include_stop_str_in_output` (vLLM's convention).
- `finish_reason` is `"stop"` when the response ended with EOS or a stop string, `"length"` when it hit
  `max_new_tokens` (the trainer may mask such truncated responses out of the loss).
- `policy_version` is the version of the weights that generated the completion; `load_weights(state, version)`
  replaces the weights (in place) and sets it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator
from torch import Tensor

Prompt = str | Sequence[int]
"""Token ids, or text to encode without special tokens."""


class SamplingParams(BaseModel):
    """How to sample one batch. `temperature == 0` is greedy decoding; `top_k == 0` and `top_p == 1` disable
    those truncations.

    Seeds are per prompt: prompt `i` of a call samples from its own generator, seeded `seeds[i]` or, with one
    `seed`, `seed + i` (one seed for all would make the identical prompts of a GRPO group sample identical
    responses). A seeded prompt's draws depend on its seed alone, not on which prompts share its batch, so an
    engine may batch seeded requests from many callers and each stays reproducible (up to float rounding of the
    batch's padding)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(default=1.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    top_k: int = Field(default=0, ge=0)
    max_new_tokens: int = Field(default=64, ge=1)
    stop: tuple[str, ...] = ()
    include_stop_str_in_output: bool = False
    seed: int | None = None
    seeds: tuple[int, ...] | None = None
    """One seed per prompt of the call (instead of `seed`)."""

    @model_validator(mode="after")
    def _stops_not_empty(self) -> SamplingParams:
        if any(not s for s in self.stop):
            raise ValueError("stop strings must be non-empty")
        return self

    @model_validator(mode="after")
    def _one_kind_of_seed(self) -> SamplingParams:
        if self.seed is not None and self.seeds is not None:
            raise ValueError("give seed or seeds, not both")
        return self

    def prompt_seeds(self, count: int) -> list[int] | None:
        """The seed of each of `count` prompts (None when unseeded); `seeds` must name exactly `count`."""
        if self.seeds is not None:
            if len(self.seeds) != count:
                raise ValueError(f"{len(self.seeds)} seeds for {count} prompts")
            return list(self.seeds)
        return None if self.seed is None else [self.seed + index for index in range(count)]

    def unseeded(self) -> SamplingParams:
        """These parameters without their seeds (what requests batched together must share)."""
        return self.model_copy(update={"seed": None, "seeds": None})

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    @property
    def logprob_temperature(self) -> float:
        """The temperature the recorded log-probabilities are taken at (1 for greedy decoding)."""
        return 1.0 if self.greedy else self.temperature


class Completion(BaseModel):
    """One generated response with the token ids and log-probabilities recorded at generation time."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_ids: list[int]
    response_ids: list[int]
    logprobs: list[float]
    text: str
    finish_reason: Literal["stop", "length"]
    policy_version: int = Field(ge=0)

    @model_validator(mode="after")
    def _one_logprob_per_token(self) -> Completion:
        if len(self.logprobs) != len(self.response_ids):
            raise ValueError(f"{len(self.response_ids)} response ids but {len(self.logprobs)} logprobs")
        return self


@runtime_checkable
class InferenceBackend(Protocol):
    """Generates for many prompts at once and takes new weights between calls."""

    @property
    def version(self) -> int:
        """The version of the weights in use (0 for the weights loaded at start)."""
        ...

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Completion]:
        """One completion per prompt, in order."""
        ...

    def load_weights(self, state: Mapping[str, Tensor], version: int) -> None:
        """Replaces the named parameters with `state` (names as in the model's `state_dict`) and sets `version`."""
        ...
