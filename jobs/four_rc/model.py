"""Encode once, query anywhere and anytime: the 4RC-style model and its loss [rec].

`FourRC.encode(video)` runs a transformer over the patch tokens of all frames (patch position + Fourier frame-time
embeddings) once and returns the spatio-temporal latent F (with the keys and values the query layers read from
it). `FourRC.query(encoding, i, τ)` decodes the 3D position at time τ of every pixel of frame i: the query tokens
are frame i's latent tokens plus an embedding of (τ − t_i, τ); query layers self-attend among them and
cross-attend to all of F; a linear head un-patchifies to pixels.

- `factorised` (4RC): P_i^{t_i→τ} = P_i^{t_i} + ΔP_i^{t_i→τ}. The base P_i^{t_i} comes from frame i's latent
  tokens alone (τ-independent); the motion is ΔP = ((τ − t_i) / T) · g(decoder output), exactly 0 at τ = t_i;
- `direct`: the decoder output regresses P^{τ} in one head (the same trunk and size, one linear head fewer).

`epe_loss`: the mean Euclidean 3D error; the factorised model is supervised on both P_i^{t_i} and P_i + ΔP
(as the notes' DUSt3R-style loss, without its confidence weighting and scale normalisation: the generated scenes
are metric and the camera is static, so there is no scale to normalise).

How this differs from the paper: no alternating frame/global attention, DPT head, camera or depth heads, or
confidence; a static camera; τ enters through Fourier features, as in the notes' reconstruction.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from raygent.jobs.four_rc.scenes import CHANNELS, DEPTH_OFFSET

Variant = Literal["factorised", "direct"]


def fourier(t: torch.Tensor, bands: int) -> torch.Tensor:
    """(..., 2 · bands) sin/cos features of a (...) tensor of times, frequencies 2^k / 8, k < bands."""
    freqs = (2.0 ** torch.arange(bands, dtype=torch.float32)) * (math.pi / 8.0)
    angles = t[..., None] * freqs
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)


class QueryLayer(nn.Module):
    """Pre-norm decoder layer: self-attention among the query tokens, cross-attention to the latent, MLP. The
    latent's keys and values are computed once per encoding (`memory`), so a query never re-projects F."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm_self = nn.LayerNorm(width)
        self.self_attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm_cross = nn.LayerNorm(width)
        self.norm_memory = nn.LayerNorm(width)
        self.q = nn.Linear(width, width)
        self.kv = nn.Linear(width, 2 * width)
        self.o = nn.Linear(width, width)
        self.norm_mlp = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        return x.reshape(b, n, self.heads, d // self.heads).transpose(1, 2)

    def memory(self, latent: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-head keys and values of the latent (B, heads, L, d / heads) each."""
        keys, values = self.kv(self.norm_memory(latent)).chunk(2, dim=-1)
        return self._split(keys), self._split(values)

    def forward(self, x: torch.Tensor, memory: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        h = self.norm_self(x)
        x = x + self.self_attn(h, h, h, need_weights=False)[0]
        attended = F.scaled_dot_product_attention(self._split(self.q(self.norm_cross(x))), *memory)
        x = x + self.o(attended.transpose(1, 2).reshape(x.shape))
        return x + self.mlp(self.norm_mlp(x))


class Encoding:
    """The result of encoding a video once: the latent F and every query layer's keys and values of F."""

    def __init__(self, latent: torch.Tensor, memories: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        self.latent = latent
        self.memories = memories

    def repeat(self, times: int) -> Encoding:
        """Each clip's encoding `times` times in a row (for several queries per clip in one batch)."""
        return Encoding(self.latent.repeat_interleave(times, dim=0),
                        [(k.repeat_interleave(times, dim=0), v.repeat_interleave(times, dim=0))
                         for k, v in self.memories])


class FourRC(nn.Module):
    def __init__(self, variant: Variant, frames: int, size: int, patch: int, width: int, encoder_layers: int,
                 decoder_layers: int, heads: int = 4, bands: int = 6) -> None:
        super().__init__()
        if size % patch:
            raise ValueError(f"image size {size} is not a multiple of the patch size {patch}")
        self.variant = variant
        self.frames, self.size, self.patch, self.bands = frames, size, patch, bands
        self.tokens_per_frame = (size // patch) ** 2
        self.embed = nn.Linear(CHANNELS * patch * patch, width)
        self.position = nn.Parameter(torch.randn(self.tokens_per_frame, width) * 0.02)
        self.frame_time = nn.Linear(2 * bands, width)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.0, batch_first=True, norm_first=True),
            encoder_layers,
        )
        self.query_time = nn.Sequential(nn.Linear(4 * bands, width), nn.GELU(), nn.Linear(width, width))
        self.decoder = nn.ModuleList(QueryLayer(width, heads) for _ in range(decoder_layers))
        self.point_head = nn.Linear(width, 3 * patch * patch)
        self.base_head = nn.Linear(width, 3 * patch * patch) if variant == "factorised" else None

    def encode(self, video: torch.Tensor) -> Encoding:
        """video (B, T, 6, H, W) (RGB + unprojected depth) → latent F (B, T · tokens_per_frame, width), with the
        keys and values every query layer attends to."""
        b, t, c, h, w = video.shape
        p = self.patch
        patches = video.reshape(b, t, c, h // p, p, w // p, p).permute(0, 1, 3, 5, 2, 4, 6)
        tokens = self.embed(patches.reshape(b, t, self.tokens_per_frame, c * p * p)) + self.position
        times = fourier(torch.arange(t, dtype=torch.float32), self.bands)
        tokens = tokens + self.frame_time(times)[None, :, None]
        latent = self.encoder(tokens.reshape(b, t * self.tokens_per_frame, -1))
        return Encoding(latent, [layer.memory(latent) for layer in self.query_layers()])

    def query_layers(self) -> list[QueryLayer]:
        return [layer for layer in self.decoder if isinstance(layer, QueryLayer)]

    def _unpatch(self, values: torch.Tensor) -> torch.Tensor:
        """(B, tokens, 3 p²) → (B, H, W, 3)."""
        b = values.shape[0]
        p, g = self.patch, self.size // self.patch
        return values.reshape(b, g, g, 3, p, p).permute(0, 1, 4, 2, 5, 3).reshape(b, self.size, self.size, 3)

    def query(self, encoding: Encoding, frame: torch.Tensor, tau: torch.Tensor) -> tuple[torch.Tensor,
                                                                                          torch.Tensor | None]:
        """(P_i^{t_i→τ} (B, H, W, 3), base P_i^{t_i} or None) for per-clip frame index i (B,) and time τ (B,)."""
        latent = encoding.latent
        n = self.tokens_per_frame
        index = frame[:, None] * n + torch.arange(n)[None]
        own = torch.gather(latent, 1, index[..., None].expand(-1, -1, latent.shape[-1]))
        offset = tau - frame.float()
        time = self.query_time(torch.cat([fourier(offset, self.bands), fourier(tau, self.bands)], dim=-1))
        decoded = own + time[:, None]
        for layer, memory in zip(self.query_layers(), encoding.memories, strict=True):
            decoded = layer(decoded, memory)
        shift = torch.tensor([0.0, 0.0, DEPTH_OFFSET])
        if self.base_head is None:
            return self._unpatch(self.point_head(decoded)) + shift, None
        base = self._unpatch(self.base_head(own)) + shift
        motion = self._unpatch(self.point_head(decoded)) * (offset / self.frames)[:, None, None, None]
        return base + motion, base

    def forward(self, video: torch.Tensor, frame: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
        return self.query(self.encode(video), frame, tau)[0]


def epe(predicted: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean Euclidean distance over the last axis."""
    return torch.linalg.vector_norm(predicted - target, dim=-1).mean()


def epe_loss(points: torch.Tensor, base: torch.Tensor | None, target: torch.Tensor,
             base_target: torch.Tensor) -> torch.Tensor:
    """EPE of P^{τ}; the factorised model adds the EPE of its base P_i^{t_i}."""
    loss = epe(points, target)
    return loss if base is None else loss + epe(base, base_target)
