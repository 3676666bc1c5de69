"""The semantic encoder Φ, the camera-conditioned denoiser, and the conditioning of the three variants.

- `SemanticEncoder` (Φ) is the laptop-scale stand-in for DINO/DINOv2: a small conv net trained on the renders to
  predict each pixel's category, then frozen. Its penultimate per-pixel feature map is "the semantic features";
  their 2 × 2-pooled form is the feature space of FD-local (the FID stand-in). At paper scale a frozen DINOv2
  from a local path would take its place behind the same two methods (`features`, `pooled`).
- `Denoiser` is a small U-Net (three resolutions, residual blocks, sinusoidal time embedding) predicting the clean
  view x̂₀ in pixel space. Its input is x_t and the conditioning c = [source view; Plücker rays of the target in the
  source frame; semantic feature channels; validity mask M].
- `variant` decides the semantic channels: `none` leaves them zero; `warped` holds Φ(source) forward-warped to the
  target (zero in the holes, M = warp validity); `alternating` fills the holes with Φ(x̂₀) of the current
  prediction: M ⊙ F_warp + (1 − M) ⊙ F_gen, refreshed at every denoising step (SemanticNVS's alternation of
  understanding and generation).
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import nn
from torch.nn import functional as F

Variant = Literal["none", "warped", "alternating"]
VARIANTS: tuple[Variant, ...] = ("none", "warped", "alternating")
RAY_CHANNELS = 6


class SemanticEncoder(nn.Module):
    """Φ: RGB in [0, 1] → per-pixel features (`width` channels) → category logits."""

    mean: torch.Tensor
    scale: torch.Tensor

    def __init__(self, classes: int, width: int = 16) -> None:
        super().__init__()
        self.width = width
        self.body = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
        )
        self.head = nn.Conv2d(width, classes, 1)
        self.register_buffer("mean", torch.zeros(width, 1, 1))
        self.register_buffer("scale", torch.ones(width, 1, 1))

    def features(self, rgb: torch.Tensor) -> torch.Tensor:
        """(B, width, S, S) standardised penultimate features."""
        return (self.body(rgb) - self.mean) / self.scale

    def forward(self, rgb: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(rgb))

    def pooled(self, rgb: torch.Tensor) -> torch.Tensor:
        """(B, 4·width) features averaged over the four image quadrants: the FD-local feature space."""
        return F.adaptive_avg_pool2d(self.features(rgb), 2).flatten(1)

    @torch.no_grad()
    def standardise(self, rgb: torch.Tensor) -> None:
        """Set the per-channel mean and scale of `features` from a sample of images."""
        body = self.body(rgb)
        self.mean.copy_(body.mean(dim=(0, 2, 3)).view(-1, 1, 1))
        self.scale.copy_(body.std(dim=(0, 2, 3)).clamp_min(1e-3).view(-1, 1, 1))


def warp_features(features: torch.Tensor, warp: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward-warp (B, C, S, S) source features with the (B, S·S) index map; returns (warped, mask (B, 1, S, S))."""
    b, c, h, w = features.shape
    valid = warp >= 0
    gathered = torch.gather(features.flatten(2), 2, warp.clamp_min(0).unsqueeze(1).expand(b, c, h * w))
    mask = valid.view(b, 1, h, w).to(features.dtype)
    return gathered.view(b, c, h, w) * mask, mask


def semantic_channels(variant: Variant, warped: torch.Tensor, mask: torch.Tensor,
                      generated: torch.Tensor | None) -> torch.Tensor:
    """The semantic conditioning channels (features then mask) of `variant`; `generated` is Φ(x̂₀) or None."""
    if variant == "none":
        return torch.zeros_like(torch.cat([warped, mask], dim=1))
    if variant == "warped" or generated is None:
        return torch.cat([warped, mask], dim=1)
    return torch.cat([mask * warped + (1.0 - mask) * generated, mask], dim=1)


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    angles = t.float()[:, None] * freqs[None]
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)


class ResBlock(nn.Module):
    def __init__(self, channels_in: int, channels_out: int, time_dim: int) -> None:
        super().__init__()
        self.norm1 = nn.GroupNorm(8, channels_in)
        self.conv1 = nn.Conv2d(channels_in, channels_out, 3, padding=1)
        self.time = nn.Linear(time_dim, channels_out)
        self.norm2 = nn.GroupNorm(8, channels_out)
        self.conv2 = nn.Conv2d(channels_out, channels_out, 3, padding=1)
        self.skip = nn.Conv2d(channels_in, channels_out, 1) if channels_in != channels_out else nn.Identity()

    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.time(emb)[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + self.skip(x)


class Denoiser(nn.Module):
    """x̂₀-prediction U-Net over [x_t; c]: `width` channels at S × S, 2·`width` at S/2 and S/4."""

    def __init__(self, cond_channels: int, width: int = 32) -> None:
        super().__init__()
        time_dim = 4 * width
        self.width = width
        self.time = nn.Sequential(nn.Linear(width, time_dim), nn.SiLU(), nn.Linear(time_dim, time_dim))
        self.stem = nn.Conv2d(3 + cond_channels, width, 3, padding=1)
        self.down1 = ResBlock(width, width, time_dim)
        self.pool1 = nn.Conv2d(width, width, 3, stride=2, padding=1)
        self.down2 = ResBlock(width, 2 * width, time_dim)
        self.pool2 = nn.Conv2d(2 * width, 2 * width, 3, stride=2, padding=1)
        self.mid = ResBlock(2 * width, 2 * width, time_dim)
        self.up2 = ResBlock(4 * width, 2 * width, time_dim)
        self.up1 = ResBlock(3 * width, width, time_dim)
        self.out = nn.Sequential(nn.GroupNorm(8, width), nn.SiLU(), nn.Conv2d(width, 3, 3, padding=1))

    def forward(self, x: torch.Tensor, t: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        emb = self.time(timestep_embedding(t, self.width))
        h0 = self.down1(self.stem(torch.cat([x, cond], dim=1)), emb)
        h1 = self.down2(self.pool1(h0), emb)
        h = self.mid(self.pool2(h1), emb)
        h = self.up2(torch.cat([F.interpolate(h, scale_factor=2.0), h1], dim=1), emb)
        h = self.up1(torch.cat([F.interpolate(h, scale_factor=2.0), h0], dim=1), emb)
        return self.out(h)


class Schedule:
    """Cosine ᾱ_t over `steps` discrete times (Nichol & Dhariwal), DDIM (η = 0) sampling on a sub-sequence."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        s = 0.008
        x = torch.linspace(0, steps, steps + 1, dtype=torch.float64)
        f = torch.cos((x / steps + s) / (1 + s) * math.pi / 2) ** 2
        alpha_bar = (f / f[0]).clamp(1e-5, 1.0)
        self.alpha_bar = alpha_bar[1:].float()  # ᾱ at t = 1..steps, index t − 1

    def noise(self, x0: torch.Tensor, t: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        a = self.alpha_bar[t].view(-1, 1, 1, 1)
        return a.sqrt() * x0 + (1 - a).sqrt() * eps

    def ddim_times(self, sample_steps: int) -> list[int]:
        """Descending time indices from steps − 1 to 0."""
        times = torch.linspace(self.steps - 1, 0, sample_steps).round().long().tolist()
        return sorted(set(times), reverse=True)


def to_unit(x: torch.Tensor) -> torch.Tensor:
    """Diffusion space [−1, 1] → image space [0, 1]."""
    return (x + 1.0) / 2.0
