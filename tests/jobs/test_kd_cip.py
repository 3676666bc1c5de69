"""Tests of the KD-CIP study: interactions, KD losses, CIP, data, teacher cache, config, claim shape (LM path: _lm)."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pandas as pd
import pytest
import torch

from raygent.jobs.kd_cip import data as D
from raygent.jobs.kd_cip import interactions as I
from raygent.jobs.kd_cip.analysis import claim_checks, method_table
from raygent.jobs.kd_cip.cip import CIPSpec, complex_interaction_penalty
from raygent.jobs.kd_cip.distill import distillation_loss, forward_kl, js_divergence, reverse_kl, skew_kl
from raygent.jobs.kd_cip.models import TinyTransformer, TransformerSpec, classifier_reward_fn, log_odds
from raygent.jobs.kd_cip.study import KDCIPParams, KDCIPStudy, _teacher_key
from raygent.jobs.kd_cip.train import cached_model
from raygent.platform.config import load_config
from raygent.platform.session import grid_locally
from raygent.platform.study import TuneStudy

N = 5


def _subset(s: int, t: int) -> bool:
    return s & t == s


def _table_reward(table: torch.Tensor) -> I.RewardFn:
    """A reward function that looks up a fixed (B, 2^n) table by keep-mask."""
    n = int(math.log2(table.shape[-1]))
    weights = 2 ** torch.arange(n)

    def reward(keep: torch.Tensor) -> torch.Tensor:
        return table[:, (keep.long() * weights).sum(dim=1)]

    return reward


# --- interactions ---------------------------------------------------------------------------------------


def test_universal_matching_and_interactions_of_a_random_set_function() -> None:
    v = torch.randn(3, 2**N, dtype=torch.float64)
    i_and = I.and_interactions(v, N)
    for t in range(2**N):
        total = sum(i_and[:, s] for s in range(2**N) if _subset(s, t))
        torch.testing.assert_close(total, v[:, t])
    torch.testing.assert_close(I.zeta(i_and, N), v)


@pytest.mark.parametrize("decomposition", ["and_or_half", "and_or_sparse"])
def test_universal_matching_and_or(decomposition: str) -> None:
    v = torch.randn(4, 2**N, dtype=torch.float64)
    i_and, i_or = I.decompose(v, N, decomposition)  # type: ignore[arg-type]
    assert torch.all(i_or[:, 0] == 0)
    for t in range(2**N):
        total = sum(i_and[:, s] for s in range(2**N) if _subset(s, t))
        total = total + sum(i_or[:, s] for s in range(1, 2**N) if s & t)
        torch.testing.assert_close(total, v[:, t], atol=1e-8, rtol=1e-8)


def test_product_of_two_indicators_has_one_order_two_and_interaction() -> None:
    v = torch.tensor([[float(_subset(0b00101, t)) for t in range(2**N)]])  # v(T) = [0 ∈ T][2 ∈ T]
    i_and = I.and_interactions(v, N)
    expected = torch.zeros_like(v)
    expected[0, 0b00101] = 1.0
    torch.testing.assert_close(i_and, expected)
    assert int(I.orders(N)[0b00101]) == 2


def test_or_function_is_one_or_interaction_after_the_sparse_split() -> None:
    v = torch.tensor([[float(bool(t & 0b00110)) for t in range(2**N)]], dtype=torch.float64)  # [T ∩ {1,2} ≠ ∅]
    assert int((I.and_interactions(v, N).abs() > 1e-9).sum()) == 3  # {1}, {2}, {1,2} as AND terms
    expected = torch.zeros_like(v)
    expected[0, 0b00110] = 1.0
    torch.testing.assert_close(I.or_interactions(v, N), expected)
    i_and, i_or = I.decompose(v, N, "and_or_sparse")
    stats = I.interaction_stats(i_and, i_or, N, tau=0.05)
    assert stats["n_salient"] == 1
    assert i_or[0, 0b00110] == pytest.approx(1.0, abs=1e-3)


def test_sparse_split_recovers_planted_interactions() -> None:
    gen = torch.Generator().manual_seed(0)
    n, batch = 6, 8
    masks = I.all_masks(n)
    subset = (masks.unsqueeze(1) & ~masks.unsqueeze(0)).sum(-1) == 0  # [S, T]: S ⊆ T
    meets = (masks.unsqueeze(1) & masks.unsqueeze(0)).sum(-1) > 0  # [S, T]: S ∩ T ≠ ∅
    i_and, i_or = torch.zeros(batch, 2**n, dtype=torch.float64), torch.zeros(batch, 2**n, dtype=torch.float64)
    for b in range(batch):
        i_and[b, torch.randperm(2**n - 1, generator=gen)[:2] + 1] = 2.0 + torch.rand(
            2, generator=gen, dtype=torch.float64
        )
        i_or[b, torch.randperm(2**n - 1, generator=gen)[:2] + 1] = -2.0 - torch.rand(
            2, generator=gen, dtype=torch.float64
        )
    v = i_and @ subset.double() + i_or @ meets.double()
    found = I.decompose(v, n, "and_or_sparse")
    l1 = (found[0][:, 1:].abs().sum() + found[1].abs().sum()).item()
    assert l1 <= (i_and[:, 1:].abs().sum() + i_or.abs().sum()).item() + 1e-3
    assert I.interaction_stats(*found, n)["n_salient"] <= 4.5  # 4 planted (ADMM may leave a near-tie)
    half = I.decompose(v, n, "and_or_half")
    assert I.interaction_stats(*half, n)["n_salient"] > 4.0


def test_interaction_stats_on_a_known_table() -> None:
    i_and = torch.zeros(1, 2**N)
    i_or = torch.zeros(1, 2**N)
    i_and[0, 0b00011] = 4.0  # order 2
    i_and[0, 0b00111] = 1.0  # order 3
    i_or[0, 0b10000] = 0.1  # order 1, below tau·max
    stats = I.interaction_stats(i_and, i_or, N, tau=0.05, high_order=3)
    assert stats["n_salient"] == 2
    assert stats["high_order_share"] == pytest.approx(1.0 / 5.1)
    assert I.order_profile(i_and, i_or, N)[:3] == pytest.approx([0.1, 4.0, 1.0])


def test_masked_rewards_of_a_model_with_one_conjunction() -> None:
    class Conjunction(torch.nn.Module):
        def forward(self, tokens: torch.Tensor) -> torch.Tensor:
            both = ((tokens[:, 1] != D.BLANK) & (tokens[:, 3] != D.BLANK)).float()
            return torch.stack((torch.zeros_like(both), 3.0 * both - 1.0), dim=1)

    tokens = torch.tensor([[D.CLS, 5, 6, 7, 8, 9]])
    reward = classifier_reward_fn(Conjunction(), tokens, torch.tensor([1]), [1, 2, 3, 4, 5], D.BLANK)
    i_and = I.and_interactions(I.reward_table(reward, 5), 5)
    expected = torch.zeros(1, 32)
    expected[0, 0] = -1.0
    expected[0, 0b00101] = 3.0
    torch.testing.assert_close(i_and, expected)


def test_log_odds_is_the_logit_difference_for_two_classes() -> None:
    logits = torch.tensor([[0.3, 1.5], [2.0, -1.0]])
    torch.testing.assert_close(log_odds(logits, torch.tensor([1, 0])), torch.tensor([1.2, 3.0]))


# --- KD losses ------------------------------------------------------------------------------------------


def test_kd_losses_on_hand_computed_values() -> None:
    teacher = torch.tensor([[0.0, 0.0]])  # p = (1/2, 1/2)
    student = torch.tensor([[math.log(3.0), 0.0]])  # q = (3/4, 1/4)
    forward = 0.5 * math.log(0.5 / 0.75) + 0.5 * math.log(0.5 / 0.25)
    reverse = 0.75 * math.log(0.75 / 0.5) + 0.25 * math.log(0.25 / 0.5)
    m = (0.625, 0.375)
    js = 0.5 * (0.5 * math.log(0.5 / m[0]) + 0.5 * math.log(0.5 / m[1])) + 0.5 * (
        0.75 * math.log(0.75 / m[0]) + 0.25 * math.log(0.25 / m[1])
    )
    mix = (0.1 * 0.5 + 0.9 * 0.75, 0.1 * 0.5 + 0.9 * 0.25)
    skew = 0.5 * math.log(0.5 / mix[0]) + 0.5 * math.log(0.5 / mix[1])
    assert float(forward_kl(student, teacher)) == pytest.approx(forward, rel=1e-5)
    assert float(reverse_kl(student, teacher)) == pytest.approx(reverse, rel=1e-5)
    assert float(js_divergence(student, teacher)) == pytest.approx(js, rel=1e-5)
    assert float(skew_kl(student, teacher, alpha=0.1)) == pytest.approx(skew, rel=1e-5)
    hot = torch.tensor([[2 * math.log(3.0), 0.0]])  # q_T at T = 2 is again (3/4, 1/4)
    assert float(forward_kl(hot, teacher, temperature=2.0)) == pytest.approx(4 * forward, rel=1e-5)
    labels = torch.tensor([1])
    assert float(distillation_loss("ce", student, None, labels)) == pytest.approx(math.log(4.0), rel=1e-5)
    with_hard = distillation_loss("kd", student, teacher, labels, temperature=1.0, hard_weight=0.5)
    assert float(with_hard) == pytest.approx(forward + 0.5 * math.log(4.0), rel=1e-5)
    # float32 rounding of identical distributions, times T² = 4, is a few 1e-7
    for method in ("kd", "rkl", "js", "skl"):
        assert float(distillation_loss(method, teacher, teacher, labels)) == pytest.approx(0.0, abs=1e-6)


# --- CIP ------------------------------------------------------------------------------------------------


def test_cip_is_zero_without_high_order_interactions_and_exact_on_a_table() -> None:
    i_and = torch.zeros(2, 2**N, dtype=torch.float64)
    i_and[:, 0b00011] = 2.0
    i_and[:, 0b01100] = -1.0
    low = _table_reward(I.zeta(i_and, N))
    for estimator in ("full", "sampled"):
        spec = CIPSpec(order=3, estimator=estimator, decomposition="and")  # type: ignore[arg-type]
        assert float(complex_interaction_penalty(low, N, spec)) == pytest.approx(0.0, abs=1e-9)
    i_and[:, 0b10111] = 0.5  # one order-4 term: weight w(4) = 4 − 3 + 1 = 2
    spec = CIPSpec(order=3, estimator="full", decomposition="and")
    assert float(complex_interaction_penalty(_table_reward(I.zeta(i_and, N)), N, spec)) == pytest.approx(1.0)


def test_sampled_cip_is_unbiased_for_the_full_sum() -> None:
    table = torch.randn(3, 2**N, dtype=torch.float64)
    reward = _table_reward(table)
    full = float(complex_interaction_penalty(reward, N, CIPSpec(estimator="full")))
    gen = torch.Generator().manual_seed(0)
    spec = CIPSpec(estimator="sampled", n_subsets=4)
    draws = [float(complex_interaction_penalty(reward, N, spec, gen)) for _ in range(3000)]
    assert sum(draws) / len(draws) == pytest.approx(full, rel=0.05)


@pytest.mark.parametrize("estimator", ["sampled", "full"])
def test_cip_gradient_reaches_the_student_only(estimator: str) -> None:
    torch.manual_seed(0)
    spec = TransformerSpec(vocab_size=12, seq_len=5, d_model=8, n_layers=1, n_heads=2)
    student, teacher = TinyTransformer(spec), TinyTransformer(spec)
    tokens = torch.randint(2, 12, (3, 5))
    tokens[:, 0] = D.CLS
    labels = torch.tensor([0, 1, 1])
    players = [1, 2, 3, 4]
    cip = CIPSpec(order=3, estimator=estimator, n_subsets=2, target="teacher")  # type: ignore[arg-type]
    penalty = complex_interaction_penalty(
        classifier_reward_fn(student, tokens, labels, players, D.BLANK),
        4,
        cip,
        torch.Generator().manual_seed(1),
        classifier_reward_fn(teacher, tokens, labels, players, D.BLANK),
    )
    penalty.backward()
    assert all(p.grad is None for p in teacher.parameters())
    assert sum(float(p.grad.abs().sum()) for p in student.parameters() if p.grad is not None) > 0


# --- data and cache -------------------------------------------------------------------------------------


def test_rule_logit_and_parity_pattern() -> None:
    spec = D.TaskSpec(rule_strength=4.0, spurious_rate=0.9, block_size=3)
    g, h = spec.groups()
    in_g = int(torch.nonzero(g)[0])
    out_g = int(torch.nonzero(~g[2 : spec.n_words + 2])[0]) + 2
    words = torch.tensor([[in_g, in_g, out_g, in_g, 2, 0, 0, 0], [D.BLANK, in_g, in_g, out_g, 2, 0, 0, 0]])
    torch.testing.assert_close(D.rule_logit(words, spec), torch.tensor([2.0, -2.0]))
    train, ood = D.sample(20000, spec, seed=1), D.sample(20000, spec, seed=2, ood=True)
    for split, gap in ((train, 0.8), (ood, 0.0)):
        block = split.tokens[:, [p + 1 for p in spec.block]]
        full = (block != D.BLANK).all(dim=1)
        even = D.parity(block, spec)
        rates = [float(even[full & (split.labels == y)].float().mean()) for y in (0, 1)]
        assert rates[1] - rates[0] == pytest.approx(gap, abs=0.03)
        for column in range(spec.block_size):  # single block words carry no label information
            bits = h[block[:, column]]
            marg = [float(bits[full & (split.labels == y)].float().mean()) for y in (0, 1)]
            assert marg[0] == pytest.approx(marg[1], abs=0.03)


def test_teacher_cache_round_trip(tmp_path: Path) -> None:
    calls = []

    def build() -> torch.nn.Module:
        torch.manual_seed(0)
        return torch.nn.Linear(3, 2)

    def fit(model: torch.nn.Module) -> None:
        calls.append(1)
        with torch.no_grad():
            model.weight.add_(1.0)

    first, cached_first = cached_model("abc", build, fit, tmp_path)
    second, cached_second = cached_model("abc", build, fit, tmp_path)
    assert (cached_first, cached_second, len(calls)) == (False, True, 1)
    torch.testing.assert_close(first.weight, second.weight)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["teacher_abc.lock", "teacher_abc.pt"]


def test_teacher_seed_shares_one_teacher_across_trial_seeds() -> None:
    own = [_teacher_key(KDCIPParams(seed=s)) for s in (0, 1)]
    shared = [_teacher_key(KDCIPParams(seed=s, teacher_seed=1, method="rkl", cip_weight=0.1)) for s in (0, 3)]
    assert own[0] != own[1]
    assert shared[0] == shared[1] == own[1]


# --- analysis -------------------------------------------------------------------------------------------


def test_claim_checks_on_a_synthetic_table() -> None:
    rows = []
    for method, weight, seed in itertools.product(["ce", "kd"], [0.0, 0.1], [0, 1]):
        cip = weight > 0
        rows.append(
            {
                "trial_id": f"{method}{weight}{seed}",
                "status": "TERMINATED",
                "method": method,
                "cip_weight": weight,
                "seed": seed,
                "n_salient": (30.0 if method == "ce" else 10.0) - 5 * cip,
                "high_order_mass": 0.5 - 0.3 * cip,
                "ood_acc": 0.7 + 0.1 * cip,
                "id_acc": 0.9,
            }
        )
    results = pd.DataFrame(rows)
    checks, evidence = claim_checks(method_table(results))
    assert checks == {"kd_sparser_than_ce": True, "cip_lowers_high_order": True, "cip_raises_ood": True}
    assert len(evidence["rows"]) == 4
    results.loc[(results["method"] == "kd") & (results["cip_weight"] > 0), "ood_acc"] = 0.6
    assert not claim_checks(method_table(results))[0]["cip_raises_ood"]


@pytest.mark.parametrize("decomposition", ["and_or", "and"])
def test_sampled_subset_interactions_match_the_full_decomposition(decomposition: str) -> None:
    from raygent.jobs.kd_cip.cip import _subset_interactions, complex_subsets

    table = torch.randn(2, 2**N, dtype=torch.float64)
    subsets = complex_subsets(N, 2).tolist()
    got = _subset_interactions(_table_reward(table), N, subsets, CIPSpec(decomposition=decomposition))  # type: ignore[arg-type]
    i_and, i_or = I.decompose(table, N, "and" if decomposition == "and" else "and_or_half")
    torch.testing.assert_close(got[0], i_and[:, subsets])
    torch.testing.assert_close(got[1], i_or[:, subsets])


def test_config_validates() -> None:
    config = load_config("kd_cip")
    assert config.entry == "raygent.jobs.kd_cip.study:KDCIPStudy"
    space = config.sweep.space
    assert set(space) == {"method", "cip_weight", "seed"}
    assert "ce" in space["method"].values and 0.0 in space["cip_weight"].values  # type: ignore[operator]
    assert any(w > 0 for w in space["cip_weight"].values or []) and len(space["seed"].values or []) >= 3
    assert isinstance(KDCIPStudy(), TuneStudy)


# --- the claim's shape on a reduced grid --------------------------------------------------------------------

CLAIM_SEEDS = [0, 1]
CLAIM_OVERRIDES = {
    "teacher_seed": 0,  # one teacher (trained once, cold cache) distilled into students of every seed
    "n_test": 1000,
    "n_interaction_samples": 32,
}


@pytest.mark.slow
def test_claim_shape_on_a_reduced_grid(tmp_path: Path) -> None:
    """The YAML's task, models and CIP with one shared teacher; CE at λ = 0 and forward-KL KD at λ ∈ {0, 0.03}
    over student seeds: KD is sparser than CE, and CIP lowers the order ≥ 3 share and raises OOD accuracy."""
    study = KDCIPStudy()
    fixed = {**load_config("kd_cip").study.model_dump(), **CLAIM_OVERRIDES, "teacher_cache_dir": str(tmp_path)}
    ce = grid_locally(study, fixed, {"seed": CLAIM_SEEDS, "method": ["ce"], "cip_weight": [0.0]})
    kd = grid_locally(study, fixed, {"seed": CLAIM_SEEDS, "method": ["kd"], "cip_weight": [0.0, 0.03]})
    results = pd.concat([ce, kd], ignore_index=True)
    assert (results["status"] == "TERMINATED").all()
    verdict = study.analyze(results)
    assert verdict.checks == {"kd_sparser_than_ce": True, "cip_lowers_high_order": True, "cip_raises_ood": True}
    assert verdict.holds
    json.dumps(verdict.evidence)  # plain, serialisable numbers
    study.plot(results, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 0
