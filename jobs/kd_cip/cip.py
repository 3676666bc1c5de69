"""The Complex Interaction Penalty (CIP): an L1 penalty on the student's high-order interactions.

As written in the method notes (a reconstruction [rec]; the paper's exact formula was not reachable):

    CIP = E_x[ Σ_{S: |S| ≥ k} w(|S|) · (|I_and(S; x)| + |I_or(S; x)|) ],   w increasing in |S|,

added to the KD loss with weight λ. `estimator="sampled"` (the notes' estimator) draws `n_subsets` subsets S
uniformly from {S : |S| ≥ k} per step (shared across the batch) and computes each I(S) from its 2^{|S|} masked
inputs (twice that for AND + OR), rescaled so the estimate is unbiased for the sum; `estimator="full"` uses all
2^n masked inputs and the exact sum (cheaper per interaction when n ≤ 10).

Switches that keep the alternatives one config key away: `decomposition` ("and_or": the half split
v_and = v_or = ½v, or "and": plain Harsanyi on v), `order_weight` (w(s) = s − k + 1, or 1), `target`
("zero", or "teacher": penalise |I_student(S) − I_teacher(S)|, the notes' cheaper variant), `reduction`
("sum" as written, or "mean" over the subsets, which only rescales λ).

Gradients flow through the student's reward function only; the teacher's rewards are computed without grad.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch

from raygent.jobs.kd_cip.interactions import RewardFn, all_masks, decompose, orders


@dataclass(frozen=True)
class CIPSpec:
    """How the penalty is defined and estimated."""

    order: int = 3
    estimator: Literal["sampled", "full"] = "sampled"
    n_subsets: int = 4
    decomposition: Literal["and_or", "and"] = "and_or"
    order_weight: Literal["linear", "uniform"] = "linear"
    target: Literal["zero", "teacher"] = "zero"
    reduction: Literal["sum", "mean"] = "sum"


def order_weights(sizes: torch.Tensor, spec: CIPSpec) -> torch.Tensor:
    """w(|S|) for a tensor of subset sizes (0 below the order threshold k)."""
    base = (sizes - spec.order + 1).float() if spec.order_weight == "linear" else torch.ones_like(sizes).float()
    return torch.where(sizes >= spec.order, base, torch.zeros_like(base))


def complex_subsets(n: int, order: int) -> torch.Tensor:
    """(N_k,) long: the bitmasks of every S ⊆ N with |S| ≥ order."""
    return torch.nonzero(orders(n) >= order).squeeze(1)


def _subset_interactions(reward_fn: RewardFn, n: int, subsets: list[int], spec: CIPSpec) -> torch.Tensor:
    """(2, B, m): I_and(S) and I_or(S) of each of the m `subsets`, from their 2·2^{|S|} masked inputs."""
    keeps, spans = [], []
    full = all_masks(n)
    for s in subsets:
        members = torch.nonzero(full[s]).squeeze(1)
        local = all_masks(len(members))  # (2^|S|, |S|): T ⊆ S in S's local coordinates
        keep_and = torch.zeros(len(local), n, dtype=torch.bool)
        keep_and[:, members] = local
        keeps += [keep_and, ~keep_and]  # x_T and x_{N\T}
        spans.append(len(local))
    rewards = reward_fn(torch.cat(keeps))  # (B, Σ 2·2^|S|)
    out_and, out_or, start = [], [], 0
    for size in spans:
        local_order = all_masks(int(math.log2(size))).sum(dim=1)
        sign = ((-1.0) ** (int(math.log2(size)) - local_order).float()).to(rewards.dtype)
        v_t, v_not_t = rewards[:, start : start + size], rewards[:, start + size : start + 2 * size]
        start += 2 * size
        if spec.decomposition == "and":
            out_and.append(v_t @ sign)
            out_or.append(torch.zeros_like(v_t[:, 0]))
        else:  # half split of v − v(x_∅): the centring constant cancels in the alternating sums (S ≠ ∅)
            out_and.append(0.5 * v_t @ sign)
            out_or.append(-0.5 * v_not_t @ sign)
    return torch.stack((torch.stack(out_and, dim=1), torch.stack(out_or, dim=1)))


def complex_interaction_penalty(
    reward_fn: RewardFn,
    n: int,
    spec: CIPSpec,
    generator: torch.Generator | None = None,
    teacher_reward_fn: RewardFn | None = None,
) -> torch.Tensor:
    """Scalar CIP for one batch; `reward_fn` maps keep-masks (M, n) to the student's rewards (B, M)."""
    if spec.target == "teacher" and teacher_reward_fn is None:
        raise ValueError("target='teacher' needs teacher_reward_fn")
    candidates = complex_subsets(n, spec.order)
    if len(candidates) == 0:
        raise ValueError(f"no subsets of order >= {spec.order} among {n} players")
    if spec.estimator == "full":
        subsets = candidates
        scale = 1.0
    else:
        pick = torch.randint(0, len(candidates), (spec.n_subsets,), generator=generator)
        subsets = candidates[pick]
        scale = len(candidates) / spec.n_subsets  # unbiased for the sum over all complex subsets
    if spec.reduction == "mean":
        scale /= len(candidates)
    weights = order_weights(orders(n)[subsets], spec)  # (m,)
    if spec.estimator == "full":
        student = torch.stack(_decompose_full(reward_fn, n, spec))[..., subsets]  # (2, B, m)
    else:
        student = _subset_interactions(reward_fn, n, subsets.tolist(), spec)
    if spec.target == "teacher":
        assert teacher_reward_fn is not None
        with torch.no_grad():
            if spec.estimator == "full":
                teacher = torch.stack(_decompose_full(teacher_reward_fn, n, spec))[..., subsets]
            else:
                teacher = _subset_interactions(teacher_reward_fn, n, subsets.tolist(), spec)
        student = student - teacher
    per_sample = (student.abs().sum(dim=0) * weights).sum(dim=-1)  # (B,)
    return scale * per_sample.mean()


def _decompose_full(reward_fn: RewardFn, n: int, spec: CIPSpec) -> tuple[torch.Tensor, torch.Tensor]:
    table = reward_fn(all_masks(n))
    return decompose(table, n, "and" if spec.decomposition == "and" else "and_or_half")
