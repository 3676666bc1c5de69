"""The laptop-scale judge: a causal LM fine-tuned to answer " yes" or " no" to the WSM's two questions.

Two prompts, shared by training (`jobs/seagent/wsm_data.py`, `wsm_train.py`) and judging (`wsm.py`):

- `step_prompt(instruction, action, caption)`: did this action bring the task closer to done? (the per-step
  correct/error label; a step that changed nothing is redundant by rule and never asked);
- `done_prompt(instruction, caption)`: with every change since the first screen, is the task fully done?

`YesNoScorer` loads a model directory (any `AutoModelForCausalLM`: the fine-tuned pretrained preset at laptop
scale) and returns P(yes) = σ(logit(" yes") − logit(" no")) at each prompt's last token. Only the last hidden
state of each prompt meets the LM head (two rows of it), so a batch never materializes `[B, L, vocab]` logits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

YES, NO = " yes", " no"
MAX_PROMPT_TOKENS = 160
PROMPT_FORMAT = 2
"""Bumped when what the judge reads changes (2: `fit` keeps the task line), so a cached judge of an older format
is fine-tuned again rather than reused."""


def step_prompt(instruction: str, action: str, caption: str) -> str:
    return (
        f"Task: {instruction}\nAction: {action}\nWhat changed on the screen:\n{caption}\n"
        "Did this action bring the task closer to done? Answer:"
    )


def done_prompt(instruction: str, caption: str) -> str:
    return (
        f"Task: {instruction}\nEverything that changed on the screen since the start:\n{caption}\n"
        "Is the task fully done now? Answer:"
    )


def answer_ids(tokenizer: Any) -> tuple[int, int]:
    """The token ids of " yes" and " no" (the last piece of each, should the tokenizer split them)."""
    yes = tokenizer.encode(YES, add_special_tokens=False)
    no = tokenizer.encode(NO, add_special_tokens=False)
    if not yes or not no or yes[-1] == no[-1]:
        raise ValueError("the tokenizer cannot tell ' yes' from ' no'")
    return int(yes[-1]), int(no[-1])


def fit(tokenizer: Any, prompt: str, max_tokens: int = MAX_PROMPT_TOKENS) -> list[int]:
    """The prompt's token ids, at most `max_tokens`: a longer prompt keeps its first line (the task) and its last
    (the question) whole and cuts the lines between from their end (the caption's last lines: what appeared or
    disappeared after what changed value). Until 2026-12-06 it kept only its end, which for a caption near its
    400 characters cut the task line: the judge was trained and asked without the instruction it judges."""
    ids = tokenizer.encode(prompt, add_special_tokens=False)
    if len(ids) <= max_tokens:
        return list(ids)
    first, _, rest = prompt.partition("\n")
    middle, _, last = rest.rpartition("\n")
    head = tokenizer.encode(first + "\n", add_special_tokens=False)
    tail = tokenizer.encode("\n" + last, add_special_tokens=False)
    room = max_tokens - len(head) - len(tail)
    if room <= 0:  # a task or question longer than the budget: its end, as before
        return list(ids[-max_tokens:])
    return [*head, *tokenizer.encode(middle, add_special_tokens=False)[:room], *tail]


def encode_batch(
    tokenizer: Any, prompts: Sequence[str], max_tokens: int = MAX_PROMPT_TOKENS
) -> dict[str, torch.Tensor]:
    """Right-padded ids and mask of the prompts, each `fit` to `max_tokens`."""
    rows = [fit(tokenizer, prompt, max_tokens) for prompt in prompts]
    width = max(len(r) for r in rows)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    ids = torch.full((len(rows), width), int(pad), dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return {"input_ids": ids, "attention_mask": mask}


def yes_no_logits(model: Any, batch: dict[str, torch.Tensor], yes_id: int, no_id: int) -> torch.Tensor:
    """logit(" yes") − logit(" no") at each row's last real token, `[B]` (differentiable)."""
    out = model.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    hidden = out.last_hidden_state
    last = batch["attention_mask"].sum(dim=1) - 1
    h = hidden[torch.arange(hidden.shape[0]), last]
    head = model.get_output_embeddings().weight
    diff = head[yes_id] - head[no_id]
    return h @ diff


class YesNoScorer:
    """P(yes) for prompts under a causal LM directory (see the module docstring)."""

    def __init__(self, model_dir: str | Path, batch_size: int = 16, threads: int | None = None) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if threads:
            torch.set_num_threads(threads)
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        self.model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
        self.model.eval()
        self.yes_id, self.no_id = answer_ids(self.tokenizer)
        self.batch_size = batch_size

    def probabilities(self, prompts: Sequence[str]) -> list[float]:
        out: list[float] = []
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))  # similar lengths batch together
        values: dict[int, float] = {}
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                batch = encode_batch(self.tokenizer, [prompts[i] for i in chunk])
                logits = yes_no_logits(self.model, batch, self.yes_id, self.no_id)
                for i, value in zip(chunk, logits.tolist(), strict=True):
                    values[i] = 1.0 / (1.0 + math.exp(-max(min(value, 60.0), -60.0)))
        out = [values[i] for i in range(len(prompts))]
        return out
