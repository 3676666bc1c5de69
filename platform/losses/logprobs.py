"""From a causal LM's logits to the per-token quantities the losses take.

Layout: `logits[b, t]` is the distribution that produced `token_ids[b, t]`; the caller has already shifted
(logits of position t−1 of the full sequence score token t) and sliced to the positions it trains on.
"""

from __future__ import annotations

import torch
from torch import Tensor


def token_logprobs(logits: Tensor, token_ids: Tensor, temperature: float = 1.0) -> Tensor:
    """log π(token_ids[b, t] | ·): `[B, T, V]`, `[B, T]` → `[B, T]` (float32).

    `temperature` must be the one the engine sampled with, so that these log-probabilities and the ones recorded
    at generation describe the same distribution (otherwise the PPO ratio is off even on-policy).
    Out-of-range ids (padding such as −100) give garbage at their positions; losses mask those out.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    log_probs = torch.log_softmax(logits.float() / temperature, dim=-1)
    safe_ids = token_ids.clamp(min=0, max=logits.shape[-1] - 1)
    return log_probs.gather(-1, safe_ids.unsqueeze(-1)).squeeze(-1)


def entropy_from_logits(logits: Tensor) -> Tensor:
    """Entropy of each position's full next-token distribution: `[B, T, V]` → `[B, T]` (float32)."""
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    return -(log_probs.exp() * log_probs).sum(dim=-1)
