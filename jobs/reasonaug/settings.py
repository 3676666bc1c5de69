"""The ReasonAug run's config sections: the agent sections with ReasonAug's keyword arguments checked at config
time, and its own `reasonaug` section. A bad key or value exits 2 naming it, before Ray starts."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from raygent.platform.config import check_known_keys, first_error
from raygent.platform.rl.reward import RewardSettings
from raygent.platform.rl.settings import AgentRunConfig, EnvSettings
from raygent.rewards.reasonaug.magr import MAGRSettings

MAGR_ENTRY = "raygent.rewards.reasonaug.magr:MAGR"
SAE_ENTRY = "raygent.jobs.reasonaug.entropy:SelectiveEntropy"
ENV_KWARGS = ("instruction",)
VARIANTS = ("closed", "nogate", "open", "random", "none")
Variant = Literal["closed", "nogate", "open", "random", "none"]


class ReasonAugEnvSettings(EnvSettings):
    """`kwargs` checked here; `task_kwargs` by the platform, against `reasonaug_tasks`'s annotations."""

    @field_validator("kwargs")
    @classmethod
    def _env_kwargs(cls, value: dict[str, Any]) -> dict[str, Any]:
        check_known_keys("kwargs", value, ENV_KWARGS)
        if "instruction" in value and value["instruction"] not in ("policy", "random"):
            raise ValueError(f"kwargs.instruction: expected 'policy' or 'random', got {value['instruction']!r}")
        return value


class ReasonAugRewardSettings(RewardSettings):
    @model_validator(mode="after")
    def _magr(self) -> ReasonAugRewardSettings:
        if self.entry != MAGR_ENTRY:
            raise ValueError(f"entry: ReasonAug's loop lives in its reward model; expected {MAGR_ENTRY!r}")
        if self.num_actors != 1:
            raise ValueError("num_actors: MAGR owns the ReID model of the closed loop, so it runs in exactly 1 actor")
        check_known_keys("kwargs", self.kwargs, tuple(MAGRSettings.model_fields))
        try:
            MAGRSettings.model_validate(self.kwargs)
        except ValidationError as exc:
            raise ValueError(f"kwargs.{first_error(exc)}") from None
        return self


class ReasonAugSection(BaseModel):
    """`reasonaug:` the variant of the loop, and the reference judge's data."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    variant: Variant = "closed"
    """closed: GRPO on MAGR, ReID retrained on gated edits. nogate: the same with the gate off (every valid edit
    accepted, hardness paid whatever the identity). open: the SFT policy's fixed instruction distribution (its
    update zeroed), gated. random: uniformly random identity-preserving edits, gated. none: no edit accepted."""
    judge_per_id: int = Field(default=8, ge=1)
    """Identity-preserving renders per train identity for the frozen reference judge."""
    cache: bool = True
    """Reuse the starting ReID model and the judge of the same world and settings (`$RAYGENT_CACHE/reasonaug`)."""


class ReasonAugRunConfig(AgentRunConfig):
    """`AgentRunConfig` with ReasonAug's sections checked (module docstring)."""

    env: ReasonAugEnvSettings
    reward: ReasonAugRewardSettings | None = None
    reasonaug: ReasonAugSection = ReasonAugSection()

    @model_validator(mode="after")
    def _needs_magr(self) -> ReasonAugRunConfig:
        if self.reward is None:
            raise ValueError(f"reward: ReasonAug needs its reward model ({MAGR_ENTRY})")
        return self
