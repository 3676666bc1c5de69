"""HySCAN's noisy combined attention: the stochastic element that stays on at inference.

Three stacked spatial attentions (1×1 conv + sigmoid) and three SE channel attentions (reduction 8), as in the
notebook's `TrainableCombinedAttentionLayer`. Their products P_s (B, 1, H, W) and P_c (B, C, 1, 1) get Gaussian noise
of std `noise_std` scaled by a trainable weight (init 1), are clipped to [0, 1], and the layer returns x ⊙ P_s ⊙ P_c;
the network adds it residually (a + att(a)).

[rec] The notebook adds the noise to the attended *features* (x ⊙ s), scales it by (w + noise·w) and cubes the
combined product; we follow the method notes (noise on the maps, one product), which keeps the map in [0, 1].
Noise is on in eval too (the notebook hard-codes `training=True`); `set_stochastic(model, False)` removes it.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class NoisyAttention(nn.Module):
    """x ↦ x ⊙ clip(P_s + w_s·std·ε, 0, 1) ⊙ clip(P_c + w_c·std·ε', 0, 1); x: (B, C, H, W)."""

    def __init__(self, channels: int, noise_std: float, depth: int = 3, reduction: int = 8):
        super().__init__()
        hidden = max(1, channels // reduction)
        self.spatial = nn.ModuleList([nn.Conv2d(channels, 1, 1) for _ in range(depth)])
        self.channel = nn.ModuleList(
            [nn.Sequential(nn.Linear(channels, hidden), nn.ReLU(), nn.Linear(hidden, channels)) for _ in range(depth)]
        )
        self.noise_weight_spatial = nn.Parameter(torch.ones(()))
        self.noise_weight_channel = nn.Parameter(torch.ones(()))
        self.noise_std = noise_std
        self.stochastic = True

    def maps(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """Noise-free maps: spatial (B, 1, H, W) and channel (B, C, 1, 1), entries in [0, 1]. Each stacked
        attention sees the previous one's output, as in the notebook."""
        spatial_in, channel_in = x, x
        p_s = torch.ones_like(x[:, :1])
        p_c = torch.ones_like(x[:, :, :1, :1])
        for conv, squeeze in zip(self.spatial, self.channel, strict=True):
            s = torch.sigmoid(conv(spatial_in))
            c = torch.sigmoid(squeeze(channel_in.mean(dim=(2, 3))))[:, :, None, None]
            spatial_in, channel_in = spatial_in * s, channel_in * c
            p_s, p_c = p_s * s, p_c * c
        return p_s, p_c

    def forward(self, x: Tensor) -> Tensor:
        p_s, p_c = self.maps(x)
        if self.stochastic and self.noise_std > 0:
            p_s = (p_s + self.noise_weight_spatial * self.noise_std * torch.randn_like(p_s)).clamp(0.0, 1.0)
            p_c = (p_c + self.noise_weight_channel * self.noise_std * torch.randn_like(p_c)).clamp(0.0, 1.0)
        return x * p_s * p_c
