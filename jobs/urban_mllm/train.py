"""Structural pre-training, instruction tuning on the task mix, and per-task accuracy on held-out cities."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from raygent.jobs.urban_mllm.city import HEADINGS, HEIGHT_BINS, LAND_USES
from raygent.jobs.urban_mllm.model import UrbanMLLM, answer, sequence_loss
from raygent.jobs.urban_mllm.tokens import TASKS, Corpus, ids

CHOICES = {
    "sat_landuse": ids(*LAND_USES),
    "street_height": ids(*HEIGHT_BINS),
    "cross_match": ids("A", "B", "C", "D"),
    "cross_heading": ids(*HEADINGS),
}


@dataclass(frozen=True)
class StageSettings:
    steps: int
    batch_size: int
    lr: float


def _optimise(model: UrbanMLLM, settings: StageSettings, next_loss: LossFn) -> list[float]:
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=settings.lr, total_steps=settings.steps,
                                                   pct_start=0.1)
    model.train()
    losses: list[float] = []
    window: list[float] = []
    for step in range(settings.steps):
        loss = next_loss()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        window.append(float(loss.detach()))
        if (step + 1) % 50 == 0 or step + 1 == settings.steps:
            losses.append(float(np.mean(window)))
            window = []
    model.eval()
    return losses


class LossFn:
    """A callable returning the loss of a freshly drawn batch."""

    def __init__(self, model: UrbanMLLM, corpus: Corpus, rng: np.random.Generator, batch_size: int,
                 mode: str | None) -> None:
        self.model, self.corpus, self.rng, self.batch_size, self.mode = model, corpus, rng, batch_size, mode

    def __call__(self) -> torch.Tensor:
        if self.mode is not None:
            batch = self.corpus.pretrain_batch(self.mode, self.rng, self.batch_size)
        else:
            task = TASKS[int(self.rng.integers(len(TASKS)))]
            batch, _ = self.corpus.task_batch(task, self.rng, self.batch_size)
        return sequence_loss(self.model, batch)


def pretrain(model: UrbanMLLM, corpus: Corpus, mode: str, settings: StageSettings, seed: int) -> list[float]:
    """Next-token loss on the text of `pairs` or `interleaved` documents; returns the mean loss every 50 steps."""
    rng = np.random.default_rng(seed)
    return _optimise(model, settings, LossFn(model, corpus, rng, settings.batch_size, mode))


def instruction_tune(model: UrbanMLLM, corpus: Corpus, settings: StageSettings, seed: int) -> list[float]:
    """Answer-token loss on the four tasks, one task per step drawn uniformly."""
    rng = np.random.default_rng(seed + 7919)
    return _optimise(model, settings, LossFn(model, corpus, rng, settings.batch_size, None))


@torch.no_grad()
def evaluate(model: UrbanMLLM, corpus: Corpus, n: int, seed: int, batch_size: int = 100) -> dict[str, float]:
    """Accuracy of each task on `n` questions drawn from `corpus` (held-out cities)."""
    rng = np.random.default_rng(seed)
    model.eval()
    scores = {}
    for task in TASKS:
        correct = 0
        for start in range(0, n, batch_size):
            batch, truth = corpus.task_batch(task, rng, min(batch_size, n - start))
            correct += int((answer(model, batch, CHOICES[task]).numpy() == truth).sum())
        scores[task] = correct / n
    return scores
