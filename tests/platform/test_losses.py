"""The losses and advantages against values worked out by hand on tiny tensors, and where gradients may flow.

Layout everywhere: `[B, T]` per-token tensors, one row per sequence, right-padded; the mask marks trained tokens.
"""

from __future__ import annotations

import doctest
import math

import pytest
import torch
import torch.nn.functional as F
from pydantic import ValidationError

from raygent.platform.contracts import Observation, Step, Task, Trajectory, TrajectoryGroup
from raygent.platform.losses import (
    ADVANTAGE_ESTIMATORS,
    LOSSES,
    TERMS,
    LossConfig,
    adversarial_imitation_loss,
    aggregate,
    grpo_loss,
    sft_loss,
)
from raygent.platform.losses import advantages as adv
from raygent.platform.losses.importance import truncated_importance_weights
from raygent.platform.losses.kl import kl_estimate
from raygent.platform.losses.logprobs import entropy_from_logits, token_logprobs
from raygent.platform.losses.terms import TermInputs, build_term

LN = math.log

# The GRPO fixture: two sequences, ratios r = π_θ/π_old chosen so that each clip case occurs once.
#   seq 0, A = +1: r = 1.5 (> 1.2: clipped high, loss −1.2), r = 0.5 (A > 0 never clips low: loss −0.5), pad
#   seq 1, A = −1: r = 0.5 (< 0.8: clipped low, loss +0.8), r = 1.5 (A < 0 never clips high: loss +1.5),
#                  r = 1.0 (loss +1.0)
RATIOS = [[1.5, 0.5, 1.0], [0.5, 1.5, 1.0]]
MASK = torch.tensor([[True, True, False], [True, True, True]])
ADVANTAGES = torch.tensor([1.0, -1.0])


def ratio_logprobs(ratios: list[list[float]]) -> torch.Tensor:
    return torch.log(torch.tensor(ratios)).requires_grad_()


def close(actual: torch.Tensor | None, expected: float | list | torch.Tensor, atol: float = 1e-5) -> bool:
    assert actual is not None
    return torch.allclose(actual.detach().float(), torch.as_tensor(expected, dtype=torch.float32), atol=atol)


# --- aggregation ---------------------------------------------------------------------------------------------------


def unequal_lengths() -> tuple[torch.Tensor, torch.Tensor]:
    # seq 0: one token with loss 1; seq 1: three tokens with loss 3 each.
    per_token = torch.tensor([[1.0, 0.0, 0.0], [3.0, 3.0, 3.0]], requires_grad=True)
    mask = torch.tensor([[1, 0, 0], [1, 1, 1]], dtype=torch.bool)
    return per_token, mask


def test_token_mean_and_seq_mean_token_mean_differ_on_unequal_lengths() -> None:
    per_token, mask = unequal_lengths()
    token_mean = aggregate(per_token, mask, "token-mean")
    token_mean.backward()
    assert close(token_mean, (1 + 3 * 3) / 4)  # 2.5: every token weighs 1/4
    assert close(per_token.grad, [[0.25, 0, 0], [0.25, 0.25, 0.25]])

    per_token, mask = unequal_lengths()
    seq_mean = aggregate(per_token, mask, "seq-mean-token-mean")
    seq_mean.backward()
    assert close(seq_mean, (1 / 1 + 9 / 3) / 2)  # 2.0: every sequence weighs 1/2
    assert close(per_token.grad, [[1 / 2, 0, 0], [1 / 6, 1 / 6, 1 / 6]])


def test_equal_lengths_make_the_aggregations_agree() -> None:
    per_token = torch.tensor([[1.0, 2.0], [3.0, 6.0]])
    mask = torch.ones(2, 2, dtype=torch.bool)
    assert close(aggregate(per_token, mask, "token-mean"), aggregate(per_token, mask, "seq-mean-token-mean"))


@pytest.mark.parametrize("mode", ["token-mean", "seq-mean-token-mean"])
def test_shards_with_a_global_denominator_sum_to_the_full_batch(mode: str) -> None:
    per_token, mask = unequal_lengths()
    full = aggregate(per_token, mask, mode)
    # Two shards whose gradients are summed: each divides by the full batch's count (4 tokens or 2 sequences).
    count = 4.0 if mode == "token-mean" else 2.0
    shards = sum(aggregate(per_token[i : i + 1], mask[i : i + 1], mode, denominator=count) for i in range(2))
    assert close(shards, full.item())


def test_nothing_to_train_gives_zero_not_nan() -> None:
    per_token = torch.full((2, 2), float("nan"), requires_grad=True)
    mask = torch.zeros(2, 2, dtype=torch.bool)
    for mode in ("token-mean", "seq-mean-token-mean"):
        loss = aggregate(per_token, mask, mode)
        loss.backward()
        assert loss.item() == 0.0 and close(per_token.grad, torch.zeros(2, 2), atol=0.0)
    with pytest.raises(ValueError, match="unknown aggregation"):
        aggregate(per_token, mask, "sum")


# --- KL estimators -------------------------------------------------------------------------------------------------


def test_kl_estimators_by_hand() -> None:
    # π_θ = 0.5, π_ref = 0.25: log r = log π_ref − log π_θ = −ln 2.
    logprobs = torch.tensor([[LN(0.5)]], requires_grad=True)
    ref = torch.tensor([[LN(0.25)]], requires_grad=True)
    assert close(kl_estimate(logprobs, ref, "k1"), LN(2))  # −log r
    assert close(kl_estimate(logprobs, ref, "k2"), 0.5 * LN(2) ** 2)  # ½ (log r)²
    k3 = kl_estimate(logprobs, ref, "k3")
    assert close(k3, 0.5 + LN(2) - 1)  # r − 1 − log r = 0.5 − 1 + ln 2 = 0.19315
    k3.sum().backward()
    assert close(logprobs.grad, 1 - 0.5)  # d/dlogπ [e^{ref−logπ} + logπ − ref − 1] = 1 − r
    assert ref.grad is None
    assert kl_estimate(logprobs, logprobs.detach(), "k3").item() == 0.0


# --- advantages ----------------------------------------------------------------------------------------------------

# Two groups, interleaved: group 0 rewards [1, 0, 0], group 1 rewards [2, 4].
REWARDS = torch.tensor([1.0, 2.0, 0.0, 4.0, 0.0])
GROUPS = torch.tensor([0, 1, 0, 1, 0])


def test_group_advantages_by_hand() -> None:
    # group 0: mean 1/3, unbiased std = sqrt(((2/3)² + 2·(1/3)²) / 2) = sqrt(1/3) → (2/3)/sqrt(1/3) = 1.1547
    # group 1: mean 3, unbiased std = sqrt((1 + 1) / 1) = sqrt 2 → ∓1/sqrt 2
    a0, a1 = (2 / 3) / math.sqrt(1 / 3), 1 / math.sqrt(2)
    assert close(adv.group_advantages(REWARDS, GROUPS, eps=0.0), [a0, -a1, -a0 / 2, a1, -a0 / 2])
    # eps sits in the denominator: group 1 with eps = 1 → ∓1/(sqrt 2 + 1)
    assert close(
        adv.group_advantages(REWARDS, GROUPS, eps=1.0)[[1, 3]], [-1 / (math.sqrt(2) + 1), 1 / (math.sqrt(2) + 1)]
    )
    # std normalization off: just centred (Dr. GRPO)
    assert close(adv.group_advantages(REWARDS, GROUPS, normalize_std=False), [2 / 3, -1.0, -1 / 3, 1.0, -1 / 3])


def test_advantages_doctest() -> None:
    assert doctest.testmod(adv).failed == 0


def test_degenerate_groups_get_zero_advantage() -> None:
    rewards, groups = torch.tensor([5.0, 0.7, 0.7]), torch.tensor([0, 1, 1])  # a group of one; a flat group
    for normalize_std in (True, False):
        assert torch.equal(adv.group_advantages(rewards, groups, normalize_std=normalize_std), torch.zeros(3))


def test_zero_variance_filter() -> None:
    rewards = torch.tensor([1.0, 1.0, 0.0, 1.0, 0.3, 0.3 + 1e-12, 2.0])
    groups = torch.tensor([0, 0, 1, 1, 2, 2, 3])  # flat, mixed, flat within atol, group of one
    assert adv.nonzero_variance_mask(rewards, groups).tolist() == [False, False, True, True, False, False, False]
    assert adv.nonzero_variance_mask(rewards, groups, atol=2.0).tolist() == [False] * 7


def test_zero_variance_filter_agrees_with_the_contract() -> None:
    task = Task(id="t", env="e", instruction="i")
    step = Step(
        observation=Observation(text="o"),
        prompt_ids=[1],
        response_ids=[2],
        logprobs=[-1.0],
        action="a",
        policy_version=0,
    )

    def group(gid: str, rewards: list[float]) -> TrajectoryGroup:
        trajectories = [
            Trajectory(task=task, steps=[step.model_copy(update={"reward": r})], group_id=gid) for r in rewards
        ]
        return TrajectoryGroup(group_id=gid, task=task, trajectories=trajectories)

    groups = [group("a", [0.0, 1.0]), group("b", [0.5, 0.5]), group("a2", [1.0, 1.0, 0.0])]
    rewards = torch.tensor([r for g in groups for r in g.rewards])
    index = adv.group_index_from_ids([t.group_id for g in groups for t in g.trajectories])
    keep = adv.nonzero_variance_mask(rewards, index)
    assert keep.tolist() == [not g.is_zero_variance() for g in groups for _ in g.trajectories]


def test_group_index_and_token_broadcast_and_truncation() -> None:
    assert adv.group_index_from_ids(["b", "a", "b", "c"]).tolist() == [0, 1, 0, 2]
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]], dtype=torch.bool)
    assert adv.token_advantages(torch.tensor([2.0, -1.0]), mask).tolist() == [[2, 2, 0], [-1, -1, -1]]
    truncated = torch.tensor([False, True])
    assert adv.mask_truncated(mask, truncated).tolist() == [[True, True, False], [False, False, False]]
    assert adv.mask_truncated(mask.float(), truncated).tolist() == [[1, 1, 0], [0, 0, 0]]


# --- GRPO ----------------------------------------------------------------------------------------------------------


def test_grpo_token_mean_by_hand() -> None:
    logprobs = ratio_logprobs(RATIOS)
    result = grpo_loss(logprobs, torch.zeros(2, 3), ADVANTAGES, MASK)  # old = 0 ⇒ r = exp(logprobs)
    result.loss.backward()
    # (−1.2 − 0.5 + 0.8 + 1.5 + 1.0) / 5 = 0.32
    assert close(result.loss, 0.32)
    # d(−A·r)/dlog π = −A·r on unclipped tokens, /5 tokens; clipped tokens and padding get 0
    assert close(logprobs.grad, [[0, -0.5 / 5, 0], [0, 1.5 / 5, 1.0 / 5]])
    stats = result.stats
    assert close(stats["clip_fraction"], 2 / 5) and close(stats["clip_fraction_high"], 1 / 5)
    assert close(stats["clip_fraction_low"], 1 / 5) and close(stats["ratio_mean"], (1.5 + 0.5 + 0.5 + 1.5 + 1) / 5)
    # approx_kl = mean of (r − 1) − log r over the 5 tokens
    expected_kl = sum(r - 1 - LN(r) for r in (1.5, 0.5, 0.5, 1.5, 1.0)) / 5
    assert close(stats["approx_kl"], expected_kl) and stats["tokens"].item() == 5
    assert "kl_ref" not in stats and "entropy" not in stats


def test_grpo_seq_mean_token_mean_by_hand() -> None:
    logprobs = ratio_logprobs(RATIOS)
    result = grpo_loss(logprobs, torch.zeros(2, 3), ADVANTAGES, MASK, aggregation="seq-mean-token-mean")
    result.loss.backward()
    # seq 0: (−1.2 − 0.5)/2 = −0.85; seq 1: (0.8 + 1.5 + 1.0)/3 = 1.1; mean 0.125
    assert close(result.loss, 0.125)
    # seq 0 tokens weigh 1/(2·2), seq 1 tokens 1/(3·2)
    assert close(logprobs.grad, [[0, -0.5 / 4, 0], [0, 1.5 / 6, 1.0 / 6]])


def test_grpo_clip_boundaries() -> None:
    mask = torch.ones(1, 1, dtype=torch.bool)
    # exactly on the boundary (ε = 0, r = 1 exactly): the gradient still flows, −A
    for advantage in (1.0, -1.0):
        logprobs = torch.zeros(1, 1, requires_grad=True)
        grpo_loss(
            logprobs, torch.zeros(1, 1), torch.tensor([advantage]), mask, clip_low=0.0, clip_high=0.0
        ).loss.backward()
        assert close(logprobs.grad, [[-advantage]])
    # just inside / just outside 1 + 0.2 with A = +1, and 1 − 0.2 with A = −1
    for bound, advantage in ((1.2, 1.0), (0.8, -1.0)):
        for nudge, flows in ((-1e-3, advantage > 0), (1e-3, advantage < 0)):
            logprobs = torch.tensor([[LN(bound) + nudge]], requires_grad=True)
            result = grpo_loss(logprobs, torch.zeros(1, 1), torch.tensor([advantage]), mask)
            result.loss.backward()
            ratio = math.exp(LN(bound) + nudge)
            assert close(logprobs.grad, [[-advantage * ratio if flows else 0.0]])
            assert close(result.loss, -advantage * (ratio if flows else bound))
            assert result.stats["clip_fraction"].item() == (0.0 if flows else 1.0)


def test_clip_higher_is_asymmetric() -> None:
    mask = torch.ones(1, 1, dtype=torch.bool)
    logprobs = torch.tensor([[LN(1.25)]], requires_grad=True)
    symmetric = grpo_loss(logprobs, torch.zeros(1, 1), torch.tensor([1.0]), mask, clip_low=0.2, clip_high=0.2)
    assert close(symmetric.loss, -1.2)  # r = 1.25 > 1.2: clipped, constant
    higher = grpo_loss(logprobs, torch.zeros(1, 1), torch.tensor([1.0]), mask, clip_low=0.2, clip_high=0.28)
    higher.loss.backward()
    assert close(higher.loss, -1.25) and close(logprobs.grad, [[-1.25]])  # 1.25 < 1.28: not clipped
    # clip_high does not move the lower bound: A < 0 and r = 0.75 < 0.8 is clipped either way
    low = torch.tensor([[LN(0.75)]])
    assert close(grpo_loss(low, torch.zeros(1, 1), torch.tensor([-1.0]), mask, clip_high=0.28).loss, 0.8)


def test_grpo_kl_off_needs_no_reference() -> None:
    logprobs = ratio_logprobs(RATIOS)
    without = grpo_loss(logprobs, torch.zeros(2, 3), ADVANTAGES, MASK)
    ignored = grpo_loss(logprobs, torch.zeros(2, 3), ADVANTAGES, MASK, ref_logprobs=torch.randn(2, 3))
    assert torch.equal(without.loss, ignored.loss)
    with pytest.raises(ValueError, match="needs ref_logprobs"):
        grpo_loss(logprobs, torch.zeros(2, 3), ADVANTAGES, MASK, kl_coef=0.04)
    assert not LossConfig().needs_reference_model


def test_grpo_k3_term_by_hand_and_reference_gets_no_gradient() -> None:
    # On-policy (old = π_θ) with A = 0: only β·k3 remains. π_θ = 0.5, π_ref = 0.25 on both trained tokens.
    logprobs = torch.full((1, 3), LN(0.5), requires_grad=True)
    ref = torch.full((1, 3), LN(0.25), requires_grad=True)
    mask = torch.tensor([[True, True, False]])
    result = grpo_loss(logprobs, logprobs.detach(), torch.zeros(1), mask, kl_coef=0.1, ref_logprobs=ref)
    result.loss.backward()
    k3 = 0.5 + LN(2) - 1  # see test_kl_estimators_by_hand
    assert close(result.loss, 0.1 * k3) and close(result.stats["kl_ref"], k3)
    assert close(logprobs.grad, [[0.1 * 0.5 / 2, 0.1 * 0.5 / 2, 0.0]])  # β·(1 − r)/N
    assert ref.grad is None


def test_grpo_on_policy_single_step_is_the_plain_policy_gradient() -> None:
    # TRL-0.14 / SEAgent form: old = sg(π_θ) ⇒ r = 1, gradient −A/N on every trained token.
    logprobs = torch.randn(2, 3).requires_grad_()
    grpo_loss(logprobs, logprobs.detach(), ADVANTAGES, MASK).loss.backward()
    assert close(logprobs.grad, [[-1 / 5, -1 / 5, 0], [1 / 5, 1 / 5, 1 / 5]])


def test_grpo_importance_weights_multiply_the_policy_term() -> None:
    logprobs = torch.zeros(2, 3, requires_grad=True)  # on-policy: r = 1, per-token loss −A
    weights = torch.tensor([[2.0, 0.5, 9.0], [1.0, 0.25, 1.0]], requires_grad=True)
    result = grpo_loss(logprobs, torch.zeros(2, 3), ADVANTAGES, MASK, importance_weights=weights)
    result.loss.backward()
    # (−2 − 0.5 + 1 + 0.25 + 1) / 5 = −0.05; the padded 9.0 never counts
    assert close(result.loss, -0.05) and close(result.stats["importance_weight_mean"], (2 + 0.5 + 1 + 0.25 + 1) / 5)
    assert close(logprobs.grad, [[-2 / 5, -0.5 / 5, 0], [1 / 5, 0.25 / 5, 1 / 5]])
    assert weights.grad is None


def test_truncated_importance_weights() -> None:
    current = torch.tensor([[LN(3.0), LN(0.5)]], requires_grad=True)
    weights = truncated_importance_weights(current, torch.zeros(1, 2), cap=2.0)
    assert close(weights, [[2.0, 0.5]]) and not weights.requires_grad  # 3 capped at 2


def test_grpo_masked_tokens_get_zero_gradient_even_with_garbage() -> None:
    logprobs = torch.tensor([[-0.1, float("nan"), float("inf")], [-0.2, -0.3, float("-inf")]], requires_grad=True)
    mask = torch.tensor([[True, False, False], [True, True, False]])
    old = torch.tensor([[-0.1, float("inf"), 0.0], [-0.2, -0.3, float("nan")]])
    ref = torch.tensor([[-0.2, float("nan"), 0.0], [-0.1, -0.1, float("inf")]])
    result = grpo_loss(logprobs, old, ADVANTAGES, mask, kl_coef=0.1, ref_logprobs=ref)
    result.loss.backward()
    assert torch.isfinite(result.loss) and all(torch.isfinite(v) for v in result.stats.values())
    grad = logprobs.grad
    assert grad is not None and torch.isfinite(grad).all()
    assert grad[~mask].eq(0).all() and grad[mask].ne(0).all()


def test_grpo_rollout_advantages_broadcast_and_entropy() -> None:
    logprobs = ratio_logprobs(RATIOS)
    per_token = adv.token_advantages(ADVANTAGES, MASK)
    a = grpo_loss(logprobs, torch.zeros(2, 3), ADVANTAGES, MASK)
    b = grpo_loss(logprobs, torch.zeros(2, 3), per_token, MASK)
    assert torch.equal(a.loss, b.loss)
    uniform = torch.zeros(2, 3, 4)  # four equally likely tokens: entropy ln 4
    assert close(grpo_loss(logprobs, torch.zeros(2, 3), ADVANTAGES, MASK, logits=uniform).stats["entropy"], LN(4))


# --- adversarial imitation (SEAgent) -------------------------------------------------------------------------------


def test_adversarial_imitation_by_hand() -> None:
    # token 0: π_θ/π_ref = 0.5/0.25 = 2 → log(1 + 2) = ln 3; token 1: ratio 1 → ln 2; token 2 masked (garbage)
    logprobs = torch.tensor([[LN(0.5), LN(0.3), float("nan")]], requires_grad=True)
    ref = torch.tensor([[LN(0.25), LN(0.3), 5.0]], requires_grad=True)
    mask = torch.tensor([[True, True, False]])
    result = adversarial_imitation_loss(logprobs, ref, mask, gamma=0.2)
    result.loss.backward()
    assert close(result.loss, 0.2 * (LN(3) + LN(2)) / 2)  # γ · mean_t log(1 + π_θ/π_ref) = 0.1·ln 6
    # d/dlog π_θ = γ·σ(x)/N: σ(ln 2) = 2/3, σ(0) = 1/2; positive, so a descent step lowers π_θ(a_F)
    assert close(logprobs.grad, [[0.2 * (2 / 3) / 2, 0.2 * 0.5 / 2, 0.0]])
    assert ref.grad is None
    assert close(result.stats["log_ratio_ref"], LN(2) / 2)


def test_adversarial_imitation_beta_and_descent_direction() -> None:
    mask = torch.ones(1, 1, dtype=torch.bool)
    ref = torch.tensor([[LN(0.25)]])
    # β = 2 inside the sigmoid: softplus(2·ln 2) = ln(1 + 4) = ln 5
    assert close(adversarial_imitation_loss(torch.tensor([[LN(0.5)]]), ref, mask, gamma=1.0, beta=2.0).loss, LN(5))
    logits = torch.tensor([[[0.0, 0.0]]], requires_grad=True)  # π_θ(a_F = token 0) = 0.5
    before = token_logprobs(logits, torch.tensor([[0]]))
    adversarial_imitation_loss(before, ref, mask).loss.backward()
    assert logits.grad is not None
    with torch.no_grad():
        after = token_logprobs(logits - 1.0 * logits.grad, torch.tensor([[0]]))
    assert after.item() < before.item()


# --- SFT -----------------------------------------------------------------------------------------------------------


def test_sft_by_hand() -> None:
    # logits [0, ln 3] → softmax [1/4, 3/4]; target 1 costs ln(4/3), target 0 costs ln 4; third token masked
    logits = torch.tensor([[[0.0, LN(3)], [0.0, LN(3)], [float("nan"), 0.0]]], requires_grad=True)
    targets = torch.tensor([[1, 0, -100]])
    mask = targets != -100
    result = sft_loss(logits, targets, mask)
    result.loss.backward()
    assert close(result.loss, (LN(4 / 3) + LN(4)) / 2)
    # ∂/∂logits = (softmax − onehot)/N
    assert close(logits.grad, [[[0.25 / 2, -0.25 / 2], [-0.75 / 2, 0.75 / 2], [0.0, 0.0]]])
    assert close(result.stats["token_accuracy"], 0.5)  # argmax is token 1 at both positions
    clean = logits.detach()[:, :2]
    assert close(result.loss, F.cross_entropy(clean.flatten(0, 1), targets[:, :2].flatten()).item())


# --- log-probabilities from logits ---------------------------------------------------------------------------------


def test_token_logprobs_and_entropy() -> None:
    logits = torch.tensor([[[0.0, LN(3)], [2.0, 2.0]]])
    assert close(token_logprobs(logits, torch.tensor([[1, 0]])), [[LN(0.75), LN(0.5)]])
    # temperature 2: logits [0, ln 3]/2 → softmax ∝ [1, √3]
    assert close(
        token_logprobs(logits, torch.tensor([[1, 0]]), temperature=2.0)[0, 0], LN(math.sqrt(3) / (1 + math.sqrt(3)))
    )
    assert close(entropy_from_logits(logits), [[-(0.25 * LN(0.25) + 0.75 * LN(0.75)), LN(2)]])


# --- config and registry -------------------------------------------------------------------------------------------


def test_loss_config_records_every_knob() -> None:
    config = LossConfig(
        terms=[{"name": "grpo", "clip_high": 0.28}, {"name": "kl", "coef": 0.04}], aggregation="seq-mean-token-mean"
    )
    assert config.needs_reference_model and not LossConfig().needs_reference_model
    assert LossConfig(terms=[{"name": "grpo"}, {"name": "adversarial_imitation"}]).needs_reference_model
    assert LossConfig.model_validate_json(config.model_dump_json()) == config
    with pytest.raises(ValidationError, match="clip_low"):
        LossConfig(terms=[{"name": "grpo", "clip_low": 1.0}])
    with pytest.raises(ValidationError, match="did you mean 'grpo'"):
        LossConfig(terms=[{"name": "grp"}])
    with pytest.raises(ValidationError, match="each term may appear once"):
        LossConfig(terms=["grpo", "grpo"])
    with pytest.raises(ValidationError, match="did you mean 'rloo'"):
        LossConfig(advantage="rlo")
    with pytest.raises(ValidationError):
        LossConfig(aggregation="seq-sum")
    with pytest.raises(ValidationError):
        LossConfig(group_size=8)


def test_registries_name_every_loss_term_and_estimator() -> None:
    assert set(LOSSES) == {"grpo", "sft", "adversarial_imitation"}
    assert set(TERMS) == {"grpo", "kl", "adversarial_imitation", "entropy", "sft"}
    assert set(ADVANTAGE_ESTIMATORS) == {"grpo", "drgrpo", "rloo"}


def _inputs(
    logprobs: torch.Tensor, logits: torch.Tensor | None = None, failure: list[bool] | None = None
) -> TermInputs:
    zeros = torch.zeros_like(logprobs)
    return TermInputs(
        logprobs=logprobs,
        proximal=logprobs.detach(),
        logits=logits if logits is not None else torch.zeros(*logprobs.shape, 4),
        response_ids=torch.zeros(logprobs.shape, dtype=torch.long),
        loss_mask=MASK.float(),
        advantages=ADVANTAGES,
        failure=torch.tensor(failure or [False, True]),
        aggregation="token-mean",
        ref_logprobs=zeros,
    )


def test_terms_equal_their_pure_losses_and_cover_their_samples() -> None:
    logprobs = ratio_logprobs(RATIOS)
    inputs = _inputs(logprobs)
    grpo = build_term({"name": "grpo", "clip_high": 0.28})
    expected = grpo_loss(logprobs, logprobs.detach(), ADVANTAGES, MASK, clip_high=0.28, denominator=5.0).loss
    assert close(grpo.loss(inputs, MASK.float(), 5.0).loss, expected.item())
    kl = build_term({"name": "kl", "coef": 0.1})
    plain = grpo_loss(logprobs, logprobs.detach(), ADVANTAGES, MASK).loss
    with_kl = grpo_loss(logprobs, logprobs.detach(), ADVANTAGES, MASK, kl_coef=0.1, ref_logprobs=torch.zeros(2, 3)).loss
    assert close(kl.loss(inputs, MASK.float(), 5.0).loss, (with_kl - plain).item())
    imitation = build_term({"name": "adversarial_imitation", "coef": 0.2})
    assert imitation.covers(ADVANTAGES, torch.tensor([False, True])).tolist() == [False, True]
    assert build_term({"name": "sft"}).covers(ADVANTAGES, torch.tensor([False, False])).tolist() == [True, False]
    # the entropy bonus lowers the loss by coef · H: uniform logits over 4 tokens have H = ln 4
    entropy = build_term({"name": "entropy", "coef": 0.5})
    assert close(entropy.loss(_inputs(logprobs, torch.zeros(2, 3, 4)), MASK.float(), 5.0).loss, -0.5 * LN(4))


def test_rloo_and_drgrpo_by_hand() -> None:
    rewards, groups = torch.tensor([1.0, 0.0, 0.0, 2.0]), torch.tensor([0, 0, 0, 1])
    # RLOO: 1 − mean(0, 0) = 1; 0 − mean(1, 0) = −½ twice; a group of one gets 0
    assert close(ADVANTAGE_ESTIMATORS["rloo"](rewards, groups), [1.0, -0.5, -0.5, 0.0])
    assert close(ADVANTAGE_ESTIMATORS["drgrpo"](rewards, groups), [2 / 3, -1 / 3, -1 / 3, 0.0])
