"""`LossConfig`: every knob of the losses and of the advantage computation, in one frozen model.

The trainer validates it from the job config, writes `model_dump()` into the run's metadata, and calls a loss
as `LOSSES[name](**batch, **config.loss_kwargs(name))`. Defaults are DeepSeekMath's GRPO without the KL term
(so no reference model is loaded) and with DAPO's token-mean; a recipe sets the rest (e.g. SEAgent: kl_coef
0.04, aggregation seq-mean-token-mean, adversarial_imitation_coef 0.2; DAPO: clip_high 0.28,
filter_zero_variance_groups, mask_truncated).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from raygent.platform.contracts import ZERO_VARIANCE_ATOL
from raygent.platform.losses.aggregation import Aggregation
from raygent.platform.losses.kl import KLEstimator


class LossConfig(BaseModel):
    """The loss knobs. Which fields each loss takes is `loss_kwargs`; the rest feed `advantages.py` and
    `importance.py` in the trainer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy_loss: Literal["grpo", "ppo"] = "grpo"
    # advantages (advantages.py)
    normalize_std: bool = True
    advantage_eps: float = Field(default=1e-6, ge=0.0)
    filter_zero_variance_groups: bool = False
    zero_variance_atol: float = Field(default=ZERO_VARIANCE_ATOL, ge=0.0)
    mask_truncated: bool = False
    # policy term (grpo.py, ppo.py)
    clip_low: float = Field(default=0.2, ge=0.0, lt=1.0)
    clip_high: float = Field(default=0.2, ge=0.0)
    aggregation: Aggregation = "token-mean"
    kl_coef: float = Field(default=0.0, ge=0.0)
    kl_estimator: KLEstimator = "k3"
    # off-policy correction for stale samples (importance.py)
    off_policy_correction: Literal["none", "truncated_is"] = "none"
    importance_weight_cap: float = Field(default=2.0, gt=0.0)
    # PPO's value loss (ppo.py)
    value_coef: float = Field(default=0.5, ge=0.0)
    value_clip: float | None = Field(default=None, gt=0.0)
    # SEAgent's adversarial imitation of failure actions (adversarial_imitation.py); 0 turns it off
    adversarial_imitation_coef: float = Field(default=0.0, ge=0.0)
    adversarial_imitation_beta: float = Field(default=1.0, gt=0.0)

    @property
    def needs_reference_model(self) -> bool:
        """Whether the learner must hold a frozen reference policy: only for the KL term or adversarial imitation."""
        return self.kl_coef > 0 or self.adversarial_imitation_coef > 0

    def loss_kwargs(self, name: str) -> dict[str, Any]:
        """The keyword arguments of `LOSSES[name]` that this config sets."""
        if name == "grpo":
            return {
                "clip_low": self.clip_low,
                "clip_high": self.clip_high,
                "kl_coef": self.kl_coef,
                "kl_estimator": self.kl_estimator,
                "aggregation": self.aggregation,
            }
        if name == "ppo":
            return {
                "clip_low": self.clip_low,
                "clip_high": self.clip_high,
                "aggregation": self.aggregation,
                "value_coef": self.value_coef,
                "value_clip": self.value_clip,
            }
        if name == "adversarial_imitation":
            return {
                "gamma": self.adversarial_imitation_coef,
                "beta": self.adversarial_imitation_beta,
                "aggregation": self.aggregation,
            }
        if name == "sft":
            return {}
        raise KeyError(f"no loss named {name!r}; expected grpo, ppo, adversarial_imitation or sft")
