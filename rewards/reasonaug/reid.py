"""The ReID side of ReasonAug: a small CNN embedding trained with a batch-hard triplet loss on CPU, and its mAP and
Rank-1 on a query/gallery split. Used by the MAGR reward model (`magr.py`, which owns the model being trained
in the closed loop) and by the recipe (the starting model and the frozen reference judge).

Images are uint8 `[N, 3, 32, 16]` arrays; features are l2-normalised, so squared distance = 2 - 2 cos.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, Field
from torch import Tensor, nn

IMAGE_SHAPE = (3, 32, 16)


class ReIDSettings(BaseModel):
    """The ReID model and its training (`reward.kwargs.reid`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    width: int = Field(default=16, ge=4, le=128)
    """Channels of the first conv block (doubled in each of the next two)."""
    embed: int = Field(default=32, ge=4, le=512)
    lr: float = Field(default=3e-3, gt=0)
    batch_ids: int = Field(default=8, ge=2)
    """P: identities per triplet batch."""
    per_id: int = Field(default=4, ge=2)
    """K: images per identity in a batch."""
    margin: float = Field(default=0.3, gt=0)
    pretrain_steps: int = Field(default=300, ge=0)
    """Steps of the starting model on the real training views (round 0, shared by every variant)."""
    judge_steps: int = Field(default=400, ge=0)
    """Steps of the frozen reference (identity judge) on real views plus identity-preserving renders."""
    round_steps: int = Field(default=100, ge=0)
    """Steps of each closed-loop retraining round on real views plus the accepted augmentations."""
    pool_max: int = Field(default=2048, ge=0)
    """The most accepted augmentations kept (the newest)."""
    threads: int = Field(default=2, ge=1)


class ReIDNet(nn.Module):
    """Three conv blocks, global average pooling, a linear embedding, l2-normalised."""

    def __init__(self, width: int = 16, embed: int = 32) -> None:
        super().__init__()
        w = width
        self.features = nn.Sequential(
            nn.Conv2d(3, w, 3, padding=1),
            nn.BatchNorm2d(w),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(w, 2 * w, 3, padding=1),
            nn.BatchNorm2d(2 * w),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(2 * w, 4 * w, 3, padding=1),
            nn.BatchNorm2d(4 * w),
            nn.ReLU(),
        )
        self.head = nn.Linear(4 * w, embed)

    def forward(self, x: Tensor) -> Tensor:
        h = self.features(x)
        return F.normalize(self.head(h.mean(dim=(2, 3))), dim=1)


def build_model(settings: ReIDSettings, seed: int) -> ReIDNet:
    torch.manual_seed(seed)
    return ReIDNet(settings.width, settings.embed)


def to_tensor(images: np.ndarray) -> Tensor:
    return torch.from_numpy(np.asarray(images, dtype=np.float32) / 255.0)


def decode_image(text: str) -> np.ndarray:
    """The uint8 image a step's info carries as base64 (`environments/reasonaug/env.py`)."""
    return np.frombuffer(base64.b64decode(text), dtype=np.uint8).reshape(IMAGE_SHAPE)


@torch.no_grad()
def embed(model: nn.Module, images: np.ndarray, batch: int = 512) -> Tensor:
    """Features `[N, D]` in eval mode."""
    model.eval()
    if len(images) == 0:
        return torch.zeros(0, 0)
    return torch.cat([model(to_tensor(images[i : i + batch])) for i in range(0, len(images), batch)])


def batch_hard_triplet(features: Tensor, labels: Tensor, margin: float) -> Tensor:
    """Hermans et al.'s batch-hard triplet loss: per anchor, its farthest positive against its nearest negative."""
    dist = torch.cdist(features, features)
    same = labels[:, None] == labels[None, :]
    eye = torch.eye(len(labels), dtype=torch.bool)
    hardest_pos = dist.masked_fill(~same | eye, 0.0).max(dim=1).values
    hardest_neg = dist.masked_fill(same, float("inf")).min(dim=1).values
    valid = (same & ~eye).any(dim=1) & (~same).any(dim=1)
    losses = F.relu(hardest_pos - hardest_neg + margin)
    return losses[valid].mean() if valid.any() else features.sum() * 0.0


def pk_batch(labels: np.ndarray, p: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of P identities x K images (with replacement when an identity has fewer than K)."""
    ids = np.unique(labels)
    chosen = rng.choice(ids, size=min(p, len(ids)), replace=False)
    picks = []
    for identity in chosen:
        members = np.flatnonzero(labels == identity)
        picks.append(rng.choice(members, size=k, replace=len(members) < k))
    return np.concatenate(picks)


def train_steps(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    images: np.ndarray,
    labels: np.ndarray,
    steps: int,
    settings: ReIDSettings,
    rng: np.random.Generator,
) -> float:
    """`steps` triplet steps on (images, labels); returns the mean loss of the last ten."""
    model.train()
    tensor = to_tensor(images)
    targets = torch.from_numpy(np.asarray(labels, dtype=np.int64))
    losses: list[float] = []
    for _ in range(steps):
        index = torch.from_numpy(pk_batch(labels, settings.batch_ids, settings.per_id, rng))
        loss = batch_hard_triplet(model(tensor[index]), targets[index], settings.margin)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return float(np.mean(losses[-10:])) if losses else float("nan")


def make_optimizer(model: nn.Module, settings: ReIDSettings) -> torch.optim.Optimizer:
    return torch.optim.Adam(model.parameters(), lr=settings.lr)


def average_precision(ranked_matches: np.ndarray) -> float:
    hits = np.flatnonzero(ranked_matches)
    if len(hits) == 0:
        return 0.0
    return float(np.mean((np.arange(len(hits)) + 1) / (hits + 1)))


def evaluate(
    model: nn.Module, query_x: np.ndarray, query_y: np.ndarray, gallery_x: np.ndarray, gallery_y: np.ndarray
) -> dict[str, float]:
    """mAP and Rank-1 of the queries against the gallery (cosine similarity; every gallery view of the query's
    identity is a match: queries and gallery are different views)."""
    q, g = embed(model, query_x), embed(model, gallery_x)
    order = torch.argsort(q @ g.T, dim=1, descending=True).numpy()
    matches = gallery_y[order] == query_y[:, None]
    return {
        "map": float(np.mean([average_precision(row) for row in matches])),
        "rank1": float(matches[:, 0].mean()),
    }


def state_of(model: nn.Module) -> dict[str, Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def load_model(state: dict[str, Tensor], settings: ReIDSettings) -> ReIDNet:
    model = ReIDNet(settings.width, settings.embed)
    model.load_state_dict(state)
    model.eval()
    return model


def concat(parts: Sequence[np.ndarray], shape: tuple[int, ...], dtype: type) -> np.ndarray:
    kept = [p for p in parts if len(p)]
    return np.concatenate(kept) if kept else np.zeros((0, *shape), dtype=dtype)
