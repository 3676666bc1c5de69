"""NeUQI study: quantizer unit tests, tiny-LM save/load and cache, config, and the claim's shape."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import torch

from raygent.jobs.neuqi import lm
from raygent.jobs.neuqi.corpus import build_tokenizer, generate_text
from raygent.jobs.neuqi.matrix import init_errors, synthetic_layer
from raygent.jobs.neuqi.quantize import (
    INITS,
    alternating_zero,
    fake_quantize,
    grid_init,
    hessian_diag,
    init_params,
    levels,
    loss,
    minmax_init,
    neuqi_init,
    optimal_zero,
    to_groups,
)
from raygent.jobs.neuqi.study import NeuqiStudy
from raygent.platform.config import load_config
from raygent.platform.session import grid_locally

torch.set_num_threads(1)


def _objective(u: torch.Tensor, h: torch.Tensor, z: torch.Tensor, bits: int) -> torch.Tensor:
    """Σ h (u + z - clamp(round(u + z), 0, Q))² for u, h [R, n] and z [R, 1] or [R, K] → [R] or [R, K]."""
    if z.shape[1] == 1:
        return (h * (u + z - torch.clamp(torch.round(u + z), 0, levels(bits))) ** 2).sum(-1)
    shifted = u[:, None, :] + z[:, :, None]
    return (h[:, None, :] * (shifted - torch.clamp(torch.round(shifted), 0, levels(bits))) ** 2).sum(-1)


def test_minmax_hand_example() -> None:
    w = torch.tensor([[-1.0, 0.0, 2.0]])
    scale, zero = minmax_init(w, bits=2)
    assert scale.item() == pytest.approx(1.0) and zero.item() == 1.0
    assert torch.equal(fake_quantize(w, scale, zero, 2), w)


def test_hessian_diag_and_groups() -> None:
    x = torch.tensor([[1.0, 2.0], [3.0, 0.0]])
    assert torch.allclose(hessian_diag(x), torch.tensor([5.0, 2.0], dtype=torch.float64))
    w_rows, h_rows = to_groups(torch.arange(8.0).view(2, 4), torch.tensor([1.0, 2.0, 3.0, 4.0]), group_size=2)
    assert w_rows.tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert h_rows.tolist() == [[1, 2], [3, 4], [1, 2], [3, 4]]


def test_optimal_zero_hand_example() -> None:
    # u = [1, 1.5], h = [3, 1]: on the piece with codes [1, 2], L = 3z² + (z - ½)², minimised at z = 1/8
    # with L = 3/16; the piece with codes [1, 1] mirrors it at z = -1/8, and integer shifts that keep both
    # codes in [0, 3] repeat both. The heavier element gets the smaller residual (1/8 against 3/8).
    u = torch.tensor([[1.0, 1.5]], dtype=torch.float64)
    h = torch.tensor([[3.0, 1.0]], dtype=torch.float64)
    z = optimal_zero(u, h, bits=2)
    assert min(z.item() % 1, 1 - z.item() % 1) == pytest.approx(0.125)
    assert _objective(u, h, z, 2).item() == pytest.approx(3 / 16)


@pytest.mark.parametrize("bits", [1, 2, 3, 4])
def test_optimal_zero_matches_dense_search(bits: int) -> None:
    generator = torch.Generator().manual_seed(bits)
    u = torch.randn(40, 9, generator=generator, dtype=torch.float64) * 2.5 + levels(bits) / 2
    u[:4] *= 4  # rows with heavy clamping
    h = torch.rand(40, 9, generator=generator, dtype=torch.float64) ** 2
    z = optimal_zero(u, h, bits)
    low, high = -u.max().item() - 2, levels(bits) - u.min().item() + 2  # outside: every code is clamped
    grid = torch.linspace(low, high, 20_001, dtype=torch.float64).expand(40, -1)
    dense = _objective(u, h, grid, bits).min(dim=1).values
    exact = _objective(u, h, z, bits)
    assert torch.all(exact <= dense + 1e-9)  # never worse than any point of a fine dense search
    assert torch.all(exact >= dense - 1e-3 * h.sum(-1))  # and the dense search gets within its resolution


def test_float_zero_beats_rounded_and_alternating_at_same_scale() -> None:
    weight, h = synthetic_layer(seed=3, rows=32, cols=64)
    w_rows, h_rows = to_groups(weight, h, 0)
    for bits in (2, 3, 4):
        scale, zero = neuqi_init(w_rows, h_rows, bits, coarse=(0.1, 1.2, 12), fine_points=6)
        best = loss(w_rows, h_rows, scale, zero, bits)
        assert torch.all(best <= loss(w_rows, h_rows, scale, torch.round(zero), bits) + 1e-6)
        integers = torch.stack([loss(w_rows, h_rows, scale, zero.round() + k, bits) for k in range(-3, 4)])
        assert torch.all(best <= integers.min(0).values + 1e-6)
        assert best.sum() < integers.min(0).values.sum()  # strictly better overall
        alt = alternating_zero(w_rows.double() / scale.double(), h_rows, bits).float()
        assert torch.all(best <= loss(w_rows, h_rows, scale, alt, bits) + 1e-5)


@pytest.mark.parametrize("init", INITS)
def test_dequantized_values_lie_on_the_grid(init: str) -> None:
    weight, h = synthetic_layer(seed=1, rows=16, cols=64)
    w_rows, h_rows = to_groups(weight.double(), h.double(), 32)
    for bits in (2, 4):
        scale, zero = init_params(init, w_rows, h_rows, bits)  # type: ignore[arg-type]
        codes = fake_quantize(w_rows, scale, zero, bits) / scale + zero
        assert torch.allclose(codes, codes.round(), atol=1e-6)
        assert codes.min() >= -1e-6 and codes.max() <= levels(bits) + 1e-6
        if init != "neuqi":
            assert torch.equal(zero, zero.round())


@pytest.mark.parametrize("seed", [0, 1])
def test_weighted_error_ordering_on_random_matrices(seed: int) -> None:
    weight, h = synthetic_layer(seed=seed, rows=32, cols=128)
    w_rows, h_rows = to_groups(weight, h, 0)
    for bits in (2, 3, 4):
        per_row = {
            init: loss(w_rows, h_rows, *init_params(init, w_rows, h_rows, bits), bits)  # type: ignore[arg-type]
            for init in INITS
        }
        assert per_row["neuqi"].sum() < per_row["grid"].sum() < per_row["minmax"].sum()
        assert torch.all(per_row["grid"] <= per_row["minmax"] + 1e-6)  # p = 1 is Min-Max with 0 in range
        assert (per_row["neuqi"] <= per_row["grid"]).float().mean() >= 0.9


def test_init_errors_reports_the_float_zero_gain() -> None:
    weight, h = synthetic_layer(seed=2, rows=16, cols=64)
    errors = init_errors(weight, h, bits=3)
    assert errors["neuqi"] < errors["neuqi_round_z"] and errors["neuqi"] < errors["grid"] < errors["minmax"] < 1


def test_grid_init_contains_minmax_when_range_straddles_zero() -> None:
    w = torch.tensor([[-1.0, 0.2, 2.0, 0.7]])
    scale, zero = grid_init(w, torch.ones_like(w), bits=2, points=1, max_shrink=1.0)
    assert scale.item() == pytest.approx(1.0) and zero.item() == 1.0


def _tiny_spec(seed: int = 0, steps: int = 3) -> lm.TinyLMSpec:
    return lm.TinyLMSpec(
        hidden_size=32,
        num_layers=1,
        num_heads=2,
        intermediate_size=64,
        seq_len=16,
        train_words=2000,
        train_steps=steps,
        batch_size=4,
        seed=seed,
    )


def test_tiny_lm_save_load_round_trip(tmp_path: Path) -> None:
    spec = _tiny_spec()
    losses = lm.train_tiny_lm(spec, tmp_path)
    assert len(losses) == spec.train_steps
    model, tokenizer = lm.load_lm(tmp_path)
    reference = build_tokenizer()
    text = generate_text(5, 40)
    assert tokenizer(text)["input_ids"] == reference(text)["input_ids"]
    blocks = lm.token_blocks(tokenizer, text, spec.seq_len)
    again, _ = lm.load_lm(tmp_path)
    with torch.no_grad():
        assert torch.equal(model(input_ids=blocks).logits, again(input_ids=blocks).logits)
    assert 1.0 < lm.perplexity(model, blocks) < 2 * len(tokenizer)


def test_cache_trains_once_under_concurrent_trials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = lm.train_tiny_lm

    def counting(spec: lm.TinyLMSpec, out_dir: Path) -> list[float]:
        calls.append(spec.seed)
        return real(spec, out_dir)

    monkeypatch.setattr(lm, "train_tiny_lm", counting)
    paths: list[Path] = []
    threads = [
        threading.Thread(target=lambda: paths.append(lm.cached_tiny_lm(_tiny_spec(), tmp_path))) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [0] and len(set(paths)) == 1
    assert (paths[0] / "model.safetensors").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary directory left
    assert lm.cached_tiny_lm(_tiny_spec(seed=1), tmp_path) != paths[0] and calls == [0, 1]


def test_config_validates() -> None:
    config = load_config("neuqi")
    assert config.entry.endswith(":NeuqiStudy")
    assert set(config.sweep.space) == {"bits", "seed"}
    assert config.sweep.space["bits"].grid == [2, 3, 4] and len(config.sweep.space["seed"].grid or []) >= 3


def test_paper_scale_requires_a_local_model() -> None:
    with pytest.raises(ValueError, match="model_path"):
        NeuqiStudy.params_model.model_validate({"scale": "paper"})


REDUCED = {
    "matrix_rows": 32,
    "matrix_cols": 128,
    "coarse_points": 16,
    "fine_points": 8,
    "grid_points": 50,
    "hidden_size": 64,
    "num_layers": 2,
    "num_heads": 4,
    "intermediate_size": 128,
    "seq_len": 32,
    "train_words": 30_000,
    "train_steps": 400,
    "lr": 5e-3,
    "batch_size": 16,
    "calib_sequences": 32,
    "eval_sequences": 96,
}


@pytest.mark.slow  # a reduced sweep: in `make test`, not in the edit loop
def test_claim_shape_on_reduced_grid(tmp_path: Path) -> None:
    study = NeuqiStudy()
    results = grid_locally(study, {**REDUCED, "cache_dir": str(tmp_path)}, {"seed": [0, 1, 2], "bits": [2, 3, 4]})
    assert (results["status"] == "TERMINATED").all() and len(results) == 9
    verdict = study.analyze(results)
    assert set(verdict.checks) == {
        "err_order_2bit",
        "err_order_3bit",
        "err_order_4bit",
        "ppl_neuqi_le_minmax_2bit",
        "ppl_neuqi_le_minmax_3bit",
    }
    assert verdict.holds, verdict.checks
    errors = [verdict.evidence[f"{bits}bit"]["err"]["neuqi"] for bits in (2, 3, 4)]
    assert errors[0] > errors[1] > errors[2]  # more bits, less error
    assert verdict.evidence["2bit"]["ppl"]["minmax"] > verdict.evidence["2bit"]["ppl"]["fp"]
    study.plot(results, tmp_path / "neuqi.png")
    assert (tmp_path / "neuqi.png").stat().st_size > 10_000


def test_paper_scale_path_reads_local_model_and_text(tmp_path: Path) -> None:
    """`scale: paper` loads a local save_pretrained checkpoint (here a Qwen2 one) and local text files."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from raygent.platform.session import run_locally

    tokenizer = build_tokenizer()
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=32,
    )
    Qwen2ForCausalLM(config).save_pretrained(tmp_path / "qwen")
    tokenizer.save_pretrained(tmp_path / "qwen")
    (tmp_path / "calib.txt").write_text(generate_text(11, 3000))
    (tmp_path / "eval.txt").write_text(generate_text(12, 3000))
    reports = run_locally(
        NeuqiStudy().trainable,
        {
            **REDUCED,
            "scale": "paper",
            "bits": 3,
            "seq_len": 16,
            "model_path": str(tmp_path / "qwen"),
            "calib_text_path": str(tmp_path / "calib.txt"),
            "eval_text_path": str(tmp_path / "eval.txt"),
        },
    )
    metrics = reports[-1]
    assert all(metrics[f"ppl_{init}"] > 1 for init in ("fp", *INITS))
    assert metrics["layer_err_neuqi"] < metrics["layer_err_minmax"]
