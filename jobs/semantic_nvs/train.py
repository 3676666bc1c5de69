"""Training Φ and the denoiser, DDIM sampling with the semantic alternation, and the evaluation by camera distance.

- `train_encoder`: Φ learns per-pixel categories on source and target renders (cross-entropy), then is frozen.
- `train_denoiser`: x̂₀-prediction MSE (the denoiser outputs the clean view; faster to train at this budget than
  ε-prediction, and x̂₀ is what the semantic alternation reads). For `alternating`, each training example fills the
  warp holes with one of the three feature maps the sampler will meet: zeros (the first denoising step), Φ(x̂₀)
  of the model's own no-gradient prediction at this noise level, or Φ of the ground-truth target (SemanticNVS
  trains on both GT-derived and predicted features to match test-time statistics).
- `sample`: DDIM, η = 0; for `alternating`, the hole features come from Φ(x̂₀) of the previous step.
- `evaluate`: per camera distance, FD-local (Fréchet distance between Gaussians fitted to Φ's pooled features of
  generated and of true target views: the FID stand-in), Φ's category accuracy on the generated view against
  the true categories in the warp holes and everywhere, and PSNR.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy import linalg
from torch.nn import functional as F

from raygent.jobs.semantic_nvs.model import (
    Denoiser,
    Schedule,
    SemanticEncoder,
    Variant,
    semantic_channels,
    to_unit,
    warp_features,
)
from raygent.jobs.semantic_nvs.scenes import Pairs


@dataclass(frozen=True)
class TrainSettings:
    steps: int
    batch_size: int
    lr: float


def train_encoder(pairs: Pairs, classes: int, width: int, settings: TrainSettings, seed: int) -> SemanticEncoder:
    """Φ trained to segment the renders (sources and targets), standardised, frozen, in eval mode."""
    torch.manual_seed(seed)
    encoder = SemanticEncoder(classes, width)
    images = torch.from_numpy(np.concatenate([pairs.source, pairs.target]))
    labels = torch.from_numpy(np.concatenate([pairs.source_category, pairs.target_category]))
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(encoder.parameters(), lr=settings.lr)
    for _ in range(settings.steps):
        index = torch.randint(len(images), (settings.batch_size,), generator=generator)
        loss = F.cross_entropy(encoder(images[index]), labels[index])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    encoder.standardise(images[:512])
    encoder.eval()
    for parameter in encoder.parameters():
        parameter.requires_grad_(False)
    return encoder


@dataclass
class Conditioning:
    """Tensors of a set of pairs that do not change while sampling or training."""

    source: torch.Tensor  # (N, 3, S, S) in [−1, 1]
    rays: torch.Tensor  # (N, 6, S, S)
    warped: torch.Tensor  # (N, C, S, S): Φ(source) warped to the target, zero in the holes
    mask: torch.Tensor  # (N, 1, S, S)

    def take(self, index: torch.Tensor) -> Conditioning:
        return Conditioning(self.source[index], self.rays[index], self.warped[index], self.mask[index])

    def tensor(self, variant: Variant, generated: torch.Tensor | None) -> torch.Tensor:
        return torch.cat([self.source, self.rays, semantic_channels(variant, self.warped, self.mask, generated)],
                         dim=1)


@torch.no_grad()
def conditioning(pairs: Pairs, encoder: SemanticEncoder) -> Conditioning:
    source = torch.from_numpy(pairs.source)
    features = torch.cat([encoder.features(chunk) for chunk in source.split(256)])
    warped, mask = warp_features(features, torch.from_numpy(pairs.warp))
    return Conditioning(source * 2 - 1, torch.from_numpy(pairs.rays), warped, mask)


def cond_channels(encoder_width: int) -> int:
    return 3 + 6 + encoder_width + 1


def train_denoiser(model: Denoiser, encoder: SemanticEncoder, schedule: Schedule, pairs: Pairs, variant: Variant,
                   settings: TrainSettings, seed: int) -> list[float]:
    """AdamW on the x̂₀ MSE with a one-cycle schedule; returns the mean loss of every 100 steps."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    cond = conditioning(pairs, encoder)
    target = torch.from_numpy(pairs.target) * 2 - 1
    with torch.no_grad():
        truth_features = torch.cat([encoder.features(chunk) for chunk in torch.from_numpy(pairs.target).split(256)])
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=1e-4)
    cycle = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=settings.lr, total_steps=settings.steps,
                                                pct_start=0.1)
    losses: list[float] = []
    window: list[float] = []
    model.train()
    for step in range(settings.steps):
        index = torch.randint(len(target), (settings.batch_size,), generator=generator)
        x0, c = target[index], cond.take(index)
        t = torch.randint(schedule.steps, (settings.batch_size,), generator=generator)
        eps = torch.randn(x0.shape, generator=generator)
        x_t = schedule.noise(x0, t, eps)
        generated = None
        if variant == "alternating":
            generated = _training_hole_features(model, encoder, x_t, t, c, truth_features[index],
                                                generator)
        loss = F.mse_loss(model(x_t, t, c.tensor(variant, generated)), x0)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        cycle.step()
        window.append(float(loss.detach()))
        if (step + 1) % 100 == 0 or step + 1 == settings.steps:
            losses.append(float(np.mean(window)))
            window = []
    model.eval()
    return losses


@torch.no_grad()
def _training_hole_features(model: Denoiser, encoder: SemanticEncoder, x_t: torch.Tensor, t: torch.Tensor,
                            c: Conditioning, truth: torch.Tensor,
                            generator: torch.Generator) -> torch.Tensor:
    """Per example: zeros (a third), Φ(x̂₀) of the model's own prediction (a third; the extra no-gradient forward
    runs on those examples only), Φ(ground truth) (a third)."""
    choice = torch.randint(3, (len(t),), generator=generator)
    features = torch.where(choice.view(-1, 1, 1, 1) == 2, truth, torch.zeros_like(truth))
    own = torch.nonzero(choice == 1).flatten()
    if len(own):
        was_training = model.training
        model.eval()
        x0_hat = model(x_t[own], t[own], c.take(own).tensor("warped", None)).clamp(-1.0, 1.0)
        model.train(was_training)
        features[own] = encoder.features(to_unit(x0_hat))
    return features


@torch.no_grad()
def sample(model: Denoiser, encoder: SemanticEncoder, schedule: Schedule, cond: Conditioning, variant: Variant,
           sample_steps: int, seed: int) -> torch.Tensor:
    """DDIM (η = 0) from pure noise; returns (N, 3, S, S) images in [0, 1]."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(cond.source.shape, generator=generator)
    times = schedule.ddim_times(sample_steps)
    generated: torch.Tensor | None = None
    x0_hat = x
    for i, t_now in enumerate(times):
        t = torch.full((len(x),), t_now, dtype=torch.long)
        x0_hat = model(x, t, cond.tensor(variant, generated)).clamp(-1.0, 1.0)
        if variant == "alternating":
            generated = encoder.features(to_unit(x0_hat))  # understanding step: Φ on the current prediction
        if i + 1 < len(times):
            a_next = schedule.alpha_bar[times[i + 1]]
            a_now = schedule.alpha_bar[t_now]
            eps = (x - a_now.sqrt() * x0_hat) / (1 - a_now).sqrt()
            x = a_next.sqrt() * x0_hat + (1 - a_next).sqrt() * eps
    return to_unit(x0_hat)


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Fréchet distance between Gaussians fitted to the rows of `a` and of `b` (covariances + 1e-6·I, as FID
    implementations do when a covariance is singular: dead ReLU channels make it so)."""
    mu_a, mu_b = a.mean(axis=0), b.mean(axis=0)
    ridge = 1e-6 * np.eye(a.shape[1])
    cov_a, cov_b = np.cov(a, rowvar=False) + ridge, np.cov(b, rowvar=False) + ridge
    root = np.real(linalg.sqrtm(cov_a @ cov_b))
    return float(((mu_a - mu_b) ** 2).sum() + np.trace(cov_a + cov_b - 2 * root))


@torch.no_grad()
def evaluate(generated: torch.Tensor, pairs: Pairs, encoder: SemanticEncoder) -> dict[str, float]:
    """FD-local, hole and overall category accuracy of Φ(generated), and PSNR, on one set of pairs."""
    truth = torch.from_numpy(pairs.target)
    fd = frechet_distance(encoder.pooled(generated).double().numpy(), encoder.pooled(truth).double().numpy())
    predicted = encoder(generated).argmax(dim=1).numpy()
    correct = predicted == pairs.target_category
    hole = pairs.hole
    mse = ((generated - truth) ** 2).mean(dim=(1, 2, 3)).clamp_min(1e-10)
    return {
        "fd": fd,
        "hole_accuracy": float(correct[hole].mean()) if hole.any() else float("nan"),
        "accuracy": float(correct.mean()),
        "psnr": float((-10 * torch.log10(mse)).mean()),
        "hole_fraction": float(hole.mean()),
    }
