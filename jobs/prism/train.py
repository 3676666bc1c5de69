"""Training the noise model, synthesising noisy depth with it, the metrics, and the downstream classifier.

Metrics (pure functions of arrays):
- `mask_scores`: precision, recall and F1 of the predicted invalid mask against the sensor's, over all pixels;
- `error_w1`: the 1-Wasserstein distance between the distributions of Δz = depth − clean depth on pixels valid
  in both the sensor capture and the synthesis (metres);
- the downstream accuracy: a small CNN classifies the target object's shape (box, cylinder, sphere) from depth
  alone; it is trained on clean simulated depth, on simulated depth plus Gaussian noise (σ_z = k z², no holes),
  on PRISM-synthesised depth, or (the ceiling) on the sensor's own captures of the same training scenes, and
  tested on sensor ("real") captures of held-out scenes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from scipy.stats import wasserstein_distance
from torch import nn

from raygent.jobs.prism.model import DZ_SCALE, Heads, NoiseUNet, noise_loss
from raygent.jobs.prism.scenes import NOISE_K, SHAPES, Z_MAX, Batch


@dataclass(frozen=True)
class NoiseSettings:
    heads: Heads
    gamma: float
    levels: int
    width: int
    epochs: int
    batch_size: int
    lr: float


def train_noise_model(batch: Batch, settings: NoiseSettings, seed: int) -> NoiseUNet:
    """Fit the noise model to (simulator inputs → sensor capture) pairs."""
    torch.manual_seed(seed)
    model = NoiseUNet(5, settings.width, settings.heads)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
    inputs = torch.from_numpy(batch.inputs())
    clean = torch.from_numpy(batch.depth / Z_MAX)
    real = torch.from_numpy(batch.real / Z_MAX)
    invalid = torch.from_numpy(batch.invalid)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(settings.epochs):
        order = torch.randperm(len(batch), generator=generator)
        for start in range(0, len(batch), settings.batch_size):
            index = order[start:start + settings.batch_size]
            loss = noise_loss(model(inputs[index]), real[index], clean[index], invalid[index], settings.heads,
                              settings.gamma, settings.levels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


@torch.no_grad()
def predict_mask(model: NoiseUNet, batch: Batch) -> np.ndarray:
    """The model's invalid-mask decision: invalidation probability above 0.5 (dual head), or a regressed depth
    below half the clean depth (single head). The mask metrics score this decision."""
    model.eval()
    output = model(torch.from_numpy(batch.inputs())).numpy()
    model.train()
    if model.heads == "single":
        return output[:, 0] * Z_MAX < 0.5 * batch.depth
    return output[:, 0] > 0.0


@torch.no_grad()
def synthesise(model: NoiseUNet, batch: Batch, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(noisy depth with 0 where invalid, invalid mask) sampled for the clean scenes of `batch`.

    Dual head: M ~ Bernoulli(σ(logit)) per pixel and Δz ~ N(μ, σ²) from the inaccuracy head. Single head: its
    regressed depth, the mask where it is below half the clean depth (a deterministic map: nothing to sample).
    """
    model.eval()
    output = model(torch.from_numpy(batch.inputs())).numpy()
    model.train()
    clean = batch.depth
    if model.heads == "single":
        depth = output[:, 0] * Z_MAX
        invalid = depth < 0.5 * clean
    else:
        rng = np.random.default_rng(seed)
        invalid = rng.random(clean.shape) < 1.0 / (1.0 + np.exp(-output[:, 0]))
        scale = np.exp(np.clip(output[:, 2], -6.0, 3.0))
        depth = clean + DZ_SCALE * (output[:, 1] + scale * rng.normal(size=clean.shape))
    return np.where(invalid, 0.0, depth).astype(np.float32), invalid


def mask_scores(predicted: np.ndarray, actual: np.ndarray) -> dict[str, float]:
    """Precision, recall and F1 of a predicted boolean mask (the positive class: invalid)."""
    true_positive = float(np.logical_and(predicted, actual).sum())
    precision = true_positive / max(float(predicted.sum()), 1.0)
    recall = true_positive / max(float(actual.sum()), 1.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def error_w1(clean: np.ndarray, real: np.ndarray, real_invalid: np.ndarray, synth: np.ndarray,
             synth_invalid: np.ndarray) -> float:
    """W1 between the Δz of the sensor and of the synthesis, on pixels both return (metres)."""
    both = ~real_invalid & ~synth_invalid
    if not both.any():
        return float("inf")
    return float(wasserstein_distance((real - clean)[both], (synth - clean)[both]))


def gaussian_noise(batch: Batch, seed: int) -> np.ndarray:
    """The usual sim2real baseline: D + N(0, (k z²)²) everywhere, no invalidation."""
    rng = np.random.default_rng(seed)
    return (batch.depth + rng.normal(size=batch.depth.shape) * NOISE_K * batch.depth**2).astype(np.float32)


class ShapeNet(nn.Module):
    """A depth-only shape classifier (three conv stages, global pooling, linear)."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 2 * width, 3, padding=1), nn.ReLU(),
        )
        self.head = nn.Linear(2 * width, len(SHAPES))

    def forward(self, depth: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(depth[:, None]).mean(dim=(2, 3)))


def downstream_accuracy(train_depth: np.ndarray, train_label: np.ndarray, test_depth: np.ndarray,
                        test_label: np.ndarray, epochs: int, seed: int, batch_size: int = 32) -> float:
    """Train `ShapeNet` on one training depth set, return its accuracy on the sensor test captures."""
    torch.manual_seed(seed)
    model = ShapeNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    x = torch.from_numpy(train_depth / Z_MAX)
    y = torch.from_numpy(train_label)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=generator)
        for start in range(0, len(x), batch_size):
            index = order[start:start + batch_size]
            loss = F.cross_entropy(model(x[index]), y[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        predicted = model(torch.from_numpy(test_depth / Z_MAX)).argmax(dim=1).numpy()
    return float((predicted == test_label).mean())
