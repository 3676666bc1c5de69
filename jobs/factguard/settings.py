"""The FactGuard run's config sections: the agent sections, with FactGuard's own keyword arguments checked at
config time (a bad `env.task_kwargs`, `env.kwargs`, `rollout.agent_kwargs` or `reward.kwargs` exits 2 naming the
key, before Ray starts)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError, field_validator, model_validator

from raygent.environments.factguard.tools import check_budgets
from raygent.jobs.factguard.loop import LoopSettings
from raygent.platform.config import check_known_keys, first_error
from raygent.platform.rl.reward import RewardSettings
from raygent.platform.rl.settings import AgentRunConfig, EnvSettings, RolloutSettings
from raygent.rewards.factguard.decision_aware import DecisionCosts

LOOP = "raygent.jobs.factguard.loop:FactGuardLoop"
DECISION_AWARE = "raygent.rewards.factguard.decision_aware:DecisionAware"
OUTCOME_ONLY = "raygent.rewards.factguard.decision_aware:OutcomeOnly"
ENV_KWARGS = ("max_turns", "budgets")


class FactGuardEnvSettings(EnvSettings):
    """`kwargs` checked here; `task_kwargs` by the platform, against `factguard_tasks`'s annotations."""

    @field_validator("kwargs")
    @classmethod
    def _env_kwargs(cls, value: dict[str, Any]) -> dict[str, Any]:
        check_known_keys("kwargs", value, ENV_KWARGS)
        if "max_turns" in value and (not isinstance(value["max_turns"], int) or value["max_turns"] < 1):
            raise ValueError(f"kwargs.max_turns: expected an integer >= 1, got {value['max_turns']!r}")
        if "budgets" in value:
            check_budgets(value["budgets"])
        return value


class FactGuardRolloutSettings(RolloutSettings):
    @model_validator(mode="after")
    def _loop_kwargs(self) -> FactGuardRolloutSettings:
        if self.agent == LOOP:
            try:
                LoopSettings.model_validate(self.agent_kwargs)
            except ValidationError as exc:
                raise ValueError(f"agent_kwargs.{first_error(exc)}") from None
        return self


class FactGuardRewardSettings(RewardSettings):
    @model_validator(mode="after")
    def _costs(self) -> FactGuardRewardSettings:
        if self.entry in (DECISION_AWARE, OUTCOME_ONLY):
            check_known_keys("kwargs", self.kwargs, tuple(DecisionCosts.model_fields))
            try:
                DecisionCosts.model_validate(self.kwargs)
            except ValidationError as exc:
                raise ValueError(f"kwargs.{first_error(exc)}") from None
        return self


class FactGuardRunConfig(AgentRunConfig):
    """`AgentRunConfig` with FactGuard's sections checked (module docstring)."""

    env: FactGuardEnvSettings
    rollout: FactGuardRolloutSettings = FactGuardRolloutSettings()
    reward: FactGuardRewardSettings | None = None
