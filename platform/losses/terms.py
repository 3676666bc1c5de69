"""Loss terms: what the learner sums. Each term is a small frozen config (its knobs, `coef` first) with a pure
`loss(inputs, mask, denominator)` over the tensors of one micro-batch.

    learner.loss.terms:
      - {name: grpo, clip_high: 0.28}                    # the policy-gradient term (DAPO's clip-higher)
      - {name: kl, coef: 0.04, estimator: k3}            # KL to the frozen reference model
      - {name: adversarial_imitation, coef: 0.2}         # SEAgent: push away from judged failure steps
      - {name: entropy, coef: 0.001}                     # an entropy bonus
      - {name: sft, coef: 0.1}                           # imitation of the batch's better-than-average samples
      - {name: "my_pkg.losses:MyTerm", coef: 0.5, ...}   # a plugin: any class with this interface, its knobs
                                                         # inline, checked against its `Settings` (platform.plugins)

A term says which samples it covers (`covers`: e.g. only judged failure steps); the learner reduces each term
with the *whole batch's* count of the samples it covers (`denominator`), so micro-batching and data-parallel
shards add up to the full batch's loss. A term that needs the frozen reference policy sets `needs_reference`
(the learner then loads one). Terms never see trajectories or Ray: only tensors (`TermInputs`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from torch import Tensor

from raygent.platform.losses.adversarial_imitation import adversarial_imitation_loss
from raygent.platform.losses.aggregation import Aggregation, aggregate, masked_fill_zero, masked_mean
from raygent.platform.losses.grpo import grpo_loss
from raygent.platform.losses.kl import KLEstimator, kl_estimate
from raygent.platform.losses.logprobs import entropy_from_logits
from raygent.platform.losses.result import LossResult
from raygent.platform.losses.sft import sft_loss


@dataclass(frozen=True)
class TermInputs:
    """One micro-batch as the terms see it (B sequences, T response positions, V vocabulary).

    logprobs `[B, T]` (differentiable), proximal `[B, T]` (the learner's log-probabilities at the start of the
    update, detached), logits `[B, T, V]` (differentiable; position t scores response token t), response_ids
    `[B, T]`, loss_mask `[B, T]`, advantages `[B]`, failure `[B]` (bool), ref_logprobs `[B, T]` (when a term
    needs the reference), importance_weights `[B, T]` (stale-sample correction, or None), aggregation.
    """

    logprobs: Tensor
    proximal: Tensor
    logits: Tensor
    response_ids: Tensor
    loss_mask: Tensor
    advantages: Tensor
    failure: Tensor
    aggregation: Aggregation
    ref_logprobs: Tensor | None = None
    importance_weights: Tensor | None = None


@runtime_checkable
class LossTerm(Protocol):
    """The interface of a term (built-in or plugin). `name` prefixes its stats (`learner/<name>/...`)."""

    @property
    def name(self) -> str: ...

    @property
    def coef(self) -> float: ...

    needs_reference: ClassVar[bool]

    def covers(self, advantages: Tensor, failure: Tensor) -> Tensor:
        """bool `[B]`: which samples this term trains on (its denominator counts only these)."""
        ...

    def loss(self, inputs: TermInputs, mask: Tensor, denominator: float) -> LossResult:
        """The term's scalar loss (already scaled by `coef`) over `mask` (`loss_mask` of the covered samples)."""
        ...


class Term(BaseModel):
    """Base of the built-in terms: a frozen config; every sample covered, no reference model."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    needs_reference: ClassVar[bool] = False

    name: str
    coef: float = Field(default=1.0, ge=0.0)

    def covers(self, advantages: Tensor, failure: Tensor) -> Tensor:
        return torch.ones_like(failure, dtype=torch.bool)

    def loss(self, inputs: TermInputs, mask: Tensor, denominator: float) -> LossResult:
        raise NotImplementedError


class GRPOTerm(Term):
    """The clipped policy-gradient surrogate (`grpo.grpo_loss`, KL left to `KLTerm`); logs entropy from the logits."""

    name: Literal["grpo"] = "grpo"
    clip_low: float = Field(default=0.2, ge=0.0, lt=1.0)
    clip_high: float = Field(default=0.2, ge=0.0)

    def loss(self, inputs: TermInputs, mask: Tensor, denominator: float) -> LossResult:
        result = grpo_loss(
            inputs.logprobs,
            inputs.proximal,
            inputs.advantages,
            mask,
            clip_low=self.clip_low,
            clip_high=self.clip_high,
            aggregation=inputs.aggregation,
            importance_weights=inputs.importance_weights,
            logits=inputs.logits.detach(),
            denominator=denominator,
        )
        return LossResult(self.coef * result.loss, result.stats)


class KLTerm(Term):
    """coef · aggregate(k(log π_θ, log π_ref)): DeepSeekMath's KL penalty as its own term (k1, k2 or k3)."""

    needs_reference: ClassVar[bool] = True
    name: Literal["kl"] = "kl"
    coef: float = Field(default=0.04, ge=0.0)
    estimator: KLEstimator = "k3"

    def loss(self, inputs: TermInputs, mask: Tensor, denominator: float) -> LossResult:
        assert inputs.ref_logprobs is not None, "the learner loads a reference model for this term"
        logprobs = masked_fill_zero(inputs.logprobs.float(), mask)
        kl = kl_estimate(logprobs, masked_fill_zero(inputs.ref_logprobs.float(), mask), self.estimator)
        loss = self.coef * aggregate(kl, mask, inputs.aggregation, denominator)
        return LossResult(loss, {"loss": loss.detach(), "kl_ref": masked_mean(kl.detach(), mask)})


class AdversarialImitationTerm(Term):
    """SEAgent's adversarial imitation (`adversarial_imitation.py`) on the judged failure steps; `coef` is γ."""

    needs_reference: ClassVar[bool] = True
    name: Literal["adversarial_imitation"] = "adversarial_imitation"
    coef: float = Field(default=0.2, ge=0.0)
    beta: float = Field(default=1.0, gt=0.0)

    def covers(self, advantages: Tensor, failure: Tensor) -> Tensor:
        return failure.bool()

    def loss(self, inputs: TermInputs, mask: Tensor, denominator: float) -> LossResult:
        assert inputs.ref_logprobs is not None, "the learner loads a reference model for this term"
        return adversarial_imitation_loss(
            inputs.logprobs,
            inputs.ref_logprobs,
            mask,
            gamma=self.coef,
            beta=self.beta,
            aggregation=inputs.aggregation,
            denominator=denominator,
        )


class EntropyTerm(Term):
    """An entropy bonus: −coef · aggregate(H(π_θ(·|s_t))) over the trained tokens (raises entropy when coef > 0)."""

    name: Literal["entropy"] = "entropy"
    coef: float = Field(default=0.001, ge=0.0)

    def loss(self, inputs: TermInputs, mask: Tensor, denominator: float) -> LossResult:
        entropy = entropy_from_logits(inputs.logits)
        value = aggregate(entropy, mask, inputs.aggregation, denominator)
        return LossResult(-self.coef * value, {"loss": (-self.coef * value).detach(), "entropy": value.detach()})


class SFTTerm(Term):
    """coef · token-mean cross-entropy on the responses of samples with advantage > `min_advantage` (default 0:
    the better-than-average samples of their group, a self-imitation term). `min_advantage: null` covers all."""

    name: Literal["sft"] = "sft"
    min_advantage: float | None = 0.0

    def covers(self, advantages: Tensor, failure: Tensor) -> Tensor:
        if self.min_advantage is None:
            return torch.ones_like(failure, dtype=torch.bool)
        return advantages > self.min_advantage

    def loss(self, inputs: TermInputs, mask: Tensor, denominator: float) -> LossResult:
        result = sft_loss(inputs.logits, inputs.response_ids, mask, denominator=denominator)
        return LossResult(self.coef * result.loss, result.stats)


TERMS: dict[str, type[Term]] = {
    term.model_fields["name"].default: term
    for term in (GRPOTerm, KLTerm, AdversarialImitationTerm, EntropyTerm, SFTTerm)
}
"""The built-in terms by name (the explicit registry; a plugin is named by `"module:attr"` instead)."""


def build_term(spec: dict[str, Any]) -> LossTerm:
    """A term from its config: `{name: <built-in or "module:attr">, coef: ..., <its knobs>}`.

    Raises ValueError naming the term when the name is unknown or a knob is invalid.
    """
    from raygent.platform.config import ConfigError, check_entry, reject_bool_numbers
    from raygent.platform.plugins import Component, build, check_settings

    spec = dict(spec)
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"a loss term needs a name (one of {', '.join(TERMS)}, or 'module:attr' of a term class)")
    if ":" in name:  # a plugin: a component whose kwargs are written inline (`platform.plugins`)
        spec.pop("name")
        try:
            check_entry(name, "class", "a loss term class")
            check_settings(name, spec, where="")
            term = build(Component.model_construct(entry=name, kwargs=spec), LossTerm)
        except (TypeError, ValidationError) as error:
            raise ValueError(f"loss term {name!r}: {error}") from None
        except ValueError as error:
            raise ValueError(f"loss term {name!r}: {error}") from None
    elif name not in TERMS:
        close = difflib.get_close_matches(name, list(TERMS), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown loss term {name!r}{hint}; expected one of {', '.join(TERMS)} or 'module:attr'")
    else:
        try:
            term = TERMS[name].model_validate(spec)
        except ValidationError as error:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors())
            raise ValueError(f"loss term {name!r}: {problems}") from None
    try:
        reject_bool_numbers(spec, term)  # `coef: true` is not 1.0
    except ConfigError as error:
        raise ValueError(f"loss term {name!r}: {error}") from None
    return term
