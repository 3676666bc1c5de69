"""Masking and reduction of per-token losses: `token-mean` and `seq-mean-token-mean`.

Layout used by every loss in this package: per-token tensors are `[B, T]`, batch first, one row per sequence,
right-padded; `mask` is `[B, T]` (bool, or float weights), nonzero on the tokens that are trained on.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor

Aggregation = Literal["token-mean", "seq-mean-token-mean"]
AGGREGATIONS: tuple[Aggregation, ...] = ("token-mean", "seq-mean-token-mean")


def check_token_shapes(mask: Tensor, **tensors: Tensor | None) -> None:
    """Raise ValueError unless `mask` is `[B, T]` and every given tensor has the same shape."""
    if mask.dim() != 2:
        raise ValueError(f"mask must be [B, T], got shape {tuple(mask.shape)}")
    for name, tensor in tensors.items():
        if tensor is not None and tensor.shape != mask.shape:
            raise ValueError(f"{name} has shape {tuple(tensor.shape)}, expected {tuple(mask.shape)} like the mask")


def masked_fill_zero(tensor: Tensor, mask: Tensor) -> Tensor:
    """`tensor` with the masked-out positions replaced by 0.

    Losses call this on their inputs before any arithmetic, so padding holding garbage (inf, NaN) can neither
    reach the loss nor turn a zero gradient into NaN (0 · inf) on its way back.
    """
    return tensor.masked_fill(mask == 0, 0.0)


def masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean of `values` over the positions where `mask` is nonzero; 0 when there are none. Shapes as `mask`."""
    weights = mask.to(values.dtype)
    return (masked_fill_zero(values, mask) * weights).sum() / _nonzero(weights.sum())


def aggregate(per_token: Tensor, mask: Tensor, mode: Aggregation, denominator: float | None = None) -> Tensor:
    """Reduce a `[B, T]` per-token loss to a scalar.

    - `token-mean`: Σ_{b,t} m·l / Σ_{b,t} m. Every trained token weighs the same, so long responses weigh more
      (DAPO's choice; verl's default).
    - `seq-mean-token-mean`: the mean over sequences of each sequence's token mean. Every sequence weighs the
      same, so a token of a short response weighs more (DeepSeekMath's GRPO, TRL ≤ 0.14). Sequences without a
      trained token are left out of the mean rather than counted as zero.

    `denominator` replaces the local count (tokens, or non-empty sequences) when the batch is one shard of a
    larger one (gradient accumulation, data parallelism): pass the global count divided by the number of shards
    whose gradients get averaged (DDP averages over its W workers: pass count / W; summed micro-batch gradients:
    pass count), and the shards' gradients add up to the full batch's. With nothing to train on
    the result is 0 and still part of the graph.
    """
    check_token_shapes(mask, per_token=per_token)
    if denominator is not None and not denominator > 0:
        raise ValueError(f"denominator must be > 0, got {denominator}")
    weights = mask.to(per_token.dtype)
    per_token = masked_fill_zero(per_token, mask) * weights
    if mode == "token-mean":
        total = per_token.sum()
        return total / denominator if denominator is not None else total / _nonzero(weights.sum())
    if mode == "seq-mean-token-mean":
        tokens_per_seq = weights.sum(dim=-1)
        seq_means = per_token.sum(dim=-1) / _nonzero(tokens_per_seq)
        if denominator is not None:
            return seq_means.sum() / denominator
        return seq_means.sum() / _nonzero((tokens_per_seq > 0).sum().to(per_token.dtype))
    raise ValueError(f"unknown aggregation {mode!r}; expected one of {AGGREGATIONS}")


def _nonzero(count: Tensor) -> Tensor:
    """`count` with zeros replaced by ones: dividing an all-masked (zero) sum by it gives 0, not NaN."""
    return torch.where(count > 0, count, torch.ones_like(count))
