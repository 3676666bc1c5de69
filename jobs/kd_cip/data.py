"""Synthetic sequence classification built from token conjunctions, with a spurious order-4 pattern.

A sample is `[CLS] x_0 … x_7`; the 8 positions are the interaction players. Token 0 is BLANK (the absent-word
token and the masking baseline), token 1 is CLS, then `n_words` content words (a fixed half of them is the group
G) and, last, `block_words` block words (the first half of them is the group H).

- Rule (low order): b_i = [x_i ∈ G] at the rule positions 0..3. The label is drawn from
  P(y=1|x) = σ(a·(b_0 b_1 + b_2 b_3) − a/2): a logistic rule over two token conjunctions, so its log-odds are
  two order-2 AND interactions (relative to the BLANK baseline) and the labels are noisy at finite a.
- Spurious pattern (order k = `block_size`, default 3; the notes' 4-token pattern is `block_size: 4`) on the
  block of the last k positions, `spurious="parity"` (default): the block holds block words (or BLANK); when it
  has no BLANK, "an even number of H-words" holds with probability r = `spurious_rate` if y = 1 and 1 − r if
  y = 0; otherwise the block's words are uniform. Every marginal and every smaller set of block words is
  independent of y, so the pattern carries information only through the k-way conjunction, and the Bayes
  log-odds gain one pure order-k AND interaction ±log(r/(1−r)) on the block.
- `spurious="trigger"` (the method notes' form): a fixed k-word phrase is written into the block with
  probability `spurious_rate` when y = 1 and `trigger_rate_neg` when y = 0, and a share `decoy_rate` of the
  other blocks are near-misses (all but one of its words). Its single words are informative on their own, so
  a student can re-encode it with low-order interactions (in our calibration CIP then did not raise OOD
  accuracy); the parity form has no such low-order shadow.
- OOD test set: the same block distribution with the pattern drawn independently of y, at its training
  frequency.
- Blanks: each sample draws q ~ U(0, blank_rate) and blanks each position with probability q, so masked inputs
  x_T, with any number of players masked, lie in the training distribution's support.

How this differs from the paper: the paper distils LLMs on instruction data; this is the method notes'
CPU-scale synthetic task [rec]. The parity form of the spurious pattern, the logistic rule and the blanks are
our choices, made so the rule is order 2 and the spurious cue order k in the Bayes log-odds; k = 3 because a
4-word parity was not learnt reliably by the tiny teacher within the CPU budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

BLANK = 0
CLS = 1
N_POSITIONS = 8
RULE_PAIRS = ((0, 1), (2, 3))
Spurious = Literal["parity", "trigger"]


@dataclass(frozen=True)
class TaskSpec:
    """The fixed structure of the task: vocabulary, word groups, spurious pattern and sampling rates."""

    n_words: int = 16
    block_words: int = 2
    rule_strength: float = 4.0
    spurious: Spurious = "parity"
    spurious_rate: float = 0.9
    trigger_rate_neg: float = 0.05
    decoy_rate: float = 0.5
    blank_rate: float = 0.4
    block_size: int = 4
    task_seed: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.block_size <= N_POSITIONS - 4:
            raise ValueError(f"block_size must be in 1..{N_POSITIONS - 4}, got {self.block_size}")

    @property
    def block(self) -> tuple[int, ...]:
        """The positions of the spurious block: the last `block_size` positions."""
        return tuple(range(N_POSITIONS - self.block_size, N_POSITIONS))

    @property
    def vocab_size(self) -> int:
        return self.n_words + self.block_words + 2

    def block_vocab(self) -> torch.Tensor:
        """(block_words,) long: the words of the parity block (their own sub-vocabulary), H their first half."""
        return torch.arange(self.block_words) + self.n_words + 2

    def groups(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(vocab,) bool masks of G (a fixed half of the content words) and H (half of the block words)."""
        gen = torch.Generator().manual_seed(self.task_seed)
        g, h = torch.zeros(self.vocab_size, dtype=torch.bool), torch.zeros(self.vocab_size, dtype=torch.bool)
        g[torch.randperm(self.n_words, generator=gen)[: self.n_words // 2] + 2] = True
        h[self.block_vocab()[: self.block_words // 2]] = True
        return g, h

    def trigger(self) -> torch.Tensor:
        """(4,) long: the trigger phrase of `spurious="trigger"`."""
        gen = torch.Generator().manual_seed(self.task_seed + 7919)
        return torch.randint(2, self.vocab_size, (self.block_size,), generator=gen)


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
    bits = spec.groups()[0][words[:, :4]].float()
    conj = sum((bits[:, i] * bits[:, j] for i, j in RULE_PAIRS), torch.zeros_like(bits[:, 0]))
    return spec.rule_strength * (conj - 0.5)


def parity(block: torch.Tensor, spec: TaskSpec) -> torch.Tensor:
    """(N, 4) block words → (N,) bool: an even number of them are H-words."""
    return spec.groups()[1][block].sum(dim=1) % 2 == 0


def _words(
    count: int, width: int, spec: TaskSpec, gen: torch.Generator, vocab: torch.Tensor | None = None
) -> torch.Tensor:
    """(count, width) uniform words of `vocab` (default: the content words); each row blanks each position
    with its own rate q ~ U(0, blank_rate)."""
    vocab = torch.arange(2, spec.n_words + 2) if vocab is None else vocab
    words = vocab[torch.randint(0, len(vocab), (count, width), generator=gen)]
    rate = torch.rand(count, 1, generator=gen) * spec.blank_rate
    return words.masked_fill(torch.rand(count, width, generator=gen) < rate, BLANK)


def _with_parity(block: torch.Tensor, even: torch.Tensor, spec: TaskSpec, gen: torch.Generator) -> torch.Tensor:
    """Move one uniformly chosen word of each wrong-parity block to the other half (uniform within it)."""
    block = block.clone()
    rows = torch.nonzero(parity(block, spec) != even).squeeze(1)
    h = spec.groups()[1]
    vocab = spec.block_vocab()
    in_h, out_h = vocab[h[vocab]], vocab[~h[vocab]]
    col = torch.randint(0, spec.block_size, (len(rows),), generator=gen)
    pick = torch.randint(0, len(in_h), (len(rows),), generator=gen)
    was_h = h[block[rows, col]]
    block[rows, col] = torch.where(was_h, out_h[pick % len(out_h)], in_h[pick])
    return block


def _parity_blocks(labels: torch.Tensor, spec: TaskSpec, gen: torch.Generator, ood: bool) -> torch.Tensor:
    block = _words(len(labels), spec.block_size, spec, gen, spec.block_vocab())
    rate = torch.where(labels == 1, spec.spurious_rate, 1.0 - spec.spurious_rate)
    if ood:  # the pattern's training frequency, independent of y
        rate = rate.mean().expand(len(labels))
    even = torch.rand(len(labels), generator=gen) < rate
    full = (block != BLANK).all(dim=1)
    block[full] = _with_parity(block[full], even[full], spec, gen)
    return block


def _trigger_blocks(labels: torch.Tensor, spec: TaskSpec, gen: torch.Generator, ood: bool) -> torch.Tensor:
    count, trigger = len(labels), spec.trigger()
    block = _words(count, spec.block_size, spec, gen)
    decoy = torch.nonzero(torch.rand(count, generator=gen) < spec.decoy_rate).squeeze(1)
    broken = torch.randint(0, spec.block_size, (len(decoy),), generator=gen)
    shift = torch.randint(1, spec.n_words, (len(decoy),), generator=gen)  # any word but the trigger's
    block[decoy] = trigger
    block[decoy, broken] = (trigger[broken] - 2 + shift) % spec.n_words + 2
    rate = torch.where(labels == 1, spec.spurious_rate, spec.trigger_rate_neg)
    if ood:
        rate = rate.mean().expand(count)
    block[torch.rand(count, generator=gen) < rate] = trigger
    return block


def sample(count: int, spec: TaskSpec, seed: int, ood: bool = False) -> Split:
    """Draw `count` samples; `ood=True` draws the spurious pattern independently of the label."""
    gen = torch.Generator().manual_seed(seed)
    words = _words(count, N_POSITIONS, spec, gen)
    logit = rule_logit(words, spec)
    labels = (torch.rand(count, generator=gen) < torch.sigmoid(logit)).long()
    make = _parity_blocks if spec.spurious == "parity" else _trigger_blocks
    words[:, list(spec.block)] = make(labels, spec, gen, ood)
    tokens = torch.cat((torch.full((count, 1), CLS), words), dim=1)
    return Split(tokens=tokens, labels=labels, rule_logit=logit)


def spurious_logit(tokens: torch.Tensor, spec: TaskSpec) -> torch.Tensor:
    """(N, 9) tokens → (N,) the Bayes log-odds the block adds in the training distribution (parity form)."""
    block = tokens[:, [p + 1 for p in spec.block]]
    sign = parity(block, spec).float() * 2.0 - 1.0
    strength = torch.log(torch.tensor(spec.spurious_rate / (1.0 - spec.spurious_rate)))
    return (block != BLANK).all(dim=1).float() * sign * strength
