"""Continuous normalizing flow trained by conditional flow matching, with our own fixed-step RK4 solver.

Written from the method notes (step 5; docs/studies.md) instead of torchcfm/torchdiffeq:

- path z_t = (1 - t) z0 + t z1 with z0 ~ N(0, I), z1 ~ data; loss |v_theta(z_t, t) - (z1 - z0)|^2 (`cfm_loss`);
- samples: integrate dz/dt = v from t = 0 to 1 (`rk4`);
- log-density: integrate backwards from t = 1 with the instantaneous change of variables
  d log p(z_t)/dt = -tr(dv/dz), using the exact trace (small dims) or Hutchinson's estimator;
- entropy estimate H = -E log p over the flow's own samples.

Data are standardised per dimension before training; `Flow` undoes it (and its log-Jacobian). An optional
conditioning input makes the same field a conditional flow p(z | c) (used by the direct max-entropy variant).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

import numpy as np
import torch
from torch import nn

Trace = Literal["exact", "hutchinson"]


class VectorField(nn.Module):
    """MLP v_theta(z, t[, c]): inputs (B, dim), (B,) or scalar, optional (B, cond_dim); output (B, dim)."""

    def __init__(self, dim: int, cond_dim: int = 0, hidden: int = 64, layers: int = 3) -> None:
        super().__init__()
        self.dim, self.cond_dim = dim, cond_dim
        sizes = [dim + cond_dim + 3] + [hidden] * layers
        blocks: list[nn.Module] = []
        for a, b in itertools.pairwise(sizes):
            blocks += [nn.Linear(a, b), nn.SiLU()]
        blocks.append(nn.Linear(sizes[-1], dim))
        self.net = nn.Sequential(*blocks)

    def forward(self, z: torch.Tensor, t: torch.Tensor | float, cond: torch.Tensor | None = None) -> torch.Tensor:
        t = torch.as_tensor(t, dtype=z.dtype).expand(z.shape[0]).unsqueeze(-1)
        parts = [z, t, torch.sin(math.pi * t), torch.cos(math.pi * t)]
        if cond is not None:
            parts.append(cond)
        return self.net(torch.cat(parts, dim=-1))


def cfm_loss(
    field: VectorField, z1: torch.Tensor, z0: torch.Tensor, t: torch.Tensor, cond: torch.Tensor | None = None
) -> torch.Tensor:
    """Conditional flow-matching loss: z1, z0 (B, d), t (B,) -> mean_B |v(z_t, t) - (z1 - z0)|^2 (scalar)."""
    zt = (1 - t)[:, None] * z0 + t[:, None] * z1
    return ((field(zt, t, cond) - (z1 - z0)) ** 2).sum(dim=-1).mean()


# A tensor or an augmented state (a tuple of tensors); rk4 returns the kind it was given.
State = TypeVar("State", torch.Tensor, tuple[torch.Tensor, ...])


def rk4(f: Callable[[float, State], State], y0: State, t0: float, t1: float, steps: int) -> State:
    """Classic fixed-step RK4 for dy/dt = f(t, y) from t0 to t1 (t1 < t0 integrates backwards).

    `y` is a tensor or a tuple of tensors (an augmented state such as (z, log-det)).
    """

    def axpy(y: State, h: float, k: State) -> State:
        if isinstance(y, tuple):
            return tuple(a + h * b for a, b in zip(y, k, strict=True))
        return y + h * k

    h = (t1 - t0) / steps
    y = y0
    for i in range(steps):
        t = t0 + i * h
        k1 = f(t, y)
        k2 = f(t + h / 2, axpy(y, h / 2, k1))
        k3 = f(t + h / 2, axpy(y, h / 2, k2))
        k4 = f(t + h, axpy(y, h, k3))
        if isinstance(y, tuple):
            y = tuple(a + h / 6 * (b + 2 * c + 2 * d + e) for a, b, c, d, e in zip(y, k1, k2, k3, k4, strict=True))
        else:
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def divergence(
    field: VectorField,
    z: torch.Tensor,
    t: float,
    cond: torch.Tensor | None = None,
    trace: Trace = "exact",
    create_graph: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """v(z, t) (B, d) and tr(dv/dz) (B,): exact (d backward passes) or Hutchinson (one Rademacher probe)."""
    with torch.enable_grad():
        if not (create_graph and z.requires_grad):
            z = z.detach().requires_grad_(True)
        v = field(z, t, cond)
        if trace == "exact":
            div = torch.zeros(z.shape[0], dtype=z.dtype)
            for j in range(z.shape[1]):
                grad = torch.autograd.grad(v[:, j].sum(), z, create_graph=create_graph, retain_graph=True)[0]
                div = div + grad[:, j]
        else:
            eps = torch.randint(0, 2, z.shape, dtype=z.dtype) * 2 - 1
            grad = torch.autograd.grad((v * eps).sum(), z, create_graph=create_graph)[0]
            div = (grad * eps).sum(dim=-1)
    if not create_graph:
        return v.detach(), div.detach()
    return v, div


def standard_normal_logpdf(z: torch.Tensor) -> torch.Tensor:
    """log N(z; 0, I) for z (B, d); (B,)."""
    return -0.5 * (z**2).sum(dim=-1) - 0.5 * z.shape[-1] * math.log(2 * math.pi)


def integrate_with_logdet(
    field: VectorField,
    z: torch.Tensor,
    t0: float,
    t1: float,
    steps: int,
    cond: torch.Tensor | None = None,
    trace: Trace = "exact",
    create_graph: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Integrate (z, l) with dz/dt = v, dl/dt = tr(dv/dz) from t0 to t1, l(t0) = 0; returns (z(t1), l(t1))."""

    def f(t: float, y: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
        v, div = divergence(field, y[0], t, cond, trace, create_graph)
        return (v, div)

    zt, ell = rk4(f, (z, torch.zeros(z.shape[0], dtype=z.dtype)), t0, t1, steps)
    return zt, ell


@dataclass
class Flow:
    """A trained vector field plus the per-dimension standardisation of its data (mean, std: (d,))."""

    field: VectorField
    mean: torch.Tensor
    std: torch.Tensor
    steps: int = 20

    @property
    def dim(self) -> int:
        return self.field.dim

    def sample(self, n: int, generator: torch.Generator, cond: torch.Tensor | None = None) -> torch.Tensor:
        """n samples in data units; (n, d)."""
        z0 = torch.randn(n, self.dim, generator=generator)
        with torch.no_grad():
            z1 = rk4(lambda t, z: self.field(z, t, cond), z0, 0.0, 1.0, self.steps)
        return self.mean + self.std * z1

    def log_prob(self, x: torch.Tensor, cond: torch.Tensor | None = None, trace: Trace = "exact") -> torch.Tensor:
        """log p(x) in data units for x (B, d); (B,)."""
        z1 = (x - self.mean) / self.std
        z0, ell = integrate_with_logdet(self.field, z1, 1.0, 0.0, self.steps, cond, trace)
        return (standard_normal_logpdf(z0) + ell - torch.log(self.std).sum()).detach()

    def entropy(self, n: int, generator: torch.Generator, cond: torch.Tensor | None = None) -> float:
        """Monte-Carlo differential entropy -E log p over n of the flow's own samples (nats, data units)."""
        return float(-self.log_prob(self.sample(n, generator, cond), cond).mean())


def train_flow_matching(
    data: np.ndarray,
    generator: torch.Generator,
    cond: np.ndarray | None = None,
    iters: int = 2000,
    batch: int = 256,
    lr: float = 3e-3,
    hidden: int = 64,
    layers: int = 3,
    field: VectorField | None = None,
) -> Flow:
    """Fit a (conditional) CNF to samples `data` (P, d) [with conditions `cond` (P, c)] by flow matching."""
    x = torch.tensor(data, dtype=torch.float32)
    mean, std = x.mean(dim=0), x.std(dim=0).clamp_min(1e-6)
    z = (x - mean) / std
    c = None if cond is None else torch.tensor(cond, dtype=torch.float32)
    field = field or VectorField(x.shape[1], 0 if c is None else c.shape[1], hidden, layers)
    opt = torch.optim.Adam(field.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, iters)
    for _ in range(iters):
        idx = torch.randint(0, z.shape[0], (batch,), generator=generator)
        z0 = torch.randn(batch, z.shape[1], generator=generator)
        t = torch.rand(batch, generator=generator)
        loss = cfm_loss(field, z[idx], z0, t, None if c is None else c[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return Flow(field=field, mean=mean, std=std)
