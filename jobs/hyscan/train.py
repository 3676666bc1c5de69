"""Training with Gaussian noise augmentation (Cohen et al.), shared by the hybrid net and the plain-CNN baseline.

Both models see x + σ·N(0, I) with the smoothing σ, Adam with a cosine learning-rate decay, cross-entropy. The
hybrid's logits are 1-Lipschitz in the input, so their spread is bounded by the input distances; its loss uses
CE(T·logits) with a fixed temperature T (the notebook instead ends in an unnormalised softmax Dense layer, which
gives up the head's Lipschitz bound). T changes neither the argmax nor the smoothing certificate. The paper trains
with σ = 0.5 whatever the smoothing σ; we train each trial with its own σ, the standard for randomized smoothing.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from raygent.jobs.hyscan.layers import finalize_norms, refresh_norms


def noisy_cross_entropy(logits: Tensor, labels: Tensor, temperature: float = 1.0) -> Tensor:
    """Mean CE of temperature-scaled logits; logits (B, K), labels (B,) → scalar."""
    return F.cross_entropy(temperature * logits, labels)


def train_classifier(
    model: nn.Module,
    x: Tensor,
    y: Tensor,
    sigma: float,
    epochs: int,
    batch_size: int,
    lr: float,
    temperature: float = 1.0,
) -> float:
    """Train `model` in place on (x (N, C, H, W), y (N,)) with noise augmentation; returns the last epoch's mean loss.

    Uses the global torch RNG (seed it first). Leaves the model in eval mode with its deployed normalisers fixed.
    """
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    steps_per_epoch = -(-len(x) // batch_size)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * steps_per_epoch)
    epoch_loss = float("nan")
    for _ in range(epochs):
        order = torch.randperm(len(x), device=x.device)
        total = 0.0
        for start in range(0, len(x), batch_size):
            index = order[start : start + batch_size]
            batch = x[index] + sigma * torch.randn_like(x[index])
            refresh_norms(model, 1)
            loss = noisy_cross_entropy(model(batch), y[index], temperature)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            total += float(loss.detach()) * len(index)
        epoch_loss = total / len(x)
    finalize_norms(model)
    model.eval()
    return epoch_loss
