"""The selective (structure-aware) entropy term of ReasonAug: a loss-term plugin that allocates exploration per
instruction token by the slot the token fills (method notes §5.2, a reconstruction):

    L_SAE = - sum_t beta_{c(t)} * H(pi_theta(. | x, u_<t))

with c(t) the class of the slot whose *value* token t writes: `global` (bg, light), `identity` (top, bottom, item:
the ID-critical cues, locked with beta_identity <= 0, an entropy penalty) or `nuisance` (occ, shift: explored with
beta_nuisance > 0). Keys, separators and anything outside the grammar get no weight. Aggregated like every term
(token-mean over the batch's trained tokens by default, with the whole batch's denominator).

    learner.loss.terms:
      - {name: grpo, clip_high: 0.28}
      - {name: "raygent.jobs.reasonaug.entropy:SelectiveEntropy", beta_identity: -0.02, beta_nuisance: 0.02}

The term reads token ids only, so it finds the slots by decoding them with the run's tokenizer (`tokenizer`: the
policy's directory, which the reasonaug recipe fills in) and matching `key value` clauses of the grammar.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, ClassVar

import torch
from pydantic import BaseModel, ConfigDict, Field
from torch import Tensor

from raygent.environments.reasonaug.world import GLOBAL, IDENTITY, NUISANCE, SLOT_CLASS
from raygent.platform.losses.aggregation import aggregate, masked_mean
from raygent.platform.losses.logprobs import entropy_from_logits
from raygent.platform.losses.result import LossResult

CLASSES = ("other", GLOBAL, IDENTITY, NUISANCE)
CLAUSE = re.compile(r"(?:^|;)\s*([a-z]+)[ \t]+([a-z]+)")


@lru_cache(maxsize=4)
def _pieces(tokenizer_path: str) -> Any:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_path)
    cache: dict[int, str] = {}

    def piece(token_id: int) -> str:
        if token_id not in cache:
            cache[token_id] = str(tokenizer.decode([token_id], skip_special_tokens=True))
        return cache[token_id]

    return piece


def classify(pieces: list[str]) -> list[int]:
    """The class index (into `CLASSES`) of each token, given each token's decoded text: a token is of class c when
    its first non-space character lies in the value of a `key value` clause whose key is a slot of class c."""
    text = "".join(pieces)
    owner = [0] * len(text)
    for match in CLAUSE.finditer(text):
        slot_class = SLOT_CLASS.get(match.group(1))
        if slot_class is None:
            continue
        for position in range(match.start(2), match.end(2)):
            owner[position] = CLASSES.index(slot_class)
    classes, offset = [], 0
    for piece in pieces:
        stripped = len(piece) - len(piece.lstrip())
        first = offset + stripped
        classes.append(owner[first] if piece.strip() and first < len(text) else 0)
        offset += len(piece)
    return classes


class SelectiveEntropy(BaseModel):
    """The SAE loss term (module docstring); a `LossTerm` plugin."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    needs_reference: ClassVar[bool] = False

    name: str = "selective_entropy"
    coef: float = Field(default=1.0, ge=0.0)
    beta_global: float = 0.002
    beta_identity: float = -0.02
    beta_nuisance: float = 0.02
    tokenizer: str | None = None
    """The policy's tokenizer directory (filled in by the recipe)."""

    def covers(self, advantages: Tensor, failure: Tensor) -> Tensor:
        return torch.ones_like(failure, dtype=torch.bool)

    def token_classes(self, response_ids: Tensor) -> Tensor:
        """`[B, T]` class indices of the response tokens."""
        if self.tokenizer is None:
            raise ValueError("SelectiveEntropy needs `tokenizer` (the reasonaug recipe sets it to the policy's)")
        piece = _pieces(self.tokenizer)
        rows = [classify([piece(int(t)) for t in row]) for row in response_ids.tolist()]
        return torch.tensor(rows, dtype=torch.long, device=response_ids.device).reshape(response_ids.shape)

    def loss(self, inputs: Any, mask: Tensor, denominator: float) -> LossResult:
        classes = self.token_classes(inputs.response_ids)
        betas = torch.tensor([0.0, self.beta_global, self.beta_identity, self.beta_nuisance], device=classes.device)[
            classes
        ]
        entropy = entropy_from_logits(inputs.logits)
        value = aggregate(betas * entropy, mask, inputs.aggregation, denominator)
        loss = -self.coef * value
        stats = {"loss": loss.detach()}
        for index, name in enumerate(CLASSES[1:], start=1):
            stats[f"entropy_{name}"] = masked_mean(entropy.detach(), mask.bool() & (classes == index))
        return LossResult(loss, stats)
