"""Conditional DDPM over a scalar score y given a design x, with a differentiable DDIM sampler.

Architecture as in the official code: an x-encoder (Linear-SiLU-Linear-SiLU), a linear map of y_t and a
sinusoidal time embedding (two linear layers), joined and passed through a 3-layer MLP that predicts ε.
Two exact reparametrisations make sampling cheaper without changing the function class:

- the official "concatenate [x_h, Linear(y_t), t_emb] then Linear" is written as a sum of three linear
  maps (a linear layer on a concatenation is the sum of linear layers on its parts, and Linear(y_t)
  followed by a linear block is one linear map of y_t);
- the x-encoding and the time embedding are computed once per sampling call / per step rather than
  once per (sample, step, row), since they do not depend on y_t.

Training loss L_diff = ‖ε̂ − ε‖² with t uniform over the T steps and t fed as (t + ½)/T. The DDIM sampler
walks `ddim_steps` evenly spaced timesteps from T−1 down to 0 starting from y_T ~ N(0, 1) (η = 0 by
default) and returns the final ŷ_0 prediction; gradients flow through every step unless the caller
wraps it in `torch.no_grad()`.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class TimeEmbedding(nn.Module):
    """Sinusoidal features of a continuous t ∈ (0, 1) followed by Linear-SiLU-Linear: (B,) → (B, dim)."""

    freqs: torch.Tensor  # buffer (dim // 2,)

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim
        self.lin1 = nn.Linear(dim, dim)
        self.lin2 = nn.Linear(dim, dim)
        self.register_buffer("freqs", torch.exp(torch.linspace(0.0, math.log(10000.0), dim // 2)))

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        args = t.reshape(-1, 1) * self.freqs
        features = torch.cat([torch.sin(args), torch.cos(args)], dim=-1)
        return self.lin2(F.silu(self.lin1(features)))


class EpsNet(nn.Module):
    """ε̂(y_t, t, x): predicts the noise in the noised score y_t of design x at time t."""

    def __init__(self, x_dim: int, hidden: int, t_dim: int) -> None:
        super().__init__()
        self.x_enc = nn.Sequential(nn.Linear(x_dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU())
        self.x_in = nn.Linear(hidden, hidden)
        self.y_in = nn.Linear(1, hidden, bias=False)
        self.t_embed = TimeEmbedding(t_dim)
        self.t_in = nn.Linear(t_dim, hidden, bias=False)
        self.trunk = nn.Sequential(nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def encode_x(self, x: torch.Tensor) -> torch.Tensor:
        """(B, x_dim) → (B, hidden): the x-dependent part of the first trunk layer's input."""
        return self.x_in(self.x_enc(x))

    def encode_t(self, t: torch.Tensor) -> torch.Tensor:
        """(B,) or (1,) continuous times → (B or 1, hidden)."""
        return self.t_in(self.t_embed(t))

    def from_codes(self, y_t: torch.Tensor, t_code: torch.Tensor, x_code: torch.Tensor) -> torch.Tensor:
        """ε̂ from the cached codes: y_t (B, 1), t_code (B or 1, hidden), x_code (B, hidden) → (B, 1)."""
        return self.trunk(torch.addmm(x_code + t_code, y_t, self.y_in.weight.T))

    def forward(self, y_t: torch.Tensor, t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self.from_codes(y_t, self.encode_t(t), self.encode_x(x))


class ConditionalDiffusion(nn.Module):
    """DDPM with a linear β schedule over a z-scored scalar y, conditioned on a z-scored design x."""

    alpha_bars: torch.Tensor  # buffer (steps,): cumulative products of 1 − β

    def __init__(self, x_dim: int, *, hidden: int, t_dim: int, steps: int, beta_start: float, beta_end: float) -> None:
        super().__init__()
        self.steps = steps
        self.eps_net = EpsNet(x_dim, hidden, t_dim)
        betas = torch.linspace(beta_start, beta_end, steps, dtype=torch.float64)
        alpha_bars = torch.cumprod(1.0 - betas, dim=0)
        self.register_buffer("alpha_bars", alpha_bars.float())

    def time_input(self, t_index: torch.Tensor) -> torch.Tensor:
        return (t_index.float() + 0.5) / self.steps

    def diffusion_loss(
        self, x: torch.Tensor, y: torch.Tensor, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """L_diff: x (B, D), y (B, 1) → scalar mean of (ε̂ − ε)²."""
        t_index = torch.randint(0, self.steps, (x.shape[0],), generator=generator)
        noise = torch.randn(y.shape, generator=generator)
        alpha_bar = self.alpha_bars[t_index].unsqueeze(1)
        y_t = alpha_bar.sqrt() * y + (1.0 - alpha_bar).sqrt() * noise
        return F.mse_loss(self.eps_net(y_t, self.time_input(t_index), x), noise)

    def ddim_sample(
        self,
        x: torch.Tensor,
        n_samples: int,
        ddim_steps: int,
        *,
        eta: float = 0.0,
        noise: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Draw ŷ_0 samples: x (B, D) → (n_samples, B).

        `noise` (n_samples, B) fixes the starting y_T (common random numbers across designs); otherwise it
        is drawn from `generator`. Differentiable with respect to the network's parameters and to x.
        """
        batch = x.shape[0]
        if noise is None:
            noise = torch.randn((n_samples, batch), generator=generator)
        schedule = torch.linspace(self.steps - 1, 0, max(ddim_steps, 1)).long()
        alpha_bars = self.alpha_bars[schedule].tolist()
        t_codes = self.eps_net.encode_t(self.time_input(schedule))
        x_code = self.eps_net.encode_x(x).repeat(n_samples, 1)
        y_t = noise.reshape(n_samples * batch, 1)
        y0 = y_t
        for i, alpha_bar in enumerate(alpha_bars):
            eps = self.eps_net.from_codes(y_t, t_codes[i : i + 1], x_code)
            y0 = (y_t - math.sqrt(1.0 - alpha_bar) * eps) / (math.sqrt(alpha_bar) + 1e-8)
            if i + 1 == len(alpha_bars):
                break
            prev = alpha_bars[i + 1]
            sigma = eta * math.sqrt((1 - prev) / (1 - alpha_bar) * (1 - alpha_bar / prev))
            y_t = math.sqrt(prev) * y0 + math.sqrt(max(1.0 - prev - sigma**2, 0.0)) * eps
            if sigma > 0:
                y_t = y_t + sigma * torch.randn(y_t.shape, generator=generator)
        return y0.reshape(n_samples, batch)


def sample_moments(samples: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """μ̂ and σ̂ (population std) over the sample axis: (S, B) → (B,), (B,)."""
    return samples.mean(dim=0), samples.std(dim=0, unbiased=False)
