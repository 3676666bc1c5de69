"""ReasonAug without Ray: MAGR's gate and shaping, the reward model's closed loop (pool, retraining rounds, restart
from its saved state), the selective entropy term, the ReID metrics, and config errors that name the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from raygent.environments.reasonaug import (
    AugmentationEnv,
    WorldSizes,
    corpus,
    format_instruction,
    heuristic_instruction,
    reasonaug_tasks,
)
from raygent.environments.reasonaug.data import build_arrays, write_arrays
from raygent.jobs.reasonaug.entropy import CLASSES, SelectiveEntropy, classify
from raygent.jobs.reasonaug.recipe import ReasonAugRunConfig, prepare_reid, with_variant
from raygent.platform.config import ConfigError, load_config
from raygent.platform.contracts import Observation, Step, Trajectory
from raygent.platform.rl.initial import agent_sections
from raygent.rewards.reasonaug.magr import MAGR, MAGRSettings, magr_scores, read_jsonl
from raygent.rewards.reasonaug.reid import ReIDSettings, average_precision, batch_hard_triplet

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _unit(v: list[float]) -> torch.Tensor:
    t = torch.tensor(v, dtype=torch.float32)
    return t / t.norm()


def test_the_gate_pays_hardness_only_for_edits_that_keep_the_identity() -> None:
    # two edits of anchors of identity 0, equally far from their anchor under f; the reference says the first
    # keeps the identity (cos 0.99) and the second does not (cos 0.5)
    f_x = torch.stack([_unit([1, 0, 0]), _unit([1, 0, 0])])
    f_xp = torch.stack([_unit([0.6, 0.8, 0]), _unit([0.6, 0.8, 0])])
    r_x = torch.stack([_unit([1, 0]), _unit([1, 0])])
    r_xp = torch.stack([_unit([0.99, (1 - 0.99**2) ** 0.5]), _unit([0.5, 0.75**0.5])])
    real_f = torch.stack([_unit([1, 0, 0]), _unit([0.95, 0.31, 0]), _unit([0, 0, 1])])
    real_y = np.array([0, 0, 1])
    labels = np.array([0, 0])
    hard = magr_scores(f_x, f_xp, r_x, r_xp, labels, real_f, real_y, MAGRSettings(tau=0.9, lambda_neg=0.0))
    assert hard["accepted"].tolist() == [True, False] and hard["gate"].tolist() == [1.0, 0.0]
    d_pos = float(torch.linalg.norm(real_f[1] - f_x[0]))
    assert hard["hard"][0] == pytest.approx(float(torch.linalg.norm(f_x[0] - f_xp[0])) - d_pos, abs=1e-5)
    assert hard["score"][0] == pytest.approx(0.5 * 0.99 + hard["hard"][0], abs=1e-4)
    assert hard["score"][1] == pytest.approx(0.5 * 0.5, abs=1e-4)  # no hardness without the gate
    off = magr_scores(f_x, f_xp, r_x, r_xp, labels, real_f, real_y, MAGRSettings(tau=0.9, gate="off", lambda_neg=0))
    assert off["accepted"].all() and off["score"][1] == pytest.approx(0.25 + off["hard"][1], abs=1e-4)
    soft = magr_scores(f_x, f_xp, r_x, r_xp, labels, real_f, real_y, MAGRSettings(tau=0.9, gate="soft"))
    assert 0.5 < soft["gate"][0] < 1.0 and soft["gate"][1] < 1e-6
    none = magr_scores(f_x, f_xp, r_x, r_xp, labels, real_f, real_y, MAGRSettings(accept="none"))
    assert not none["accepted"].any()
    # an edit that lands on another identity's view is penalised by the negative term
    near_neg = magr_scores(
        f_x[:1], real_f[2:3], r_x[:1], r_x[:1], labels[:1], real_f, real_y, MAGRSettings(lambda_neg=0.5, margin=0.1)
    )
    assert near_neg["neg"][0] < -0.5


def _trajectory(task: Any, text: str, index: int) -> Trajectory:
    env = AugmentationEnv()
    env.reset(options={"task": task})
    _, _, _, _, info = env.step(text)
    plain = {k: v for k, v in info.items() if isinstance(v, str | int | float | bool)}
    step = Step(
        observation=Observation(text="x"),
        prompt_ids=[1],
        response_ids=[2],
        logprobs=[0.0],
        action=text,
        info=plain,
        policy_version=0,
    )
    return Trajectory(task=task, steps=[step], policy_version=0, group_id=f"g{index}")


def test_the_reward_model_pools_accepted_edits_retrains_every_k_calls_and_resumes(tmp_path: Path) -> None:
    torch.set_num_threads(1)
    sizes = WorldSizes(train_ids=10, views_per_id=3, test_ids=6, queries_per_id=1, gallery_per_id=3)
    arrays = build_arrays(0, sizes, judge_per_id=2)
    write_arrays(tmp_path / "data.npz", arrays)
    reid = ReIDSettings(width=4, embed=8, pretrain_steps=5, judge_steps=5, round_steps=3, threads=1)
    round0 = prepare_reid(tmp_path / "reid", arrays, reid, 0, "test", cache=False)
    assert 0.0 <= round0["map"] <= 1.0 and "judge" in round0
    kwargs = {
        "data": str(tmp_path / "data.npz"),
        "state_dir": str(tmp_path / "reid"),
        "reid": reid.model_dump(),
        "retrain_every": 2,
        "tau": -1.0,
    }
    model = MAGR(**kwargs)
    tasks = reasonaug_tasks("train", 0, 3, train_ids=10, views_per_id=3, test_ids=6, queries_per_id=1, gallery_per_id=3)
    rng = np.random.default_rng(0)
    batch = [_trajectory(t, heuristic_instruction(t, rng), i) for i, t in enumerate(tasks[:2])]
    batch.append(_trajectory(tasks[2], "top red", 2))
    first = model.judge(batch)
    assert [j.success for j in first] == [True, True, False] and first[2].score == -1.0
    assert len(model.pool_x) == 2 and read_jsonl(tmp_path / "reid" / "reid.jsonl") == []
    before = {k: v.clone() for k, v in model.model.state_dict().items()}
    model.judge(batch)
    rounds = read_jsonl(tmp_path / "reid" / "reid.jsonl")
    assert len(rounds) == 1 and rounds[0]["pool"] == 4 and 0.0 <= rounds[0]["map"] <= 1.0
    assert any(not torch.equal(before[k], v) for k, v in model.model.state_dict().items())  # f was retrained
    calls = read_jsonl(tmp_path / "reid" / "magr.jsonl")
    assert [c["call"] for c in calls] == [1, 2] and calls[0]["valid"] == pytest.approx(2 / 3)
    restarted = MAGR(**kwargs)  # what Ray's restart builds: the loop's saved state, not round 0
    assert restarted.restored and restarted.calls == 2 and restarted.rounds == 1 and len(restarted.pool_x) == 4
    for key, value in model.model.state_dict().items():
        assert torch.equal(value, restarted.model.state_dict()[key])
    with pytest.raises(ValueError, match="data and state_dir"):
        MAGR(tau=0.5)


def test_batch_hard_triplet_and_average_precision() -> None:
    features = torch.stack([_unit([1, 0]), _unit([0.9, 0.1]), _unit([0, 1]), _unit([0.1, 0.9])])
    good = batch_hard_triplet(features, torch.tensor([0, 0, 1, 1]), 0.3)
    bad = batch_hard_triplet(features, torch.tensor([0, 1, 0, 1]), 0.3)
    assert good.item() == 0.0 and bad.item() > 0.5
    assert average_precision(np.array([1, 0, 1])) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision(np.array([0, 0])) == 0.0


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    from raygent.policies.tokenizer import build_tokenizer

    directory = tmp_path_factory.mktemp("tok")
    build_tokenizer(corpus(200, 0), directory, vocab_size=384)
    return str(directory)


def test_selective_entropy_finds_the_slots_and_locks_identity_while_exploring_nuisances(tokenizer_dir: str) -> None:
    from transformers import AutoTokenizer

    from raygent.platform.losses.terms import build_term

    assert classify(["bg", " street", ";", " top", " re", "d", ";", " occ", " left", ""]) == [
        0,
        1,
        0,
        0,
        2,
        2,
        0,
        0,
        3,
        0,
    ]
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    text = format_instruction(
        {"bg": "park", "light": "low", "top": "red", "bottom": "blue", "item": "bag", "occ": "left", "shift": "none"}
    )
    ids = torch.tensor([tokenizer(text, add_special_tokens=False)["input_ids"]])
    term = build_term(
        {
            "name": "raygent.jobs.reasonaug.entropy:SelectiveEntropy",
            "tokenizer": tokenizer_dir,
            "beta_identity": -0.5,
            "beta_nuisance": 0.5,
            "beta_global": 0.0,
        }
    )
    assert isinstance(term, SelectiveEntropy)
    classes = term.token_classes(ids)[0].tolist()
    decoded = [tokenizer.decode([i]) for i in ids[0].tolist()]
    words = {
        CLASSES[c]: "".join(p for p, k in zip(decoded, classes, strict=True) if k == CLASSES.index(CLASSES[c]))
        for c in range(1, 4)
    }
    assert words["identity"].split() == ["red", "blue", "bag"]
    assert words["nuisance"].split() == ["left", "none"] and words["global"].split() == ["park", "low"]

    from raygent.platform.losses.terms import TermInputs

    torch.manual_seed(0)
    logits = torch.randn(1, ids.shape[1], 32, requires_grad=True)
    mask = torch.ones_like(ids, dtype=torch.float32)

    def inputs() -> TermInputs:
        logp = torch.log_softmax(logits, -1)
        chosen = logp.gather(-1, (ids % 32).unsqueeze(-1)).squeeze(-1)
        return TermInputs(
            logprobs=chosen,
            proximal=chosen.detach(),
            logits=logits,
            response_ids=ids,
            loss_mask=mask,
            advantages=torch.zeros(1),
            failure=torch.zeros(1, dtype=torch.bool),
            aggregation="token-mean",
        )

    first = term.loss(inputs(), mask, float(mask.sum()))
    optimizer = torch.optim.SGD([logits], lr=5.0)
    for _ in range(20):
        optimizer.zero_grad()
        term.loss(inputs(), mask, float(mask.sum())).loss.backward()
        optimizer.step()
    last = term.loss(inputs(), mask, float(mask.sum()))
    assert last.stats["entropy_identity"] < first.stats["entropy_identity"] - 0.5  # locked
    assert last.stats["entropy_nuisance"] > first.stats["entropy_nuisance"]  # explored
    other = torch.tensor(classes) == 0
    assert logits.grad is not None and logits.grad[0, other].abs().max() == 0.0  # keys and separators untouched
    with pytest.raises(ValueError, match="tokenizer"):
        SelectiveEntropy().token_classes(ids)


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("reward.kwargs.tua=0.5", "kwargs.tua"),
        ("reward.kwargs.tau=2", "kwargs.tau"),
        ("reward.kwargs.reid.round_stepz=3", "round_stepz"),
        ("reward.num_actors=2", "num_actors"),
        ("env.task_kwargs.recolor=0.2", "task_kwargs.recolor"),
        ("env.task_kwargs.train_ids=0", "task_kwargs.train_ids"),
        ("env.task_kwargs.recolour=1.5", "task_kwargs.recolour: got 1.5"),
        ("env.task_kwargs.world_seed=-1", "task_kwargs.world_seed"),
        ("env.kwargs.instruction=always", "kwargs.instruction"),
        ("reasonaug.variant=gateless", "reasonaug.variant"),
        (
            "learner.loss.terms=[{name: 'raygent.jobs.reasonaug.entropy:SelectiveEntropy', beta_idnetity: 1}]",
            "beta_idnetity",
        ),
    ],
)
def test_a_bad_reasonaug_config_names_the_key(override: str, key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config("reasonaug", [override])


def test_each_variant_is_one_switch_of_the_same_loop(tmp_path: Path) -> None:
    def sections(variant: str) -> ReasonAugRunConfig:
        config = load_config("reasonaug", [f"reasonaug.variant={variant}"])
        return with_variant(agent_sections(config, ReasonAugRunConfig), tmp_path / "d.npz", tmp_path / "s")

    closed, nogate, open_, random, none = (sections(v) for v in ("closed", "nogate", "open", "random", "none"))
    assert closed.reward is not None and closed.reward.kwargs["gate"] == "hard"
    assert closed.reward.kwargs["state_dir"] == str(tmp_path / "s")
    assert nogate.reward is not None and nogate.reward.kwargs["gate"] == "off"
    assert all(t.get("coef", 1.0) > 0 for t in (*closed.learner.loss.terms, *nogate.learner.loss.terms))
    for frozen in (open_, random, none):
        assert all(t["coef"] == 0.0 for t in frozen.learner.loss.terms)
    assert random.env.kwargs["instruction"] == "random" and open_.env.kwargs["instruction"] == "policy"
    assert none.reward is not None and none.reward.kwargs["accept"] == "none"
