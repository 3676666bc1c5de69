"""Tiny transformer classifiers (teacher and students), built from config, and their masked-input rewards.

The teacher and the students share one architecture family: token + learned position embeddings, a pre-norm
`nn.TransformerEncoder`, a final LayerNorm and a linear head on the CLS position. The method notes' teacher is
4 layers × 128-d and the student 1 layer × 64-d; the laptop defaults are smaller (see the YAML) so the sweep
fits a 2-core budget.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from raygent.jobs.kd_cip.interactions import RewardFn


@dataclass(frozen=True)
class TransformerSpec:
    """Architecture of one tiny encoder classifier."""

    vocab_size: int
    seq_len: int
    d_model: int = 32
    n_layers: int = 1
    n_heads: int = 2
    ff_mult: int = 4
    n_classes: int = 2


class TinyTransformer(nn.Module):
    """tokens (B, L) long → logits (B, n_classes), read from position 0 (CLS)."""

    def __init__(self, spec: TransformerSpec) -> None:
        super().__init__()
        self.spec = spec
        self.embed = nn.Embedding(spec.vocab_size, spec.d_model)
        self.position = nn.Parameter(torch.randn(spec.seq_len, spec.d_model))
        layer = nn.TransformerEncoderLayer(
            d_model=spec.d_model,
            nhead=spec.n_heads,
            dim_feedforward=spec.ff_mult * spec.d_model,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers=spec.n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(spec.d_model)
        self.head = nn.Linear(spec.d_model, spec.n_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden = self.embed(tokens) + self.position[: tokens.shape[1]]
        hidden = self.encoder(hidden)
        return self.head(self.norm(hidden[:, 0]))


def log_odds(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """(..., C) logits and (...) labels → (...) log p(y|x) − log(1 − p(y|x)), the reward v of the notes."""
    logp = torch.log_softmax(logits, dim=-1)
    target = logp.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    others = logp.scatter(-1, labels.unsqueeze(-1), float("-inf")).logsumexp(dim=-1)
    return target - others


def classifier_reward_fn(
    model: nn.Module,
    tokens: torch.Tensor,
    labels: torch.Tensor,
    player_positions: list[int],
    mask_token: int,
    chunk: int = 8192,
) -> RewardFn:
    """The reward function of `interactions`: keep-masks (M, n) → log-odds (B, M) of `labels` on x_T.

    Player i is the token at position `player_positions[i]`; masked players become `mask_token`. Gradients
    flow to `model` unless the caller runs it under `torch.no_grad()`.
    """
    positions = torch.tensor(player_positions)

    def reward(keep: torch.Tensor) -> torch.Tensor:
        batch, masks = tokens.shape[0], keep.shape[0]
        masked = tokens.unsqueeze(1).repeat(1, masks, 1)  # (B, M, L)
        drop = ~keep.unsqueeze(0).expand(batch, -1, -1)  # (B, M, n)
        masked[..., positions] = masked[..., positions].masked_fill(drop, mask_token)
        flat = masked.reshape(batch * masks, -1)
        flat_labels = labels.repeat_interleave(masks)
        out = [log_odds(model(flat[i : i + chunk]), flat_labels[i : i + chunk]) for i in range(0, len(flat), chunk)]
        return torch.cat(out).reshape(batch, masks)

    return reward


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
