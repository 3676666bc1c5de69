"""The alternative objective (``objective="direct"``): maximise entropy under a dynamics penalty.

Method notes step 6 [rec]: max_theta lambda * H(p_theta) - E_kappa |F_p_theta(kappa) - F_data(kappa)|^2, with
F_p(kappa) = E_p[n tanh(m^T kappa)]. Two additions make the problem well posed, both our reconstruction:

- the identifiable marginal p(m) is not optimised: m comes from a flow fitted to the point estimate's m by
  flow matching, and the entropy term is the conditional entropy H(n | m) of a conditional CNF p_theta(n | m)
  (H(m, n) = H(m) + H(n | m), with H(m) fixed);
- a scale constraint (without one the entropy is unbounded): the second moments E[n n^T] must match the
  point estimate's. Both constraints enter as one penalty with weight `direct_penalty`.

With ``flow_coordinates: residual`` the conditional flow models r = n - g(m) given m (a unit-Jacobian
shear, so H(n | m) = H(r | m)). The conditional flow is warm-started by flow matching on the point
estimate and then fine-tuned by backpropagating through the RK4 solve with the exact-trace log-density.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from raygent.jobs.lrrnn_flows.fit import Projection
from raygent.jobs.lrrnn_flows.flow import Flow, integrate_with_logdet, standard_normal_logpdf, train_flow_matching

DIRECT_STEPS = 8


@dataclass
class DirectSampler:
    """m ~ m_flow; n | m ~ n_flow (conditioned on standardised m), plus g(m) if `shear` is given."""

    m_flow: Flow
    n_flow: Flow
    shear: Projection | None = None
    entropy_samples: int = 1000

    def _cond(self, m: torch.Tensor) -> torch.Tensor:
        return (m - self.m_flow.mean) / self.m_flow.std

    def sample(self, n_neurons: int, generator: torch.Generator) -> tuple[np.ndarray, np.ndarray]:
        m = self.m_flow.sample(n_neurons, generator)
        n = self.n_flow.sample(n_neurons, generator, cond=self._cond(m)).double().numpy()
        m_np = m.double().numpy()
        return m_np, n if self.shear is None else n + self.shear(m_np)

    def entropy(self, generator: torch.Generator) -> float:
        m = self.m_flow.sample(self.entropy_samples, generator)
        return self.m_flow.entropy(self.entropy_samples, generator) + self.n_flow.entropy(
            self.entropy_samples, generator, cond=self._cond(m)
        )


def conditional_entropy_and_samples(
    n_flow: Flow, cond: torch.Tensor, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Differentiable H(n | m) estimate (standardised units) and the samples n (B, R) in data units."""
    z0 = torch.randn(cond.shape[0], n_flow.dim, generator=generator)
    z1, ell = integrate_with_logdet(n_flow.field, z0, 0.0, 1.0, DIRECT_STEPS, cond, "exact", create_graph=True)
    log_p = standard_normal_logpdf(z0) - ell
    return -log_p.mean(), n_flow.mean + n_flow.std * z1


def dynamics_penalty(
    m: torch.Tensor, n: torch.Tensor, n_ref: torch.Tensor, kappas: torch.Tensor, second_target: torch.Tensor
) -> torch.Tensor:
    """Relative |F - F_ref|^2 over kappas (K, R) plus relative |E[n n^T] - S|^2; m, n, n_ref: (B, R).

    F(kappa) = mean_b n_b tanh(m_b^T kappa) for the sampled n and for the point estimate n_ref on the same m,
    so the batch's own sampling of m cancels.
    """
    features = torch.tanh(m @ kappas.T)
    f, f_ref = features.T @ n / m.shape[0], features.T @ n_ref / m.shape[0]
    second = n.T @ n / n.shape[0]
    fit = ((f - f_ref) ** 2).sum() / (f_ref**2).sum()
    scale = ((second - second_target) ** 2).sum() / (second_target**2).sum()
    return fit + scale


def learn_direct(
    p: Any, m: np.ndarray, n: np.ndarray, visited: np.ndarray, g: Projection, rng: np.random.Generator,
    gen: torch.Generator,
) -> DirectSampler:
    """Fit p(m) by flow matching, then p(n | m) by maximising lambda * H(n | m) - penalty."""
    del visited, rng  # the constraint states are the projection's kappas
    m_flow = train_flow_matching(m, gen, iters=p.flow_iters, batch=p.flow_batch, lr=p.flow_lr, hidden=p.flow_hidden)
    m_t = torch.tensor(m, dtype=torch.float32)
    cond = ((m_t - m_flow.mean) / m_flow.std).numpy()
    shear = g if p.flow_coordinates == "residual" else None
    offset = torch.tensor(g(m) if shear is not None else np.zeros_like(n), dtype=torch.float32)
    n_flow = train_flow_matching(
        n - offset.double().numpy(), gen, cond=cond, iters=p.flow_iters, batch=p.flow_batch, lr=p.flow_lr,
        hidden=p.flow_hidden,
    )
    n_flow.steps = max(n_flow.steps, DIRECT_STEPS)
    kappas = torch.tensor(g.kappas, dtype=torch.float32)
    n_t = torch.tensor(n, dtype=torch.float32)
    second_target = n_t.T @ n_t / n_t.shape[0]
    opt = torch.optim.Adam(n_flow.field.parameters(), lr=p.flow_lr / 3)
    cond_t = torch.tensor(cond)
    for _ in range(p.direct_iters):
        idx = torch.randint(0, m_t.shape[0], (p.direct_batch,), generator=gen)
        entropy, second = conditional_entropy_and_samples(n_flow, cond_t[idx], gen)
        n_sample = second + offset[idx]
        loss = -p.entropy_weight * entropy + p.direct_penalty * dynamics_penalty(
            m_t[idx], n_sample, n_t[idx], kappas, second_target
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    return DirectSampler(m_flow=m_flow, n_flow=n_flow, shear=shear)

