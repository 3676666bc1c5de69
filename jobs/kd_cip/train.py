"""Training loops for the toy task (teacher on hard labels; student with a KD loss + λ·CIP) and the teacher cache.

The teacher is trained once per (config, seed) and cached on disk: the file name is a hash of everything that
determines its weights, the weights are written to a temporary file and renamed into place (atomic on POSIX),
and an advisory `flock` makes a second concurrent trial wait for the first instead of training it twice.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from raygent.jobs.kd_cip.cip import CIPSpec, complex_interaction_penalty
from raygent.jobs.kd_cip.data import Split
from raygent.jobs.kd_cip.distill import Method, cross_entropy, distillation_loss
from raygent.jobs.kd_cip.models import classifier_reward_fn
from raygent.policies.cache import file_lock

CACHE_VERSION = 1


@dataclass(frozen=True)
class OptimSpec:
    """AdamW with cosine decay over `epochs` passes of minibatches of `batch_size`."""

    epochs: int
    batch_size: int = 64
    lr: float = 3e-3
    weight_decay: float = 0.0


@dataclass(frozen=True)
class CIPTraining:
    """How CIP enters student training: weight λ, the penalty's definition, samples per step, masking."""

    weight: float
    spec: CIPSpec
    batch: int
    player_positions: tuple[int, ...]
    mask_token: int
    every: int = 1


def _schedule(optimizer: torch.optim.Optimizer, total_steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: 0.5 * (1.0 + math.cos(math.pi * min(step, total_steps) / total_steps))
    )


def _epoch_order(count: int, seed: int, epoch: int) -> torch.Tensor:
    return torch.randperm(count, generator=torch.Generator().manual_seed(seed * 100_003 + epoch))


def train_classifier(model: nn.Module, split: Split, optim: OptimSpec, seed: int) -> float:
    """Cross-entropy on hard labels; returns the last epoch's mean loss."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=optim.lr, weight_decay=optim.weight_decay)
    steps = optim.epochs * math.ceil(len(split) / optim.batch_size)
    scheduler = _schedule(optimizer, steps)
    model.train()
    last = 0.0
    for epoch in range(optim.epochs):
        order, total = _epoch_order(len(split), seed, epoch), 0.0
        for start in range(0, len(split), optim.batch_size):
            idx = order[start : start + optim.batch_size]
            loss = cross_entropy(model(split.tokens[idx]), split.labels[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += float(loss.detach()) * len(idx)
        last = total / len(split)
    model.eval()
    return last


def train_student(
    student: nn.Module,
    split: Split,
    teacher: nn.Module | None,
    method: Method,
    optim: OptimSpec,
    seed: int,
    cip: CIPTraining,
    temperature: float = 2.0,
    hard_weight: float = 0.0,
    skew: float = 0.1,
    state: dict[str, Any] | None = None,
    on_epoch: Callable[[int, float, dict[str, Any]], None] | None = None,
) -> float:
    """KD loss (+ λ·CIP) on the transfer set; resumes from `state` and calls `on_epoch(epoch, loss, state)`."""
    optimizer = torch.optim.AdamW(student.parameters(), lr=optim.lr, weight_decay=optim.weight_decay)
    steps = optim.epochs * math.ceil(len(split) / optim.batch_size)
    scheduler = _schedule(optimizer, steps)
    first_epoch, last = 0, float("nan")
    if state is not None:
        student.load_state_dict(state["student"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        first_epoch, last = int(state["epoch"]) + 1, float(state["loss"])
    teacher_logits = None
    if teacher is not None and method != "ce":
        with torch.no_grad():
            teacher_logits = teacher(split.tokens)
    n_players = len(cip.player_positions)
    student.train()
    for epoch in range(first_epoch, optim.epochs):
        order, total = _epoch_order(len(split), seed, epoch), 0.0
        cip_gen = torch.Generator().manual_seed(seed * 7_919 + epoch)
        for step, start in enumerate(range(0, len(split), optim.batch_size)):
            idx = order[start : start + optim.batch_size]
            tokens, labels = split.tokens[idx], split.labels[idx]
            targets = None if teacher_logits is None else teacher_logits[idx]
            loss = distillation_loss(method, student(tokens), targets, labels, temperature, hard_weight, skew)
            if cip.weight > 0.0 and step % cip.every == 0:
                sub, sub_labels = tokens[: cip.batch], labels[: cip.batch]
                reward = classifier_reward_fn(student, sub, sub_labels, list(cip.player_positions), cip.mask_token)
                teacher_reward = None
                if teacher is not None and cip.spec.target == "teacher":
                    teacher_reward = classifier_reward_fn(
                        teacher, sub, sub_labels, list(cip.player_positions), cip.mask_token
                    )
                penalty = complex_interaction_penalty(reward, n_players, cip.spec, cip_gen, teacher_reward)
                loss = loss + cip.weight * penalty
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += float(loss.detach()) * len(idx)
        last = total / len(split)
        if on_epoch is not None:
            on_epoch(
                epoch,
                last,
                {
                    "epoch": epoch,
                    "loss": last,
                    "student": student.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(),
                },
            )
    student.eval()
    return last


@torch.no_grad()
def accuracy(model: nn.Module, split: Split) -> float:
    """Share of samples whose argmax prediction equals the label."""
    model.eval()
    return float((model(split.tokens).argmax(dim=-1) == split.labels).float().mean())


def cache_key(payload: dict[str, Any]) -> str:
    """A short stable hash of a JSON-serialisable payload (everything that determines the teacher)."""
    text = json.dumps({"version": CACHE_VERSION, **payload}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def default_cache_dir() -> Path:
    return Path(tempfile.gettempdir()) / "raygent_kd_cip_teachers"


def cached_model(
    key: str, build: Callable[[], nn.Module], fit: Callable[[nn.Module], None], cache_dir: Path
) -> tuple[nn.Module, bool]:
    """Load the model cached under `key`, or build, fit and cache it; returns (model, loaded_from_cache)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / f"teacher_{key}.pt"
    model = build()
    with file_lock(cache_dir / f"teacher_{key}.lock"):
        if target.exists():
            model.load_state_dict(torch.load(target, weights_only=True))
            model.eval()
            return model, True
        fit(model)
        handle, tmp = tempfile.mkstemp(dir=cache_dir, prefix=f".teacher_{key}.", suffix=".tmp")
        os.close(handle)
        try:
            torch.save(model.state_dict(), tmp)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    model.eval()
    return model, False
