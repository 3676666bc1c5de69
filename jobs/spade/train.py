"""Training loop of the SPADE surrogate: L = L_diff + λ_cal·L_cal + λ_sup·L_sup.

Per minibatch (as in the official trainer): the DDPM loss, then — when either regulariser is on — a few
DDIM samples per design *with gradients through the sampler*, whose mean μ̂ and std σ̂ enter L_cal (with
the labels) and L_sup (with the cached kNN statistics). Adam, gradient-norm clipping.

Difference [rec]: with `support_probes` > 0 the sampler also runs on Gaussian perturbations of the batch
(std `support_probes` in z-units) and L_sup is averaged over batch and probes, the probes' ȳ_k and r_k
coming from a fresh kNN query. `support_probes = 0` is the official trainer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from raygent.jobs.spade.params import SpadeParams
from raygent.jobs.spade.regularizers import KnnSupport, calibration_loss, support_proximity_loss
from raygent.jobs.spade.surrogate import ConditionalDiffusion, sample_moments


@dataclass
class EpochStats:
    epoch: int
    loss: float
    diffusion: float
    calibration: float
    support: float


def build_surrogate(x_dim: int, params: SpadeParams) -> ConditionalDiffusion:
    return ConditionalDiffusion(
        x_dim,
        hidden=params.hidden,
        t_dim=params.t_dim,
        steps=params.diffusion_steps,
        beta_start=params.beta_start,
        beta_end=params.beta_end,
    )


def batch_loss(
    model: ConditionalDiffusion,
    xb: torch.Tensor,
    yb: torch.Tensor,
    index: torch.Tensor,
    knn: KnnSupport | None,
    params: SpadeParams,
    generator: torch.Generator,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Total loss of one minibatch xb (B, D), yb (B,) with training-set indices `index` (B,)."""
    diffusion = model.diffusion_loss(xb, yb.unsqueeze(1), generator)
    parts = {"diffusion": diffusion.item(), "calibration": 0.0, "support": 0.0}
    loss = diffusion
    if params.calib <= 0 and params.support <= 0:
        return loss, parts
    use_probes = params.support > 0 and params.support_probes > 0
    queries = xb
    if use_probes:
        probes = xb + params.support_probes * torch.randn(xb.shape, generator=generator)
        queries = torch.cat([xb, probes])
    samples = model.ddim_sample(queries, params.cal_samples, params.cal_ddim_steps, generator=generator)
    mu, sigma = sample_moments(samples)
    batch = xb.shape[0]
    if params.calib > 0:
        cal = calibration_loss(
            mu[:batch], yb, n_pairs=params.cal_pairs, temperature=params.cal_temperature, generator=generator
        )
        loss = loss + params.calib * cal
        parts["calibration"] = cal.item()
    if params.support > 0 and knn is not None:
        neighbour_mean, radius = knn.train_mean[index], knn.train_radius[index]
        if use_probes:
            probe_mean, probe_radius = knn.query(queries[batch:])
            neighbour_mean = torch.cat([neighbour_mean, probe_mean])
            radius = torch.cat([radius, probe_radius])
        sup = support_proximity_loss(
            mu,
            sigma,
            neighbour_mean,
            radius,
            tau_a=params.sup_tau_a,
            sigma_a0=params.sup_sigma_a0,
            sigma_a1=params.sup_sigma_a1,
        )
        loss = loss + params.support * sup
        parts["support"] = sup.item()
    return loss, parts


def fit_surrogate(
    model: ConditionalDiffusion,
    optimizer: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    knn: KnnSupport | None,
    params: SpadeParams,
    generator: torch.Generator,
    *,
    start_epoch: int = 0,
    on_epoch: Callable[[EpochStats], Any] | None = None,
) -> list[EpochStats]:
    """Train for epochs `start_epoch .. params.epochs − 1` on z-scored x (N, D), y (N,)."""
    history = []
    for epoch in range(start_epoch, params.epochs):
        model.train()
        order = torch.randperm(x.shape[0], generator=generator)
        totals = {"loss": 0.0, "diffusion": 0.0, "calibration": 0.0, "support": 0.0}
        n_batches = 0
        for start in range(0, x.shape[0], params.batch_size):
            index = order[start : start + params.batch_size]
            if index.numel() < 2:
                continue
            loss, parts = batch_loss(model, x[index], y[index], index, knn, params, generator)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), params.grad_clip)
            optimizer.step()
            totals["loss"] += loss.item()
            for key, value in parts.items():
                totals[key] += value
            n_batches += 1
        stats = EpochStats(epoch=epoch, **{k: v / max(n_batches, 1) for k, v in totals.items()})
        history.append(stats)
        if on_epoch is not None:
            on_epoch(stats)
    return history
