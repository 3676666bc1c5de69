"""The causal LM the study quantises: a tiny Llama built from config and trained on grammar text, or a real one.

`load_lm(path)` is the one loading function: it reads any local `save_pretrained` directory (model and
tokenizer) with `AutoModelForCausalLM.from_pretrained` / `AutoTokenizer.from_pretrained`. At laptop scale
that directory is the tiny Llama that `cached_tiny_lm` trains and saves; at `scale: paper` it is the local
LLaMA/Qwen checkpoint named in config (never a hub download: `local_files_only=True`).

Differences from the paper: the paper quantises pretrained LLaMA-2/3 and Qwen-2.5 models and evaluates on
WikiText-2/C4; here a 2-layer, 128-wide Llama is trained for a few hundred steps on generated text.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import torch
from pydantic import BaseModel, ConfigDict
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from raygent.jobs.neuqi.corpus import build_tokenizer, generate_text
from raygent.policies.cache import build_once, cache_root

CACHE_VERSION = 1  # bump when the corpus or the training code changes, so stale cached models are not reused


class TinyLMSpec(BaseModel):
    """Everything that determines the trained tiny LM; its hash (with the seed) keys the on-disk cache."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hidden_size: int = 128
    num_layers: int = 2
    num_heads: int = 4
    intermediate_size: int = 256
    seq_len: int = 64
    train_words: int = 120_000
    preference: float = 0.9
    train_steps: int = 300
    batch_size: int = 32
    lr: float = 3e-3
    weight_decay: float = 0.01
    init_std: float = 0.02
    seed: int = 0

    def key(self) -> str:
        blob = json.dumps({**self.model_dump(), "version": CACHE_VERSION}, sort_keys=True).encode()
        return f"tiny-llama-{hashlib.sha256(blob).hexdigest()[:16]}"


def build_tiny_llama(spec: TinyLMSpec, vocab_size: int, pad_token_id: int) -> LlamaForCausalLM:
    """A randomly initialised Llama from `LlamaConfig` (no weights are downloaded)."""
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_layers,
        num_attention_heads=spec.num_heads,
        num_key_value_heads=spec.num_heads,
        max_position_embeddings=spec.seq_len,
        pad_token_id=pad_token_id,
        bos_token_id=None,
        eos_token_id=None,
        tie_word_embeddings=False,
        initializer_range=spec.init_std,
    )
    return LlamaForCausalLM(config)


def token_blocks(
    tokenizer: PreTrainedTokenizerBase, text: str, seq_len: int, max_blocks: int | None = None
) -> torch.Tensor:
    """Tokenise `text` as one stream and cut it into non-overlapping blocks: → [N, seq_len] int64."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    count = len(ids) // seq_len if max_blocks is None else min(len(ids) // seq_len, max_blocks)
    if count == 0:
        raise ValueError(f"text has {len(ids)} tokens, fewer than one block of {seq_len}")
    return torch.tensor(ids[: count * seq_len], dtype=torch.long).view(count, seq_len)


def train_lm(model: PreTrainedModel, blocks: torch.Tensor, spec: TinyLMSpec) -> list[float]:
    """AdamW with linear warm-up and cosine decay on random blocks; returns the loss of every step."""
    generator = torch.Generator().manual_seed(spec.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=spec.lr, weight_decay=spec.weight_decay)
    warmup = max(1, spec.train_steps // 10)

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, spec.train_steps - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    model.train()
    losses = []
    for _ in range(spec.train_steps):
        batch = blocks[torch.randint(len(blocks), (spec.batch_size,), generator=generator)]
        loss = model(input_ids=batch, labels=batch).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    model.eval()
    return losses


def train_tiny_lm(spec: TinyLMSpec, out_dir: Path) -> list[float]:
    """Generate grammar text, train the tiny Llama on it, `save_pretrained` model + tokenizer to `out_dir`."""
    torch.manual_seed(spec.seed)
    tokenizer = build_tokenizer()
    model = build_tiny_llama(spec, len(tokenizer), tokenizer.pad_token_id)
    blocks = token_blocks(tokenizer, generate_text((spec.seed, 0), spec.train_words, spec.preference), spec.seq_len)
    losses = train_lm(model, blocks, spec)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    (out_dir / "train_losses.json").write_text(json.dumps(losses))
    return losses


def cached_tiny_lm(spec: TinyLMSpec, cache_dir: str | Path | None = None) -> Path:
    """The directory of the tiny LM for `spec`, training it only if no trial has done so yet (safe for concurrent
    trials: `raygent.policies.cache.build_once`)."""

    def build(out_dir: Path) -> None:
        train_tiny_lm(spec, out_dir)
        (out_dir / "spec.json").write_text(spec.model_dump_json())

    root = Path(cache_dir).expanduser() if cache_dir else cache_root("neuqi")
    return build_once(root / spec.key(), build, done="spec.json")


def load_lm(path: str | Path, device: str = "cpu") -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a local causal LM and its tokenizer (float32, eval mode, on `device`), tiny or real."""
    path = Path(path).expanduser()
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    # transformers decorates to() with functools.wraps; typeshed's _Wrapped.__call__ does not bind self
    model.to(device).eval()  # type: ignore[arg-type]
    return model, tokenizer


@torch.no_grad()
def perplexity(model: PreTrainedModel, blocks: torch.Tensor, batch_size: int = 16) -> float:
    """exp(mean next-token NLL) over blocks [N, T] (each block scored on its own)."""
    device = next(model.parameters()).device
    total, count = 0.0, 0
    for start in range(0, len(blocks), batch_size):
        batch = blocks[start : start + batch_size].to(device)
        logits = model(input_ids=batch).logits[:, :-1].float()
        nll = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1), reduction="sum"
        )
        total += float(nll)
        count += batch[:, 1:].numel()
    return math.exp(total / count)
