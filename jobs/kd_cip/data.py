"""Synthetic sequence classification built from token conjunctions, with a spurious order-4 trigger.

A sample is `[CLS] x_0 … x_7`; the 8 positions are the interaction players. Token 0 is BLANK (the absent-word
token, also the masking baseline), token 1 is CLS, tokens 2… are content words.

- Rule (low order): a fixed half G of the content words; b_i = [x_i ∈ G] for rule positions i ∈ {0,1,2,3}.
  The label is drawn from P(y=1|x) = σ(a·(b_0 b_1 + b_2 b_3) − a/2): a logistic rule over two token
  conjunctions, so its log-odds are exactly two order-2 AND interactions and labels are noisy at finite a.
- Spurious trigger (order 4): positions 4..7 form a block. The training distribution writes the trigger
  phrase (t_4, t_5, t_6, t_7) into the block with probability `trigger_rate` when y = 1, and otherwise draws
  the block from a background where a share `decoy_rate` of blocks are near-misses (three trigger words, one
  other word). Under this distribution log P(block|y=1)/P(block|y=0) depends only on whether all four trigger
  words are present, so the Bayes log-odds add one pure order-4 AND interaction to the rule.
- OOD test set: the same block distribution (same trigger frequency) drawn independently of y.
- Blanks: each sample draws a rate q ~ U(0, blank_rate) and blanks every rule position and every background
  block position with probability q, so masked inputs x_T, with any number of players masked, lie in the
  training distribution's support and the model's reward on them is learnt, not extrapolated.

How this differs from the paper: the paper distils LLMs on instruction data; this is the method notes'
CPU-scale synthetic task [rec]; the logistic rule (rather than a deterministic one) and the decoys are our
choices, made so the rule is order 2 and the trigger order 4 in the Bayes log-odds.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

BLANK = 0
CLS = 1
N_POSITIONS = 8
RULE_PAIRS = ((0, 1), (2, 3))
TRIGGER_POSITIONS = (4, 5, 6, 7)


@dataclass(frozen=True)
class TaskSpec:
    """The fixed structure of the task: vocabulary, rule word groups, trigger phrase, sampling rates."""

    n_words: int = 16
    rule_strength: float = 5.0
    trigger_rate: float = 0.8
    trigger_rate_neg: float = 0.05
    decoy_rate: float = 0.5
    blank_rate: float = 0.8
    task_seed: int = 0

    @property
    def vocab_size(self) -> int:
        return self.n_words + 2

    def groups(self) -> torch.Tensor:
        """(vocab,) bool: the word group G (a fixed half of the content words; BLANK and CLS are outside)."""
        gen = torch.Generator().manual_seed(self.task_seed)
        member = torch.zeros(self.vocab_size, dtype=torch.bool)
        member[torch.randperm(self.n_words, generator=gen)[: self.n_words // 2] + 2] = True
        return member

    def trigger(self) -> torch.Tensor:
        """(4,) long: the trigger phrase written into positions 4..7."""
        gen = torch.Generator().manual_seed(self.task_seed + 7919)
        return torch.randint(2, self.vocab_size, (len(TRIGGER_POSITIONS),), generator=gen)


@dataclass(frozen=True)
class Split:
    """A labelled set: tokens (N, 9) long with CLS first, labels (N,) long, rule log-odds (N,) float."""

    tokens: torch.Tensor
    labels: torch.Tensor
    rule_logit: torch.Tensor

    def __len__(self) -> int:
        return int(self.labels.shape[0])


def rule_logit(words: torch.Tensor, spec: TaskSpec) -> torch.Tensor:
    """(N, 8) words → (N,) log-odds a·(b_0 b_1 + b_2 b_3) − a/2 of the rule."""
    bits = spec.groups()[words[:, :4]].float()
    conj = sum(bits[:, i] * bits[:, j] for i, j in RULE_PAIRS)
    return spec.rule_strength * (conj - 0.5)


def _content(shape: tuple[int, int], spec: TaskSpec, gen: torch.Generator) -> torch.Tensor:
    """(N, k) random content words; each sample blanks each position with its own rate q ~ U(0, blank_rate)."""
    words = torch.randint(2, spec.vocab_size, shape, generator=gen)
    rate = torch.rand(shape[0], 1, generator=gen) * spec.blank_rate
    blank = torch.rand(shape, generator=gen) < rate
    return words.masked_fill(blank, BLANK)


def _background_blocks(count: int, spec: TaskSpec, gen: torch.Generator) -> torch.Tensor:
    """(count, 4) blocks: random words, a share `decoy_rate` of them near-misses of the trigger."""
    blocks = _content((count, 4), spec, gen)
    trigger = spec.trigger()
    decoy = torch.rand(count, generator=gen) < spec.decoy_rate
    if decoy.any():
        near = trigger.repeat(int(decoy.sum()), 1)
        broken = torch.randint(0, 4, (near.shape[0],), generator=gen)
        # the replacement word is any content word but the trigger's, so no near-miss is a full trigger
        shift = torch.randint(1, spec.n_words, (near.shape[0],), generator=gen)
        old = near[torch.arange(near.shape[0]), broken] - 2
        near[torch.arange(near.shape[0]), broken] = (old + shift) % spec.n_words + 2
        blocks[decoy] = near
    return blocks


def sample(count: int, spec: TaskSpec, seed: int, ood: bool = False) -> Split:
    """Draw `count` samples; `ood=True` draws the trigger block independently of the label."""
    gen = torch.Generator().manual_seed(seed)
    words = _content((count, N_POSITIONS), spec, gen)
    logit = rule_logit(words, spec)
    labels = (torch.rand(count, generator=gen) < torch.sigmoid(logit)).long()
    blocks = _background_blocks(count, spec, gen)
    rate = torch.where(labels == 1, spec.trigger_rate, spec.trigger_rate_neg)
    if ood:  # same trigger frequency as in training, independent of y
        rate = rate.mean().expand(count)
    with_trigger = torch.rand(count, generator=gen) < rate
    blocks[with_trigger] = spec.trigger()
    words[:, list(TRIGGER_POSITIONS)] = blocks
    tokens = torch.cat((torch.full((count, 1), CLS), words), dim=1)
    return Split(tokens=tokens, labels=labels, rule_logit=logit)


def has_trigger(split: Split, spec: TaskSpec) -> torch.Tensor:
    """(N,) bool: the full trigger phrase is present."""
    block = split.tokens[:, [p + 1 for p in TRIGGER_POSITIONS]]
    return (block == spec.trigger()).all(dim=1)
