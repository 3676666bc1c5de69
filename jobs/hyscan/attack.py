"""EOT-PGD (ℓ∞): projected gradient ascent with gradients averaged over the model's own noise draws.

A randomised defence is attacked through its expected loss (Expectation over Transformation, Athalye et al. 2018):
each step's gradient is the mean of ∇ₓ loss(f(x; ξ_j), y) over `draws` ≥ 8 independent draws ξ_j of the model's own
randomness (pitfall (b) of the method notes); for a deterministic model it is the plain PGD gradient. Like
torchattacks' `EOTPGD`, with a uniform random start and step 2.5·ε/steps. The draws are one batched forward of
`draws` copies, each copy getting its own noise: the same average as `draws` separate passes.

Both models face the same attack, the per-point worst case of two losses (`worst_case`):

- cross-entropy on the logits the model was *trained* with (`logit_scale`, the hybrid's temperature T). CE on the
  raw 1-Lipschitz logits sits in the near-uniform-softmax regime, where its gradient averages over all wrong classes
  instead of heading for the runner-up; in our runs that weaker attack overstated the hybrid's robust accuracy by
  about 15 points.
- the Carlini–Wagner margin max_{k≠y} z_k − z_y, which is scale-free and does not saturate on a confident plain CNN
  (where CE's gradient can vanish in float32, overstating the *baseline*).

Which adversarial point is kept is decided on `draws` selection draws; robust accuracy is then the *expected*
accuracy of the random model on the kept points over fresh draws (the accuracy of one deployed forward pass), so the
selection's noise does not bias a random model's score downwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

Model = Callable[[Tensor], Tensor]
AttackLoss = Literal["ce", "margin"]


def eot_gradient(loss: Callable[[Tensor], Tensor], x: Tensor, draws: int) -> Tensor:
    """(1/draws)·Σ_j ∇ₓ loss_j(x) for a random `loss` mapping a batch (draws·B, ...) to per-sample losses (draws·B,).

    x: (B, ...). The batch of `draws` stacked copies of x gets independent randomness per copy.
    """
    leaf = x.detach().requires_grad_(True)
    copies = leaf.repeat(draws, *([1] * (x.dim() - 1)))
    total = loss(copies).sum() / draws
    (grad,) = torch.autograd.grad(total, leaf)
    return grad


def attack_loss(logits: Tensor, labels: Tensor, kind: AttackLoss, logit_scale: float = 1.0) -> Tensor:
    """Per-sample loss to maximise; logits (B, K), labels (B,) → (B,)."""
    if kind == "ce":
        return F.cross_entropy(logit_scale * logits, labels, reduction="none")
    true = logits.gather(1, labels.view(-1, 1)).squeeze(1)
    others = logits.masked_fill(F.one_hot(labels, logits.shape[1]).bool(), float("-inf"))
    return others.max(dim=1).values - true


def eot_pgd_linf(
    model: Model,
    x: Tensor,
    y: Tensor,
    eps: float,
    steps: int,
    draws: int,
    loss: AttackLoss = "ce",
    logit_scale: float = 1.0,
    step_size: float | None = None,
    random_start: bool = True,
    clip: tuple[float, float] = (0.0, 1.0),
) -> Tensor:
    """Adversarial x' with ‖x' − x‖∞ ≤ eps inside `clip`, maximising E_ξ loss(model(x'; ξ), y).

    x: (B, C, H, W), y: (B,). Default step size 2.5·eps/steps (Madry et al.).
    """
    alpha = step_size if step_size is not None else 2.5 * eps / steps
    labels = y.repeat(draws)

    def objective(batch: Tensor) -> Tensor:
        return attack_loss(model(batch), labels, loss, logit_scale)

    delta = torch.empty_like(x).uniform_(-eps, eps) if random_start else torch.zeros_like(x)
    adv = (x + delta).clamp(*clip)
    for _ in range(steps):
        grad = eot_gradient(objective, adv, draws)
        adv = adv.detach() + alpha * grad.sign()
        adv = torch.min(torch.max(adv, x - eps), x + eps).clamp(*clip)
    return adv.detach()


@torch.no_grad()
def correct_rate(model: Model, x: Tensor, y: Tensor, draws: int, batch: int = 4096) -> Tensor:
    """(B,) fraction of `draws` forward passes of `model` that classify each x (B, ...) as its label y (B,)."""
    per_call = max(1, batch // draws)
    rates = []
    for start in range(0, len(x), per_call):
        chunk, labels = x[start : start + per_call], y[start : start + per_call]
        preds = model(chunk.repeat(draws, *([1] * (x.dim() - 1)))).argmax(dim=1).view(draws, len(chunk))
        rates.append((preds == labels.view(1, -1)).float().mean(dim=0))
    return torch.cat(rates) if rates else torch.zeros(0)


def expected_accuracy(model: Model, x: Tensor, y: Tensor, draws: int, batch: int = 4096) -> float:
    """Mean over `draws` forward passes of the accuracy of `model` on (x, y)."""
    return float(correct_rate(model, x, y, draws, batch).mean())


def select_worst(model: Model, candidates: Sequence[Tensor], y: Tensor, draws: int) -> Tensor:
    """Per point, the candidate (each (B, ...)) with the lowest correct rate over `draws` passes; ties keep the
    earlier candidate. Returns (B, ...)."""
    rates = torch.stack([correct_rate(model, c, y, draws) for c in candidates])  # (A, B)
    pick = rates.argmin(dim=0)
    stacked = torch.stack(list(candidates))  # (A, B, ...)
    return stacked[pick, torch.arange(len(y))]


def worst_case(
    model: Model,
    x: Tensor,
    y: Tensor,
    eps: float,
    steps: int,
    draws: int,
    losses: Sequence[AttackLoss] = ("ce", "margin"),
    logit_scale: float = 1.0,
) -> tuple[Tensor, dict[str, Tensor]]:
    """EOT-PGD with each loss in `losses`, then the per-point worst (`select_worst` on `draws` draws).

    Returns the kept adversarial points (B, ...) and each loss's own adversarial points, by loss name.
    """
    per_loss: dict[str, Tensor] = {
        kind: eot_pgd_linf(model, x, y, eps, steps, draws, kind, logit_scale) for kind in losses
    }
    return select_worst(model, list(per_loss.values()), y, draws), per_loss
