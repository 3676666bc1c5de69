"""Tests of the KD-CIP paper-scale path: local LM loader, players, rewards and one trial on saved tiny models."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from raygent.jobs.kd_cip import interactions as I
from raygent.jobs.kd_cip.lm import (
    encode_pair,
    lm_reward_fn,
    load_causal_lm,
    mask_token_id,
    player_spans,
    response_logits,
)
from raygent.jobs.kd_cip.study import KDCIPParams, KDCIPStudy
from raygent.platform.session import run_locally

# --- paper-scale loader -----------------------------------------------------------------------------------


def _save_tiny_lm_pair(root: Path) -> dict[str, str]:
    """Write a word-level tokenizer, two tiny Llama models and three JSONL files under `root`."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = ["[PAD]", "[UNK]", "[MASK]", "<s>", *[f"w{i}" for i in range(20)]]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]", mask_token="[MASK]", bos_token="<s>"
    )
    paths = {}
    for name, layers in (("teacher", 2), ("student", 1)):
        torch.manual_seed(layers)
        config = LlamaConfig(
            vocab_size=len(words),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=layers,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=64,
        )
        LlamaForCausalLM(config).save_pretrained(root / name)
        tokenizer.save_pretrained(root / name)
        paths[f"{name}_path"] = str(root / name)
    for split, offset in (("train", 0), ("test", 1), ("ood", 2)):
        lines = [
            json.dumps(
                {
                    "prompt": " ".join(f"w{(i + j + offset) % 20}" for j in range(7)),
                    "response": f"w{(3 * i) % 20} w{(i + 5) % 20}",
                }
            )
            for i in range(6)
        ]
        (root / f"{split}.jsonl").write_text("\n".join(lines) + "\n")
        paths[f"{split}_path"] = str(root / f"{split}.jsonl")
    return paths


def test_player_spans() -> None:
    assert player_spans(10, 4) == [(0, 3), (3, 6), (6, 8), (8, 10)]
    assert player_spans(3, 10) == [(0, 1), (1, 2), (2, 3)]
    with pytest.raises(ValueError):
        player_spans(0, 4)


def test_lm_loader_reward_and_paper_scale_trial(tmp_path: Path) -> None:
    from transformers import LlamaForCausalLM

    paths = _save_tiny_lm_pair(tmp_path)
    model, tokenizer = load_causal_lm(paths["student_path"])
    reference = LlamaForCausalLM.from_pretrained(paths["student_path"])
    ids = torch.tensor([[3, 4, 5, 6]])
    torch.testing.assert_close(model(input_ids=ids).logits, reference(input_ids=ids).logits)
    assert mask_token_id(tokenizer) == 2
    prompt, response = encode_pair(tokenizer, "w1 w2 w3 w4 w5", "w6 w7", max_tokens=32)
    spans = player_spans(prompt.shape[0], 3)
    with torch.no_grad():
        rewards = I.reward_table(lm_reward_fn(model, prompt, response, spans, mask_token=2), len(spans))
        full = torch.log_softmax(response_logits(model, prompt.unsqueeze(0), response)[0], dim=-1)
    assert float(rewards[0, -1]) == pytest.approx(float(full.gather(1, response.unsqueeze(1)).sum()), abs=1e-5)
    params = KDCIPParams(
        scale="paper",
        method="rkl",
        cip_weight=0.1,
        cip_order=2,
        max_players=4,
        lm_steps=3,
        lm_lr=1e-3,
        n_test=4,
        n_interaction_samples=2,
        **paths,
    )
    reports = run_locally(KDCIPStudy().trainable, params.model_dump())
    metrics = reports[-1]
    for key in ("id_acc", "ood_acc", "n_salient", "high_order_mass", "teacher_id_acc"):
        assert math.isfinite(metrics[key])
    assert 0.0 <= metrics["ood_acc"] <= 1.0
