"""The SEAgent run's config sections: the agent sections, `env.url`, and `seagent:`, checked at config time (a
bad key or value exits 2 naming it, before Ray starts)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from raygent.environments.web.registry import BUILTIN_APPS
from raygent.environments.web.url_env import check_url
from raygent.platform.config import first_error
from raygent.platform.rl.reward import RewardSettings
from raygent.platform.rl.settings import AgentRunConfig, EnvSettings, Section
from raygent.platform.rl.tasks import TaskSettings
from raygent.rewards.seagent.wsm import WSMSettings

WSM = "raygent.rewards.seagent.wsm:WorldStateModel"
CURRICULUM = "raygent.jobs.seagent.curriculum:Curriculum"
CURRICULA = "raygent.jobs.seagent.curriculum:Curricula"
TRAIN_APPS = ("code_editor", "image_editor", "word_processor", "slide_editor")


class SeagentEnvSettings(EnvSettings):
    url: str = ""
    """The app to learn (http(s) on loopback). Empty: `seagent.app` of the suite, served by the run on its own
    loopback server as a page the environment knows nothing about."""

    @field_validator("url")
    @classmethod
    def _loopback(cls, value: str) -> str:
        return check_url(value) if value else value


class SeagentSettings(Section):
    """The `seagent:` section."""

    variant: Literal["wsm", "checker"] = "wsm"
    """wsm: the curriculum's tasks on the URL judged by the World State Model (SEAgent); checker: the app's own
    train tasks with its checker as reward (the comparison; needs a suite app)."""
    app: str = "media_player"
    """The suite app served as the unknown page when `env.url` is empty, and whose held-out tasks (and checker)
    measure the agent."""
    wsm_model: str | None = None
    """A trained judge directory; None: fine-tuned by the run from the pretrained preset (cached)."""
    wsm_base: str = "smollm2-135m-instruct"
    wsm_apps: tuple[str, ...] = TRAIN_APPS
    """The apps whose checker-labelled trajectories train the judge (never the learned app)."""
    wsm_seeds: int = Field(default=1, ge=1)
    """Task seeds per template (difficulties 1 and 2) recorded for the judge's training."""
    wsm_eval_seeds: int = Field(default=2, ge=0)
    """Task seeds per template of the learned app for the judge's agreement with its checker (0: not measured)."""
    wsm_swapped: int = Field(default=0, ge=0)
    """Done questions per training trajectory under other tasks' instructions of its app, labelled by their
    checkers on its final state (`wsm_train.samples`). Measured with 2 (docs/seagent.md): the judge then called
    nothing done on the unseen app, and its first-error accuracy fell; so 0."""
    wsm_train_layers: int = Field(default=4, ge=1)
    wsm_epochs: int = Field(default=3, ge=1)
    wsm_lr: float = Field(default=2e-4, gt=0)
    record_workers: int = Field(default=2, ge=1)
    demo_workers: int = Field(default=3, ge=1)
    examples: int = Field(default=4, ge=0)
    judged_examples: int = Field(default=8, ge=0)
    screenshot_size: tuple[int, int] = (480, 300)
    generalist: tuple[str, ...] = ()
    """Specialist to generalist: a specialist self-evolves on each of these suite apps in turn
    (`RUN_DIR/specialists/<app>`), then a generalist starts from the same prior, is fine-tuned on the specialists'
    judged successes and self-evolves on all the apps at once. The judge and the prior are trained on the suite's
    other apps (`wsm_apps` and `sft.task_kwargs.apps` are replaced). Empty: one run on `app` (or `env.url`)."""
    generalist_steps: int | None = Field(default=None, ge=0)
    """The generalist's RL steps; None: `trainer.steps` × the number of apps (the specialists' steps together)."""
    distill_steps: int = Field(default=40, ge=0)
    """SFT steps on the specialists' judged successes before the generalist's first RL step."""
    distill_batch: int = Field(default=8, ge=1)
    """Successful trajectories per distillation step (a seeded draw, balanced over the apps)."""

    @field_validator("app")
    @classmethod
    def _suite_app(cls, value: str) -> str:
        if value not in BUILTIN_APPS:
            raise ValueError(f"expected one of the suite's apps {BUILTIN_APPS}, got {value!r}")
        return value

    @field_validator("generalist")
    @classmethod
    def _generalist_apps(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [a for a in value if a not in BUILTIN_APPS]
        if unknown:
            raise ValueError(f"unknown apps {unknown}; expected the suite's apps {BUILTIN_APPS}")
        if value and (len(set(value)) < 2 or len(set(value)) == len(BUILTIN_APPS)):
            raise ValueError(f"a generalist needs at least 2 distinct apps and leaves one to train the judge, "
                             f"got {list(value)}")  # fmt: skip
        return tuple(dict.fromkeys(value))

    @model_validator(mode="after")
    def _held_out(self) -> SeagentSettings:
        if self.app in self.wsm_apps:
            raise ValueError(f"wsm_apps: the learned app {self.app!r} must not train the judge")
        unknown = [a for a in self.wsm_apps if a not in BUILTIN_APPS]
        if unknown:
            raise ValueError(f"wsm_apps: unknown apps {unknown}")
        return self


class SeagentRewardSettings(RewardSettings):
    @model_validator(mode="after")
    def _wsm_kwargs(self) -> SeagentRewardSettings:
        if self.entry == WSM:
            kwargs: dict[str, Any] = {"model": "unset", **self.kwargs}
            try:
                settings = WSMSettings.model_validate(kwargs)
            except ValidationError as exc:
                raise ValueError(f"kwargs.{first_error(exc)}") from None
            if settings.backend == "vlm":  # its model is the endpoint's, not one this run fine-tunes
                for key in ("endpoint", "model"):
                    if key not in self.kwargs:
                        raise ValueError(f"kwargs.{key}: the vlm backend needs the endpoint and the model it serves")
        return self


class SeagentTaskSettings(TaskSettings):
    @model_validator(mode="after")
    def _curriculum_kwargs(self) -> SeagentTaskSettings:
        if self.source in (CURRICULUM, CURRICULA):
            from raygent.jobs.seagent.curriculum import CurriculumSettings

            own = {k: v for k, v in self.kwargs.items() if not (self.source == CURRICULA and k == "urls")}
            try:
                CurriculumSettings.model_validate({"url": "http://127.0.0.1:1/", **own})
            except ValidationError as exc:
                raise ValueError(f"kwargs.{first_error(exc)}") from None
        return self


class SeagentConfig(AgentRunConfig):
    """The sections of `jobs/configs/seagent.yaml`."""

    env: SeagentEnvSettings
    reward: SeagentRewardSettings | None = None
    tasks: SeagentTaskSettings = SeagentTaskSettings()
    seagent: SeagentSettings = SeagentSettings()

    @model_validator(mode="after")
    def _generalist_run(self) -> SeagentConfig:
        if self.seagent.generalist:
            if self.seagent.variant != "wsm":
                raise ValueError("seagent.generalist: specialists and generalist self-evolve (variant: wsm)")
            if self.env.url:
                raise ValueError("seagent.generalist: the apps are the suite's, served by the run (env.url is empty)")
            if self.rollout.groups_per_step < len(self.seagent.generalist):
                raise ValueError("rollout.groups_per_step: the generalist needs at least one group per app")
        return self
