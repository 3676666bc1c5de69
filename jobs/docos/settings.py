"""The DocOS run's config sections: the agent sections with DocOS's own keyword arguments checked at config time
(a bad `env.task_kwargs`, `rollout.agent_kwargs` or `docos` key or value exits 2 naming it, before Ray starts)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError, field_validator, model_validator

from raygent.jobs.docos.loop import DocLoopSettings
from raygent.jobs.docos.tasks import VARIANTS
from raygent.platform.config import check_known_keys, first_error
from raygent.platform.rl.settings import AgentRunConfig, EnvSettings, RolloutSettings, Section

LOOP = "raygent.jobs.docos.loop:DocLoop"
TASK_KWARGS = (
    "apps",
    "templates",
    "difficulties",
    "exclude",
    "docs",
    "default_share",
    "none_share",
    "pool",
    "layouts",
    "grounding",
)


def check_task_kwargs(value: Mapping[str, Any]) -> None:
    """DocOS's task keyword arguments (`tasks.docos_tasks`): known keys, a known variant, shares in [0, 1]."""
    check_known_keys("task_kwargs", value, TASK_KWARGS)
    if "docs" in value and value["docs"] not in VARIANTS:
        raise ValueError(f"task_kwargs.docs: expected one of {', '.join(VARIANTS)}, got {value['docs']!r}")
    for key in ("default_share", "none_share"):
        if key in value and not (isinstance(value[key], int | float) and 0 <= value[key] <= 1):
            raise ValueError(f"task_kwargs.{key}: expected a number in [0, 1], got {value[key]!r}")
    for key in ("pool", "layouts"):
        if key in value and not (isinstance(value[key], int) and not isinstance(value[key], bool) and value[key] >= 1):
            raise ValueError(f"task_kwargs.{key}: expected an integer >= 1, got {value[key]!r}")


class DocOSEnvSettings(EnvSettings):
    @field_validator("task_kwargs")
    @classmethod
    def _task_kwargs(cls, value: dict[str, Any]) -> dict[str, Any]:
        check_task_kwargs(value)
        return value


class DocOSRolloutSettings(RolloutSettings):
    @model_validator(mode="after")
    def _loop_kwargs(self) -> DocOSRolloutSettings:
        if self.agent == LOOP:
            try:
                DocLoopSettings.model_validate(self.agent_kwargs)
            except ValidationError as exc:
                raise ValueError(f"agent_kwargs.{first_error(exc)}") from None
        return self


class DocOSSettings(Section):
    """The `docos:` section."""

    reader: bool = True
    """Run the scripted reader (the upper bound) on the evaluation tasks."""
    demo_workers: int = Field(default=3, ge=1)
    """Browser threads that record missing demonstrations and the reader's episodes."""
    examples: int = Field(default=3, ge=0)
    """Trajectories shown in `docos.html` (tools variant, randomized layouts, after GRPO)."""
    tokenizer_layouts: int = Field(default=8, ge=0)
    """Layouts whose doc pages go into the tokenizer's text."""


class DocOSConfig(AgentRunConfig):
    """`AgentRunConfig` with DocOS's sections checked (module docstring)."""

    env: DocOSEnvSettings
    rollout: DocOSRolloutSettings = DocOSRolloutSettings()
    docos: DocOSSettings = DocOSSettings()
