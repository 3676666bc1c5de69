"""Encode a video as a Neural Knowledge Representation (a LoRA adapter), answer from it, and the baselines.

- `akd_corpus`: what Agentic Knowledge Distillation distils: the dense descriptions (continued-pre-training text,
  loss on every token) and the agent's QA pairs (instruction data, loss on the answer).
- `encode`: the one-time encoding: a fresh LoRA (rank r on the attention and MLP projections, `peft`) on the
  frozen backbone, trained on the AKD corpus; returns the model with the adapter mounted.
- `choose`: multiple-choice answering by the options' log-likelihood after a prompt, batched.
- `accuracy`: the question bank answered closed-book (NKR, and the backbone with the adapter disabled), with the
  captions in context truncated to the context window, or with the top-k retrieved captions in context.
- `prefill_cost`: FLOPs (`torch.utils.flop_counter`) and median wall seconds of one query's prefill.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from peft import LoraConfig, PeftModel, get_peft_model
from torch.utils.flop_counter import FlopCounterMode
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from raygent.jobs.nkr.base import IGNORE, closed_prompt, context_prompt, ids, shifted_loss
from raygent.jobs.nkr.video import COLOURS, OBJECTS, Question, Video, synthesise_qa


@dataclass(frozen=True)
class DistilSettings:
    rank: int
    alpha: int
    targets: tuple[str, ...]
    steps: int
    batch_size: int
    lr: float
    descriptions: bool


def akd_corpus(video: Video, budget: int, descriptions: bool,
               rng: np.random.Generator) -> list[tuple[str, str]]:
    """(prompt, target) pairs: descriptions as ("", caption), QA pairs as (closed-book prompt, answer)."""
    corpus = [("", caption) for caption in video.captions()] if descriptions else []
    corpus += [(closed_prompt(q), f"{a} .") for q, a in synthesise_qa(video, budget, rng)]
    return corpus


def _pad(rows: Sequence[tuple[list[int], list[int]]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(x) for x, _ in rows)
    inputs = torch.full((len(rows), width), pad, dtype=torch.long)
    labels = torch.full((len(rows), width), IGNORE, dtype=torch.long)
    for i, (x, y) in enumerate(rows):
        inputs[i, : len(x)] = torch.tensor(x)
        labels[i, : len(y)] = torch.tensor(y)
    return inputs, labels


def encode(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, corpus: list[tuple[str, str]],
           settings: DistilSettings, seed: int) -> tuple[PeftModel, list[float]]:
    """Distil `corpus` into a new LoRA adapter on the frozen `model`; returns the model with it mounted and the
    loss of every 25th step."""
    torch.manual_seed(seed)
    config = LoraConfig(r=settings.rank, lora_alpha=settings.alpha, target_modules=list(settings.targets),
                        lora_dropout=0.0, bias="none")
    nkr = get_peft_model(model, config)
    assert isinstance(nkr, PeftModel)
    pad = tokenizer.pad_token_id
    assert pad is not None
    rows = []
    for prompt, target in corpus:
        p = ids(tokenizer, prompt) if prompt else []
        t = ids(tokenizer, target)
        rows.append((p + t, [IGNORE] * len(p) + t))
    trainable = [p for p in nkr.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=settings.lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - step / settings.steps)  # linear decay
    generator = np.random.default_rng(seed)
    nkr.train()
    losses = []
    for step in range(settings.steps):
        batch = [rows[i] for i in generator.integers(len(rows), size=settings.batch_size)]
        inputs, labels = _pad(batch, pad)
        logits = nkr(input_ids=inputs, attention_mask=inputs != pad).logits
        loss = shifted_loss(logits, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        if step % 25 == 0:
            losses.append(loss.item())
    nkr.eval()
    return nkr, losses


@torch.no_grad()
def choose(model: torch.nn.Module, tokenizer: PreTrainedTokenizerBase, prompts: Sequence[str],
           options: Sequence[Sequence[str]], batch_size: int = 64) -> list[int]:
    """For each prompt, the index of the option with the highest summed log-likelihood of its tokens."""
    pad = tokenizer.pad_token_id
    assert pad is not None
    rows, owners = [], []
    for n, (prompt, choices) in enumerate(zip(prompts, options, strict=True)):
        p = ids(tokenizer, prompt)
        for option in choices:
            o = ids(tokenizer, option)
            rows.append((p + o, [IGNORE] * len(p) + o))
            owners.append(n)
    scores = np.zeros(len(rows))
    for start in range(0, len(rows), batch_size):
        inputs, labels = _pad(rows[start: start + batch_size], pad)
        logits = model(input_ids=inputs, attention_mask=inputs != pad).logits[:, :-1].float()
        target = labels[:, 1:]
        logp = torch.log_softmax(logits, dim=-1).gather(-1, target.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        scores[start: start + len(inputs)] = (logp * (target != IGNORE)).sum(-1).numpy()
    chosen, offset = [], 0
    for choices in options:
        chosen.append(int(np.argmax(scores[offset: offset + len(choices)])))
        offset += len(choices)
    return chosen


def truncate(tokenizer: PreTrainedTokenizerBase, captions: list[str], question: str, context: int) -> list[str]:
    """The video's first captions that fit in a `context`-token window together with the question."""
    room = context - len(ids(tokenizer, context_prompt([], question))) - 3
    kept, used = [], 0
    for caption in captions:
        n = len(ids(tokenizer, caption))
        if used + n > room:
            break
        kept.append(caption)
        used += n
    return kept


CONTENT = set(COLOURS) | set(OBJECTS)


def retrieve(captions: list[str], question: str, k: int) -> list[str]:
    """Top-k captions by overlap of entity words with the question (ties: earlier first), in video order."""
    words = set(question.split()) & CONTENT
    scores = [len(words & set(c.split())) for c in captions]
    top = sorted(sorted(range(len(captions)), key=lambda i: -scores[i])[:k])
    return [captions[i] for i in top]


def accuracy(model: torch.nn.Module, tokenizer: PreTrainedTokenizerBase, video: Video, bank: list[Question],
             mode: str, context: int = 256, k: int = 4) -> dict[str, float]:
    """Multiple-choice accuracy over `bank`, overall and per kind. `mode`: closed (no captions), context (the
    captions truncated to the window) or retrieval (the top-k captions)."""
    captions = video.captions()
    prompts = []
    for q in bank:
        if mode == "closed":
            prompts.append(closed_prompt(q.text))
        elif mode == "context":
            prompts.append(context_prompt(truncate(tokenizer, captions, q.text, context), q.text))
        elif mode == "retrieval":
            prompts.append(context_prompt(retrieve(captions, q.text, k), q.text))
        else:
            raise ValueError(f"unknown mode {mode!r}")
    chosen = choose(model, tokenizer, prompts, [q.options for q in bank])
    right = np.array([c == q.answer for c, q in zip(chosen, bank, strict=True)], dtype=float)
    out = {"all": float(right.mean())}
    for kind in sorted({q.kind for q in bank}):
        out[kind] = float(right[[q.kind == kind for q in bank]].mean())
    return out


@torch.no_grad()
def prefill_cost(model: torch.nn.Module, tokenizer: PreTrainedTokenizerBase, prompt: str,
                 repeats: int = 5) -> tuple[int, float, int]:
    """(FLOPs, median wall seconds, tokens) of one forward pass over `prompt` (the query's prefill)."""
    inputs = torch.tensor([ids(tokenizer, prompt)])

    def run() -> None:
        model(input_ids=inputs)

    with FlopCounterMode(display=False) as counter:
        run()
    return int(counter.get_total_flops()), _median_seconds(run, repeats), int(inputs.shape[1])


def _median_seconds(fn: Callable[[], None], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))
