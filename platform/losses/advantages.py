"""Rollout-level advantages for GRPO and the masks that decide which samples train.

Samples are flat: one entry per trajectory, `rewards: [N]`, and `group_index: [N]` (int64) naming each
trajectory's group by a contiguous index 0..num_groups−1 (`group_index_from_ids` builds it from
`Trajectory.group_id`). Groups may differ in size (a group that lost a trajectory to an infrastructure failure
still trains).

Differences from DeepSeekMath's GRPO (outcome supervision): the std normalization can be switched off (Dr. GRPO
argues it biases toward groups with low reward spread); the std is the unbiased sample std (torch's default, as
in TRL and verl) plus `eps`; a group of one gets advantage 0 rather than NaN. A multi-turn trajectory gets one
advantage, shared by every response token of every step (docs/design.md §3: advantages per rollout).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from raygent.platform.contracts import ZERO_VARIANCE_ATOL


def group_index_from_ids(group_ids: Sequence[str]) -> Tensor:
    """Contiguous group indices in order of first appearance: `["b", "a", "b"]` → `tensor([0, 1, 0])`."""
    index: dict[str, int] = {}
    return torch.tensor([index.setdefault(group_id, len(index)) for group_id in group_ids], dtype=torch.long)


def _num_groups(group_index: Tensor, rewards: Tensor) -> int:
    if rewards.dim() != 1 or group_index.shape != rewards.shape:
        raise ValueError(
            f"rewards and group_index must both be [N]; got {tuple(rewards.shape)} and {tuple(group_index.shape)}"
        )
    if group_index.numel() == 0:
        return 0
    if int(group_index.min()) < 0:
        raise ValueError("group_index must be >= 0")
    return int(group_index.max()) + 1


def group_advantages(rewards: Tensor, group_index: Tensor, *, normalize_std: bool = True, eps: float = 1e-6) -> Tensor:
    """A_i = (r_i − mean_g r) / (std_g r + eps), or r_i − mean_g r without std normalization: `[N]` → `[N]`.

    mean_g and std_g run over the trajectories of i's group g. Example, one group of three:

    >>> group_advantages(torch.tensor([1.0, 0.0, 0.0]), torch.tensor([0, 0, 0]), eps=0.0)
    tensor([ 1.1547, -0.5774, -0.5774])
    """
    num_groups = _num_groups(group_index, rewards)
    rewards = rewards.detach().float()
    counts = torch.bincount(group_index, minlength=num_groups).to(rewards.dtype)
    sums = torch.zeros(num_groups, dtype=rewards.dtype).index_add_(0, group_index, rewards)
    centred = rewards - (sums / counts.clamp(min=1.0))[group_index]
    if not normalize_std:
        return centred
    squares = torch.zeros(num_groups, dtype=rewards.dtype).index_add_(0, group_index, centred.square())
    std = (squares / (counts - 1.0).clamp(min=1.0)).sqrt()
    return centred / (std[group_index] + eps)


def nonzero_variance_mask(rewards: Tensor, group_index: Tensor, atol: float = ZERO_VARIANCE_ATOL) -> Tensor:
    """The zero-variance group filter: True (keep) for samples whose group's rewards spread by more than `atol`.

    `[N]`, `[N]` → bool `[N]`. A group whose rewards are all equal has all-zero advantages: no policy-gradient
    signal, yet its tokens would dilute a token-mean and still feel the KL term. DAPO's dynamic sampling drops
    such groups (and over-samples to refill the batch, which is the trainer's business). A group of one is
    always dropped. Same rule as `TrajectoryGroup.is_zero_variance`.
    """
    num_groups = _num_groups(group_index, rewards)
    rewards = rewards.detach().float()
    highest = torch.full((num_groups,), -torch.inf).scatter_reduce(0, group_index, rewards, reduce="amax")
    lowest = torch.full((num_groups,), torch.inf).scatter_reduce(0, group_index, rewards, reduce="amin")
    return ((highest - lowest) > atol)[group_index]


def token_advantages(advantages: Tensor, loss_mask: Tensor) -> Tensor:
    """Broadcast one advantage per sequence over its trained tokens: `[B]`, `[B, T]` → `[B, T]`, 0 where masked."""
    if advantages.dim() != 1 or loss_mask.dim() != 2 or advantages.shape[0] != loss_mask.shape[0]:
        raise ValueError(
            f"expected advantages [B] and loss_mask [B, T]; got {tuple(advantages.shape)}, {tuple(loss_mask.shape)}"
        )
    return advantages.unsqueeze(-1) * loss_mask.to(advantages.dtype)


def mask_truncated(loss_mask: Tensor, truncated: Tensor) -> Tensor:
    """Truncated-response masking: zero the rows of sequences that were cut by a limit. `[B, T]`, bool `[B]`.

    DAPO's overlong filtering: a response cut before it finished is not evidence that its content was bad, so it
    is not trained on. Apply it after computing advantages (the truncated samples still count in their group's
    mean and std, as in DAPO). Returns a new mask of `loss_mask`'s dtype.
    """
    if truncated.dim() != 1 or loss_mask.dim() != 2 or truncated.shape[0] != loss_mask.shape[0]:
        raise ValueError(
            f"expected loss_mask [B, T] and truncated [B]; got {tuple(loss_mask.shape)}, {tuple(truncated.shape)}"
        )
    keep = (~truncated.bool()).unsqueeze(-1)
    return loss_mask * keep.to(loss_mask.dtype) if loss_mask.dtype != torch.bool else loss_mask & keep


def drgrpo_advantages(rewards: Tensor, group_index: Tensor, *, eps: float = 1e-6) -> Tensor:
    """Dr. GRPO (Liu et al., 2025): r_i − mean_g r, no std normalisation (it biases toward low-spread groups)."""
    return group_advantages(rewards, group_index, normalize_std=False, eps=eps)


def rloo_advantages(rewards: Tensor, group_index: Tensor, *, eps: float = 1e-6) -> Tensor:
    """RLOO (Ahmadian et al., 2024): r_i − mean of the *other* members of i's group, = n/(n−1)·(r_i − mean_g r).

    A group of one gets 0. `eps` is unused (kept for a uniform estimator signature).
    """
    num_groups = _num_groups(group_index, rewards)
    rewards = rewards.detach().float()
    counts = torch.bincount(group_index, minlength=num_groups).to(rewards.dtype)
    sums = torch.zeros(num_groups, dtype=rewards.dtype).index_add_(0, group_index, rewards)
    n = counts[group_index]
    others = (sums[group_index] - rewards) / (n - 1.0).clamp(min=1.0)
    return torch.where(n > 1, rewards - others, torch.zeros_like(rewards))


AdvantageEstimator = Callable[..., Tensor]
"""`f(rewards [N], group_index [N], *, eps: float) -> advantages [N]`."""

ADVANTAGE_ESTIMATORS: dict[str, AdvantageEstimator] = {
    "grpo": group_advantages,
    "drgrpo": drgrpo_advantages,
    "rloo": rloo_advantages,
}
"""The built-in advantage estimators by name (`learner.loss.advantage`; a plugin is named by `"module:attr"`)."""

ESTIMATOR_EXPECTS = "an advantage estimator f(rewards [N], group_index [N], *, eps) -> advantages [N]"


def check_estimator(name: str) -> str:
    """`learner.loss.advantage`: a built-in name, or `"module:attr"` of a function with the estimators' signature
    (imported and checked, not called); a `ValueError` saying what is wrong otherwise."""
    from raygent.platform.config import check_entry

    if ":" in name:
        check_entry(name, "function", ESTIMATOR_EXPECTS, 2)
        return name
    if name not in ADVANTAGE_ESTIMATORS:
        close = difflib.get_close_matches(name, list(ADVANTAGE_ESTIMATORS), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        known = ", ".join(ADVANTAGE_ESTIMATORS)
        raise ValueError(f"unknown advantage estimator {name!r}{hint}; expected one of {known}, or 'module:attr'")
    return name


def advantage_estimator(name: str) -> AdvantageEstimator:
    """The estimator `name` stands for: a built-in, or the function a `"module:attr"` names."""
    from raygent.platform.config import load_entry

    estimator: AdvantageEstimator = load_entry(name) if ":" in name else ADVANTAGE_ESTIMATORS[name]
    return estimator
