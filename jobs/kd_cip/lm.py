"""Paper scale: distil a local causal LM into a smaller one (KD loss + λ·CIP), interactions over prompt players.

Everything is read from local paths given in config (`teacher_path`, `student_path`: directories written by
`save_pretrained`; `train_path`, `test_path`, `ood_path`: JSONL files with "prompt" and "response" strings),
never fetched from a hub. Teacher and student must share a tokenizer (the student's is used).

- Players: the prompt's tokens are grouped into at most `max_players` contiguous spans of near-equal length
  (`player_spans`), as the paper groups words into ≤ 10 players; masking a player replaces its tokens with the
  mask token (the tokenizer's mask, else pad, else unk, else eos, unless `lm_mask_token` ≥ 0).
- Reward: v(x_T) = Σ_t log p(response_t | masked prompt, response_<t) under the model, the notes' generation
  reward; it is differentiable through the student, so `cip.complex_interaction_penalty` applies unchanged.
- Training: token-level KD loss (`distill.distillation_loss` on the vocabulary distributions at response
  positions), one pair per step, AdamW at `lm_lr` for `lm_steps` steps.
- Metrics: teacher-forced next-token accuracy on the response tokens of the in-domain and OOD files
  (`id_acc`, `ood_acc`), and the interaction metrics of the toy study on `n_interaction_samples` test pairs.

How this differs from the paper: the paper's task metric (likely ROUGE-L of sampled responses on instruction
benchmarks, unverified) is replaced by teacher-forced token accuracy, and players are contiguous token spans
rather than the paper's (unreachable) word grouping.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from raygent.jobs.kd_cip import analysis
from raygent.jobs.kd_cip.cip import complex_interaction_penalty
from raygent.jobs.kd_cip.distill import distillation_loss
from raygent.jobs.kd_cip.interactions import RewardFn, decompose, interaction_stats, reward_table

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from raygent.jobs.kd_cip.study import KDCIPParams


def load_causal_lm(path: str | Path) -> tuple[PreTrainedModel, Any]:
    """(model, tokenizer) from a local `save_pretrained` directory; never touches the network."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not Path(path).is_dir():
        raise FileNotFoundError(f"model directory {path!r} does not exist")
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
    return model, tokenizer


def read_pairs(path: str | Path) -> list[tuple[str, str]]:
    """(prompt, response) pairs from a JSONL file with "prompt" and "response" keys."""
    pairs = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if line.strip():
            row = json.loads(line)
            if "prompt" not in row or "response" not in row:
                raise ValueError(f"{path}:{number}: expected keys 'prompt' and 'response'")
            pairs.append((str(row["prompt"]), str(row["response"])))
    if not pairs:
        raise ValueError(f"{path}: no pairs")
    return pairs


def player_spans(n_tokens: int, n_players: int) -> list[tuple[int, int]]:
    """Split positions [0, n_tokens) into min(n_players, n_tokens) contiguous [start, end) spans whose lengths
    differ by at most one (longer spans first)."""
    count = min(n_players, n_tokens)
    if count < 1:
        raise ValueError(f"need at least one token and one player, got {n_tokens} tokens, {n_players} players")
    base, extra = divmod(n_tokens, count)
    spans, start = [], 0
    for index in range(count):
        end = start + base + (1 if index < extra else 0)
        spans.append((start, end))
        start = end
    return spans


def mask_token_id(tokenizer: Any, override: int = -1) -> int:
    """The token that replaces masked players: `override` if ≥ 0, else mask, pad, unk or eos."""
    if override >= 0:
        return override
    for name in ("mask_token_id", "pad_token_id", "unk_token_id", "eos_token_id"):
        value = getattr(tokenizer, name, None)
        if value is not None:
            return int(value)
    raise ValueError("tokenizer has no mask/pad/unk/eos token; set lm_mask_token")


def encode_pair(tokenizer: Any, prompt: str, response: str, max_tokens: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Prompt ids (Lp,) and response ids (Lr,), each kept to at most max_tokens // 2 tokens."""
    half = max(1, max_tokens // 2)
    prompt_ids = tokenizer(prompt, add_special_tokens=True)["input_ids"][-half:]
    response_ids = tokenizer(response, add_special_tokens=False)["input_ids"][:half]
    if not prompt_ids or not response_ids:
        raise ValueError("empty prompt or response after tokenisation")
    return torch.tensor(prompt_ids), torch.tensor(response_ids)


def response_logits(model: nn.Module, prompts: torch.Tensor, response: torch.Tensor) -> torch.Tensor:
    """prompts (M, Lp), response (Lr,) → (M, Lr, V): the logits that predict each response token."""
    inputs = torch.cat((prompts, response.unsqueeze(0).expand(prompts.shape[0], -1)), dim=1)
    logits = model(input_ids=inputs).logits
    return logits[:, prompts.shape[1] - 1 : -1]


def lm_reward_fn(
    model: nn.Module,
    prompt: torch.Tensor,
    response: torch.Tensor,
    spans: list[tuple[int, int]],
    mask_token: int,
    chunk: int = 64,
) -> RewardFn:
    """keep-masks (M, n players) → (1, M) log-probability of the response given each masked prompt."""
    owner = torch.zeros(prompt.shape[0], dtype=torch.long)
    for index, (start, end) in enumerate(spans):
        owner[start:end] = index

    def reward(keep: torch.Tensor) -> torch.Tensor:
        token_keep = keep[:, owner]  # (M, Lp)
        prompts = torch.where(token_keep, prompt.unsqueeze(0), torch.full_like(prompt, mask_token))
        out = []
        for i in range(0, prompts.shape[0], chunk):
            logp = torch.log_softmax(response_logits(model, prompts[i : i + chunk], response), dim=-1)
            out.append(logp.gather(-1, response.expand(logp.shape[0], -1).unsqueeze(-1)).squeeze(-1).sum(dim=-1))
        return torch.cat(out).unsqueeze(0)

    return reward


@torch.no_grad()
def token_accuracy(model: nn.Module, encoded: list[tuple[torch.Tensor, torch.Tensor]]) -> float:
    """Teacher-forced next-token accuracy over all response tokens."""
    hits = total = 0
    for prompt, response in encoded:
        predicted = response_logits(model, prompt.unsqueeze(0), response)[0].argmax(dim=-1)
        hits += int((predicted == response).sum())
        total += int(response.numel())
    return hits / max(total, 1)


@torch.no_grad()
def lm_interaction_metrics(
    model: nn.Module, encoded: list[tuple[torch.Tensor, torch.Tensor]], params: KDCIPParams, mask_token: int
) -> dict[str, float]:
    """Interaction stats (see `interactions.interaction_stats`) averaged over pairs, all 2^n masks each."""
    totals: dict[str, float] = {}
    for prompt, response in encoded:
        spans = player_spans(prompt.shape[0], params.max_players)
        n = len(spans)
        rewards = reward_table(lm_reward_fn(model, prompt, response, spans, mask_token), n)
        i_and, i_or = decompose(rewards, n, params.decomposition)
        for key, value in interaction_stats(i_and, i_or, n, params.salient_tau, params.high_order).items():
            totals[key] = totals.get(key, 0.0) + value / len(encoded)
    return totals


def run_lm_trial(params: KDCIPParams) -> dict[str, Any]:
    """Distil `student_path` from `teacher_path` on `train_path` with the trial's KD method + λ·CIP."""
    torch.manual_seed(params.seed)
    teacher, _ = load_causal_lm(params.teacher_path)
    student, tokenizer = load_causal_lm(params.student_path)
    if teacher.get_output_embeddings().weight.shape[0] != student.get_output_embeddings().weight.shape[0]:
        raise ValueError("teacher and student must share a vocabulary (same tokenizer)")
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    mask_token = mask_token_id(tokenizer, params.lm_mask_token)

    def encode(path: str, limit: int | None = None) -> list[tuple[torch.Tensor, torch.Tensor]]:
        pairs = read_pairs(path)[:limit]
        return [encode_pair(tokenizer, p, r, params.lm_max_tokens) for p, r in pairs]

    train, test, ood = (
        encode(params.train_path),
        encode(params.test_path, params.n_test),
        encode(params.ood_path, params.n_test),
    )
    optimizer = torch.optim.AdamW(student.parameters(), lr=params.lm_lr, weight_decay=params.weight_decay)
    order = random.Random(params.seed)
    cip_gen = torch.Generator().manual_seed(params.seed)
    start, loss_value = time.process_time(), float("nan")
    student.train()
    for step in range(params.lm_steps):
        prompt, response = train[order.randrange(len(train))]
        logits = response_logits(student, prompt.unsqueeze(0), response)[0]
        with torch.no_grad():
            targets = response_logits(teacher, prompt.unsqueeze(0), response)[0]
        loss = distillation_loss(
            params.method, logits, targets, response, params.temperature, params.hard_weight, params.skew
        )
        spans = player_spans(prompt.shape[0], params.max_players)
        if params.cip_weight > 0.0 and step % params.cip_every == 0 and len(spans) >= params.cip_order:
            reward = lm_reward_fn(student, prompt, response, spans, mask_token)
            teacher_reward = lm_reward_fn(teacher, prompt, response, spans, mask_token)
            penalty = complex_interaction_penalty(reward, len(spans), params.cip(), cip_gen, teacher_reward)
            loss = loss + params.cip_weight * penalty
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss_value = float(loss.detach())
    student.eval()
    seconds = time.process_time() - start
    probe = test[: params.n_interaction_samples]
    student_stats = lm_interaction_metrics(student, probe, params, mask_token)
    teacher_stats = lm_interaction_metrics(teacher, probe, params, mask_token)
    return {
        analysis.ID_ACC: token_accuracy(student, test),
        analysis.OOD_ACC: token_accuracy(student, ood),
        analysis.N_SALIENT: student_stats["n_salient"],
        analysis.HIGH_ORDER_MASS: student_stats["high_order_share"],
        analysis.HIGH_ORDER_ABS: student_stats["high_order_abs"],
        analysis.TEACHER_ID_ACC: token_accuracy(teacher, test),
        analysis.TEACHER_OOD_ACC: token_accuracy(teacher, ood),
        analysis.TEACHER_N_SALIENT: teacher_stats["n_salient"],
        analysis.TEACHER_HIGH_ORDER_MASS: teacher_stats["high_order_share"],
        analysis.TRAIN_LOSS: loss_value,
        analysis.TRAIN_SECONDS: seconds,
    }
