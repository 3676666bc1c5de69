"""`LossConfig`: how a batch of judged trajectories becomes a loss, in one frozen model.

- **advantages** (computed on the driver, `advantages.py`): the estimator by name (`grpo` group-normalised,
  `drgrpo` without the std, `rloo` leave-one-out) or a plugin's `"module:attr"` (a function
  `f(rewards, group_index, *, eps) -> advantages`), the zero-variance group filter and truncated-response masking;
- **terms** (`terms.py`): the list of loss terms the learner sums, each with its own knobs; the default is the
  GRPO policy term alone (DeepSeekMath's GRPO without the KL term, so no reference model is loaded);
- **aggregation** and the **off-policy correction** of stale samples (`importance.py`), shared by the terms.

A recipe sets the rest, e.g. SEAgent: `terms: [{name: grpo}, {name: kl, coef: 0.04}, {name: adversarial_imitation,
coef: 0.2}]`, `aggregation: seq-mean-token-mean`; DAPO: `terms: [{name: grpo, clip_high: 0.28}]`,
`filter_zero_variance_groups: true`, `mask_truncated: true`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from raygent.platform.contracts import ZERO_VARIANCE_ATOL
from raygent.platform.losses.advantages import check_estimator
from raygent.platform.losses.aggregation import Aggregation
from raygent.platform.losses.terms import LossTerm, build_term


class LossConfig(BaseModel):
    """The loss knobs (see the module docstring). `terms` holds each term's config as written; `built_terms()`
    returns the term objects (validated when the config is)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # advantages (advantages.py), on the driver
    advantage: str = "grpo"
    advantage_eps: float = Field(default=1e-6, ge=0.0)
    filter_zero_variance_groups: bool = False
    zero_variance_atol: float = Field(default=ZERO_VARIANCE_ATOL, ge=0.0)
    mask_truncated: bool = False
    # the terms the learner sums (terms.py)
    terms: tuple[dict[str, Any], ...] = ({"name": "grpo"},)
    aggregation: Aggregation = "token-mean"
    # off-policy correction for stale samples (importance.py)
    off_policy_correction: Literal["none", "truncated_is"] = "none"
    importance_weight_cap: float = Field(default=2.0, gt=0.0)

    @field_validator("advantage")
    @classmethod
    def _known_estimator(cls, value: str) -> str:
        return check_estimator(value)

    @field_validator("terms", mode="before")
    @classmethod
    def _valid_terms(cls, value: Any) -> Any:
        if not isinstance(value, list | tuple) or not value:
            raise ValueError("terms must be a non-empty list of {name: ..., <knobs>} mappings")
        for index, spec in enumerate(value):
            if isinstance(spec, str):
                spec = {"name": spec}
            if not isinstance(spec, dict):
                raise ValueError(f"terms[{index}] must be a mapping with a name, got {spec!r}")
            build_term(spec)  # raises ValueError naming the term
        names = [build_term({"name": s} if isinstance(s, str) else s).name for s in value]
        if len(set(names)) != len(names):
            raise ValueError(f"terms: each term may appear once, got {names}")
        return tuple({"name": s} if isinstance(s, str) else dict(s) for s in value)

    def built_terms(self) -> list[LossTerm]:
        """The term objects, in config order."""
        return [build_term(spec) for spec in self.terms]

    @property
    def needs_reference_model(self) -> bool:
        """Whether the learner must hold a frozen reference policy (a term such as KL or adversarial imitation)."""
        return any(term.needs_reference for term in self.built_terms())
