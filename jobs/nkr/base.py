"""The frozen backbone NKR mounts on: a tiny Llama that reads captions in context, or a real local model.

`load_base(path)` is the one loading function (`AutoModelForCausalLM` / `AutoTokenizer`, local files only). At
laptop scale its directory is the tiny Llama that `cached_base` pre-trains once on generic reading items
(`video.reading_example`: short generated videos' captions, then several questions about them in all three
wordings, loss on the answers) and saves with `save_pretrained`; at `scale: paper` it is the local checkpoint
named by `base_path` (the paper's VLM backbone, e.g. Qwen2.5-VL's language model), never a hub download.

Prompt formats (plain text, so a real tokenizer reads them too):
- in context: `c : <captions> q : <question> a : <answer> .`
- closed book (what NKR answers, and the no-adapter baseline): `q : <question> a : <answer> .`
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import WhitespaceSplit
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    PreTrainedTokenizerFast,
)

from raygent.jobs.nkr.video import TEMPLATES, question, reading_example, vocabulary
from raygent.policies.cache import build_once, cache_root

CACHE_VERSION = 1  # bump when the generator, the formats or the pre-training code change
IGNORE = -100


class BaseSpec(BaseModel):
    """Everything that determines the pre-trained tiny backbone; its hash keys the on-disk cache."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hidden_size: int = 96
    num_layers: int = 3
    num_heads: int = 4
    intermediate_size: int = 192
    context: int = 256
    questions_per_item: int = 4
    steps: int = 1500
    batch_size: int = 24
    lr: float = 3e-3
    seed: int = 0

    def key(self) -> str:
        blob = json.dumps({**self.model_dump(), "version": CACHE_VERSION}, sort_keys=True).encode()
        return f"nkr-base-{hashlib.sha256(blob).hexdigest()[:16]}"


def build_tokenizer() -> PreTrainedTokenizerFast:
    """Word-level tokenizer over the generator's vocabulary (whitespace split)."""
    vocab = {word: index for index, word in enumerate(vocabulary())}
    core = Tokenizer(WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]")


def ids(tokenizer: PreTrainedTokenizerBase, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def context_prompt(captions: list[str], question: str) -> str:
    return f"c : {' '.join(captions)} q : {question} a :"


def closed_prompt(question: str) -> str:
    return f"q : {question} a :"


def reading_batch(rng: np.random.Generator, tokenizer: PreTrainedTokenizerBase, spec: BaseSpec,
                  batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Pre-training items: captions of a generated video, then `questions_per_item` questions with their answers;
    labels only on the answer tokens. Padded right to `spec.context`."""
    pad = tokenizer.pad_token_id
    assert pad is not None
    inputs = torch.full((batch_size, spec.context), pad, dtype=torch.long)
    labels = torch.full((batch_size, spec.context), IGNORE, dtype=torch.long)
    qa_budget = spec.questions_per_item * 14
    max_events = max(2, (spec.context - qa_budget - 2) // 13)
    for row in range(batch_size):
        captions, first, video = reading_example(rng, max_events)
        sequence = ids(tokenizer, f"c : {' '.join(captions)}")
        targets = [IGNORE] * len(sequence)
        asked = [first]
        facts = video.facts()
        for _ in range(spec.questions_per_item - 1):
            kind, index = facts[int(rng.integers(len(facts)))]
            asked.append(question(video, kind, index, int(rng.integers(len(TEMPLATES[kind]))), rng))
        for item in asked:
            prompt = ids(tokenizer, f"q : {item.text} a :")
            answer = ids(tokenizer, f"{item.options[item.answer]} .")
            sequence += prompt + answer
            targets += [IGNORE] * len(prompt) + answer
        sequence, targets = sequence[: spec.context], targets[: spec.context]
        inputs[row, : len(sequence)] = torch.tensor(sequence)
        labels[row, : len(targets)] = torch.tensor(targets)
    return inputs, labels


def build_tiny_llama(spec: BaseSpec, vocab_size: int, pad_token_id: int) -> LlamaForCausalLM:
    """A randomly initialised Llama from `LlamaConfig` (no weights are downloaded)."""
    config = LlamaConfig(  # type: ignore[call-arg]
        vocab_size=vocab_size, hidden_size=spec.hidden_size, intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_layers, num_attention_heads=spec.num_heads, num_key_value_heads=spec.num_heads,
        max_position_embeddings=4096, pad_token_id=pad_token_id, bos_token_id=None, eos_token_id=None,
        tie_word_embeddings=False, attn_implementation="eager",
    )
    return LlamaForCausalLM(config)


def shifted_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Next-token cross-entropy where `labels` mark the supervised positions (IGNORE elsewhere)."""
    return torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                                             labels[:, 1:].reshape(-1), ignore_index=IGNORE)


def pretrain(spec: BaseSpec, out_dir: Path) -> list[float]:
    """Pre-train the tiny backbone to read captions in context; `save_pretrained` model + tokenizer to `out_dir`."""
    torch.manual_seed(spec.seed)
    rng = np.random.default_rng(spec.seed)
    tokenizer = build_tokenizer()
    assert tokenizer.pad_token_id is not None
    model = build_tiny_llama(spec, len(tokenizer), tokenizer.pad_token_id)
    optimizer = torch.optim.AdamW(model.parameters(), lr=spec.lr, weight_decay=0.01)
    warmup = max(1, spec.steps // 20)

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, spec.steps - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    model.train()
    losses = []
    for _ in range(spec.steps):
        inputs, labels = reading_batch(rng, tokenizer, spec, spec.batch_size)
        loss = shifted_loss(model(input_ids=inputs, attention_mask=inputs != tokenizer.pad_token_id).logits, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    model.eval()
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    (out_dir / "pretrain_losses.json").write_text(json.dumps(losses))
    return losses


def cached_base(spec: BaseSpec, cache_dir: str | Path | None = None) -> Path:
    """The directory of the pre-trained backbone for `spec`, pre-training it only if no trial has done so yet
    (safe for concurrent trials: `raygent.policies.cache.build_once`)."""

    def build(out_dir: Path) -> None:
        pretrain(spec, out_dir)
        (out_dir / "spec.json").write_text(spec.model_dump_json())

    root = Path(cache_dir).expanduser() if cache_dir else cache_root("nkr")
    return build_once(root / spec.key(), build, done="spec.json")


def load_base(path: str | Path) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a local causal LM and its tokenizer (float32, eval mode), tiny or real; the weights stay frozen."""
    path = Path(path).expanduser()
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model, tokenizer
