"""EOT-PGD (ℓ∞): projected gradient ascent on the cross-entropy with gradients averaged over noise draws.

A randomised defence is attacked through its expected loss (Expectation over Transformation, Athalye et al. 2018):
each step's gradient is the mean of ∇ₓ CE(f(x; ξ_j), y) over `draws` ≥ 8 independent draws ξ_j of the model's own
randomness (pitfall (b) of the method notes); for a deterministic model it is the plain PGD gradient. Like
torchattacks' `EOTPGD`, with a uniform random start. The draws are taken in one batched forward of `draws`
copies, each copy getting its own noise, which is the same average as `draws` separate passes.
Robust accuracy is then the *expected* accuracy of the random model on the adversarial points (the mean over
`eval_draws` predictions), i.e. the accuracy of one deployed forward pass.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

Model = Callable[[Tensor], Tensor]


def eot_gradient(loss: Callable[[Tensor], Tensor], x: Tensor, draws: int) -> Tensor:
    """(1/draws)·Σ_j ∇ₓ loss_j(x) for a random `loss` mapping a batch (draws·B, ...) to per-sample losses (draws·B,).

    x: (B, ...). The batch of `draws` stacked copies of x gets independent randomness per copy.
    """
    leaf = x.detach().requires_grad_(True)
    copies = leaf.repeat(draws, *([1] * (x.dim() - 1)))
    total = loss(copies).sum() / draws
    (grad,) = torch.autograd.grad(total, leaf)
    return grad


def eot_pgd_linf(
    model: Model,
    x: Tensor,
    y: Tensor,
    eps: float,
    steps: int,
    draws: int,
    step_size: float | None = None,
    random_start: bool = True,
    clip: tuple[float, float] = (0.0, 1.0),
) -> Tensor:
    """Adversarial x' with ‖x' − x‖∞ ≤ eps inside `clip`, maximising E_ξ CE(model(x'; ξ), y).

    x: (B, C, H, W), y: (B,). Default step size 2.5·eps/steps (Madry et al.).
    """
    alpha = step_size if step_size is not None else 2.5 * eps / steps
    labels = y.repeat(draws)

    def loss(batch: Tensor) -> Tensor:
        return F.cross_entropy(model(batch), labels, reduction="none")

    delta = torch.empty_like(x).uniform_(-eps, eps) if random_start else torch.zeros_like(x)
    adv = (x + delta).clamp(*clip)
    for _ in range(steps):
        grad = eot_gradient(loss, adv, draws)
        adv = adv.detach() + alpha * grad.sign()
        adv = torch.min(torch.max(adv, x - eps), x + eps).clamp(*clip)
    return adv.detach()


@torch.no_grad()
def expected_accuracy(model: Model, x: Tensor, y: Tensor, draws: int, batch: int = 4096) -> float:
    """Mean over `draws` forward passes of the accuracy of `model` on (x, y)."""
    hits = 0.0
    for start in range(0, len(x), max(1, batch // draws)):
        chunk, labels = x[start : start + max(1, batch // draws)], y[start : start + max(1, batch // draws)]
        preds = model(chunk.repeat(draws, *([1] * (x.dim() - 1)))).argmax(dim=1)
        hits += float((preds == labels.repeat(draws)).sum()) / draws
    return hits / len(x)
