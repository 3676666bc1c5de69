"""The PRISM noise-synthesis network and its losses [rec].

`NoiseUNet` is a small U-Net over the simulator's clean depth, RGB and view cosine. Heads:

- `dual` (PRISM's disentangled design): an invalidation head (one logit per pixel: "the sensor returns no
  depth") and an inaccuracy head (mean and log-scale of a Gaussian over the depth error Δz of valid pixels);
- `single` (the baseline): one head regressing the sensor's depth directly (0 where invalid); its invalid mask is
  read off the prediction (below half the clean depth).

Losses are pure functions of tensors:

- `positive_weight`: w₊ = (#neg / #pos)^γ of one batch (γ = 0: plain BCE);
- `hierarchical_mask_loss`: positive-weighted BCE at `levels` pyramid scales; at scale s the prediction and the
  ground truth are max-pooled by 2^s (a region is invalid if any pixel in it is), so coarse scales supervise
  region-level invalidation (dark, transparent, out of range) and the finest one edges and shadows;
- `gaussian_nll`: the inaccuracy head's negative log-likelihood on pixels the sensor returned;
- `single_head_loss`: L1 to the sensor's depth, invalid targets weighted by w₊ like the mask loss.

How this differs from the paper (not found; §9 of the notes reconstructs it from the brief and related work):
the paper's frozen 3D-foundation encoder is replaced by a U-Net trained from scratch on the generated scenes;
the inaccuracy head is a per-pixel Gaussian (the notes allow Gaussian/Laplace or binned); and w₊ is computed per
batch and per pyramid level rather than from a dataset-wide count.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from raygent.jobs.prism.scenes import Z_MAX

Heads = Literal["dual", "single"]
DZ_SCALE = 0.1  # metres: the inaccuracy head predicts Δz / DZ_SCALE


def _block(channels_in: int, channels_out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(channels_in, channels_out, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(channels_out, channels_out, 3, padding=1),
        nn.ReLU(),
    )


class NoiseUNet(nn.Module):
    """Three-scale U-Net; `forward` returns (N, 3, H, W) = (logit, μ, log σ) for `dual`, (N, 1, H, W) for `single`."""

    def __init__(self, in_channels: int, width: int, heads: Heads) -> None:
        super().__init__()
        self.heads = heads
        self.enc1 = _block(in_channels, width)
        self.enc2 = _block(width, 2 * width)
        self.mid = _block(2 * width, 4 * width)
        self.dec2 = _block(4 * width + 2 * width, 2 * width)
        self.dec1 = _block(2 * width + width, width)
        self.out = nn.Conv2d(width, 3 if heads == "dual" else 1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([F.interpolate(m, scale_factor=2.0), e2], dim=1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, scale_factor=2.0), e1], dim=1))
        return self.out(d1)


def positive_weight(invalid: torch.Tensor, gamma: float) -> torch.Tensor:
    """w₊ = (#neg / #pos)^γ over the batch (1 when γ = 0 or the batch has no positive)."""
    positives = invalid.sum()
    negatives = invalid.numel() - positives
    if gamma == 0.0 or positives == 0:
        return torch.ones((), dtype=torch.float32)
    return (negatives.float() / positives.float()).clamp(min=1e-6) ** gamma


def weighted_bce(prob: torch.Tensor, target: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Mean of −w₊ t log p − (1 − t) log(1 − p)."""
    prob = prob.clamp(1e-6, 1 - 1e-6)
    return -(weight * target * torch.log(prob) + (1 - target) * torch.log(1 - prob)).mean()


def hierarchical_mask_loss(logit: torch.Tensor, invalid: torch.Tensor, gamma: float, levels: int) -> torch.Tensor:
    """Positive-weighted BCE averaged over `levels` max-pooled pyramid scales. logit, invalid: (N, H, W)."""
    if levels < 1:
        raise ValueError(f"levels must be >= 1, got {levels}")
    target = invalid.float()
    weight = positive_weight(invalid, gamma)
    loss = F.binary_cross_entropy_with_logits(logit, target, pos_weight=weight)
    prob = torch.sigmoid(logit)[:, None]
    for level in range(1, levels):
        pooled_target = F.max_pool2d(target[:, None], 2**level)
        pooled_prob = F.max_pool2d(prob, 2**level)
        loss = loss + weighted_bce(pooled_prob, pooled_target, positive_weight(pooled_target > 0.5, gamma))
    return loss / levels


def gaussian_nll(mean: torch.Tensor, log_scale: torch.Tensor, target: torch.Tensor,
                 valid: torch.Tensor) -> torch.Tensor:
    """Gaussian negative log-likelihood (without the constant) of `target` on `valid` pixels."""
    nll = log_scale + 0.5 * ((target - mean) * torch.exp(-log_scale)) ** 2
    return (nll * valid).sum() / valid.sum().clamp(min=1)


def single_head_loss(pred: torch.Tensor, real: torch.Tensor, invalid: torch.Tensor, gamma: float) -> torch.Tensor:
    """L1 to the sensor's depth (both / Z_MAX, 0 where invalid), invalid targets weighted by w₊."""
    weight = torch.where(invalid, positive_weight(invalid, gamma), torch.ones(()))
    return (weight * (pred - real).abs()).mean()


def noise_loss(output: torch.Tensor, real: torch.Tensor, clean: torch.Tensor, invalid: torch.Tensor, heads: Heads,
               gamma: float, levels: int) -> torch.Tensor:
    """The training loss of one batch. output from `NoiseUNet`; real, clean: depth / Z_MAX; invalid: bool."""
    if heads == "single":
        return single_head_loss(output[:, 0], real, invalid, gamma)
    mask = hierarchical_mask_loss(output[:, 0], invalid, gamma, levels)
    dz = (real - clean) * Z_MAX / DZ_SCALE
    return mask + gaussian_nll(output[:, 1], output[:, 2].clamp(-6.0, 3.0), dz, (~invalid).float())
