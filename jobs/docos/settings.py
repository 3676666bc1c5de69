"""The DocOS run's config sections: the agent sections with DocOS's own keyword arguments checked at config time
(a bad `rollout.agent_kwargs` or `docos` key or value exits 2 naming it, before Ray starts; `env.task_kwargs` are
checked by the platform against `docos_tasks`'s annotated parameters)."""

from __future__ import annotations

from pydantic import Field, ValidationError, model_validator

from raygent.jobs.docos.loop import DocLoopSettings
from raygent.platform.config import first_error
from raygent.platform.rl.settings import AgentRunConfig, RolloutSettings, Section

LOOP = "raygent.jobs.docos.loop:DocLoop"


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

    rollout: DocOSRolloutSettings = DocOSRolloutSettings()
    docos: DocOSSettings = DocOSSettings()
