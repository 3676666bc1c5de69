"""The config sections of an agent run, mirrored one-to-one by the YAML of a `kind: run` job.

An RL job's YAML has these top-level sections next to `job`, `kind`, `entry`: `policy`, `env`, `rollout`,
`learner`, `trainer`, `reward`, `tasks` (and whatever its recipe adds, e.g. `sft`). `raygent run grpo_toy
policy.backend=vllm policy.model=/models/qwen` changes the backend and model with no code change (docs/design.md §1).
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from raygent.platform.config import check_arguments, check_known_keys, entry_validator, load_entry, refuse_renamed
from raygent.platform.losses.config import LossConfig
from raygent.platform.plugins import Component, check_settings
from raygent.platform.rl.reward import RewardSettings
from raygent.platform.rl.schedule import ScheduleSettings
from raygent.platform.rl.tasks import TaskSettings
from raygent.policies.adapters import check_lora_targets, policy_config
from raygent.policies.backends.base import SamplingParams
from raygent.policies.loading import PolicyLoadError, check_model_reference
from raygent.policies.pretrained import PRETRAINED
from raygent.policies.prompts import PromptFormat


class Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PolicySettings(Section):
    """Which model, on which backend.

    `model`: a local checkpoint directory (a real model at cluster scale). When None, the recipe builds a tiny
    model of `preset` with a tokenizer trained on the environment's text and saves it in the run directory; both
    are then loaded through the same `load_policy` path a real checkpoint takes.
    """

    model: str | None = None
    """A pretrained preset's name (`smollm2-135m-instruct`) or a local checkpoint directory; anything else is a
    config error (checked here, before Ray starts). A validation context `{"remote_model_paths": True}` accepts a
    path that only exists on the cluster (still rejecting an unknown name that is not a path)."""
    preset: str = "tiny-qwen2"
    vocab_size: int = Field(default=512, ge=64)
    backend: Literal["hf", "vllm"] = "hf"
    dtype: str = "float32"
    backend_options: dict[str, Any] = Field(default_factory=dict)
    prompt: PromptFormat = PromptFormat()

    @field_validator("model")
    @classmethod
    def _model_loadable(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        remote = bool(info.context and info.context.get("remote_model_paths"))
        if remote and ("/" in value or "\\" in value) and value not in PRETRAINED:
            return value
        try:
            return check_model_reference(value)
        except PolicyLoadError as exc:
            raise ValueError(str(exc)) from None


class EnvSettings(Section):
    """The environment: a gymnasium id, its constructor kwargs, the function that registers it (`registration`),
    and the task function: `"module:attr"` of `f(split: str, seed: int, n: int) -> list[Task]` (train and eval
    tasks; the `tasks` section's source draws from it). No defaults: the platform names no environment or job."""

    id: str
    kwargs: dict[str, Any] = Field(default_factory=dict)
    registration: Annotated[str, entry_validator("function", "a function that registers the environment", 0)]
    tasks: Annotated[str, entry_validator("function", "a task source f(split, seed, n) -> list[Task]", 3)]
    task_kwargs: dict[str, Any] = Field(default_factory=dict)
    demonstrations: Annotated[str, entry_validator("function", "an expert f(tasks) -> list[turns]", 1)] | None = None
    """`"module:attr"` of `f(tasks: list[Task]) -> list[list[tuple[str, str]]]`: an expert's (observation,
    action) turns per task, for the SFT stage."""
    train_split: str = "train"
    eval_split: str = "heldout"

    @model_validator(mode="after")
    def _kwargs_fit_the_environment(self) -> EnvSettings:
        # the environment class (the gymnasium registration's entry point) may declare its kwargs as a `Settings`,
        # like a component's (`platform.plugins`): checked here, before Ray starts
        entry = registered_entry_point(self.registration, self.id)
        if entry is not None:
            check_settings(entry, self.kwargs)
        return self


def registered_entry_point(registration: str, env_id: str) -> str | None:
    """The `"module:attr"` entry point that `registration` registers `env_id` under in gymnasium, or None (an id it
    does not register, or a callable entry point)."""
    import gymnasium

    load_entry(registration)()
    spec = gymnasium.registry.get(env_id)
    entry = spec.entry_point if spec is not None else None
    return entry if isinstance(entry, str) and ":" in entry else None


class DynamicSamplingSettings(Section):
    """DAPO's dynamic sampling: a step draws batches of `groups_per_step` tasks until it holds `groups_per_step`
    groups whose rewards vary (zero-variance groups teach GRPO nothing and are left out of the update), at most
    `max_draws` batches a step (then it trains on what it has). Every draw is a batch of the task stream, so a
    resumed run draws the same ones."""

    max_draws: int = Field(default=4, ge=1)


class RolloutSettings(Section):
    """Rollout workers and engines. `groups_per_step` tasks × `group_size` samples make one training batch."""

    num_workers: int = Field(default=2, ge=1)
    envs_per_worker: int = Field(default=8, ge=1)
    num_engines: int = Field(default=1, ge=1)
    engine_num_cpus: float = Field(default=1.0, ge=0)
    worker_num_cpus: float = Field(default=0.0, ge=0)
    group_size: int = Field(default=8, ge=1)
    groups_per_step: int = Field(default=4, ge=1)
    max_turns: int = Field(default=4, ge=1)
    sampling: SamplingParams = SamplingParams(temperature=1.0, max_new_tokens=24)
    eval_sampling: SamplingParams = SamplingParams(temperature=0.0, max_new_tokens=24)
    """Each episode's sampling is seeded from `trainer.seed`, its batch, group and place (`tasks.batch_seed`); a
    `seed` in `sampling` or `eval_sampling` would do nothing and is refused."""
    episode_timeout_s: float = Field(default=120.0, gt=0)
    max_attempts: int = Field(default=3, ge=1)
    """Tries per episode (an environment crash or timeout restarts it) and per worker call (a dead worker)."""
    dynamic_sampling: DynamicSamplingSettings | None = None
    """Refill each step's batch with groups that carry reward variance (`{max_draws: 4}`; None: one draw)."""
    max_batch: int = Field(default=256, ge=1)
    """The most prompts an engine generates for in one backend call."""

    agent: Component = Component.model_construct(entry="raygent.platform.rl.agent_loop:ChatLoop", kwargs={})
    """The agent loop (`raygent.platform.rl.agent_loop`), a component: `{entry: "module:attr", kwargs: {...}}` (a bare
    `"module:attr"` is short for `{entry: ...}`); it builds prompts and turns completions into actions or tools."""

    @model_validator(mode="before")
    @classmethod
    def _agent_component(cls, data: Any) -> Any:
        refuse_renamed(data, {"agent_kwargs": "agent.kwargs"})
        if isinstance(data, dict) and isinstance(data.get("agent"), str):
            return {**data, "agent": {"entry": data["agent"]}}
        return data

    @field_validator("sampling", "eval_sampling")
    @classmethod
    def _unseeded(cls, value: SamplingParams) -> SamplingParams:
        if value.seed is not None or value.seeds is not None:
            raise ValueError("episodes are seeded from trainer.seed; leave out seed here")
        return value


class LoraSettings(Section):
    """LoRA adapters (`peft`) on the learner's linear layers: only the adapters train; weight sync sends only them
    (the engines hold the base and apply them); checkpoints hold the merged W + (alpha / rank)·B·A and them."""

    rank: int = Field(default=8, ge=1)
    alpha: float = Field(default=16.0, gt=0)
    dropout: float = Field(default=0.0, ge=0, lt=1)
    target_modules: list[str] = Field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])
    """Names (last component) of the `nn.Linear` modules that get adapters."""


class LearnerSettings(Section):
    """The learner group: `num_workers` actors in one `torch.distributed` group (gloo on CPU, NCCL on GPU), each
    training on a shard of the batch; `strategy: ddp` replicates the model, `fsdp` shards parameters, gradients
    and optimizer state (`torch.distributed.fsdp.fully_shard`) for models that do not fit one device."""

    num_workers: int = Field(default=1, ge=1)
    strategy: Literal["ddp", "fsdp"] = "ddp"
    lora: LoraSettings | None = None
    lr: float = Field(default=1e-4, gt=0)
    schedule: ScheduleSettings = ScheduleSettings()
    """Warm-up and decay of the rate within each stage (`platform.rl.schedule`; SFT's rate is `sft.lr`)."""
    weight_decay: float = Field(default=0.0, ge=0)
    adam_eps: float = Field(default=1e-8, gt=0)
    grad_clip: float | None = Field(default=1.0, gt=0)
    micro_batch_tokens: int = Field(default=4096, ge=64)
    """Padded tokens per forward/backward pass; gradients accumulate over micro-batches."""
    updates_per_batch: int = Field(default=1, ge=1)
    """Optimizer steps per rollout batch (PPO epochs); > 1 makes the clipped ratio matter."""
    loss: LossConfig = LossConfig()
    num_cpus: float = Field(default=1.0, ge=0)
    threads: int | None = Field(default=None, ge=1)
    """Torch threads of the learner; None keeps Ray's (one per reserved CPU). In sync mode the learner and the
    rollouts take turns, so a learner may use more threads than the CPUs it reserves."""
    device: str = "cpu"
    autocast: Literal["none", "bf16"] = "none"
    """Mixed precision of the learner's forward passes: `bf16` runs them under `torch.autocast` in bfloat16 (weights,
    gradients and optimizer state stay float32; logits are cast back to float32 before log-softmax). Faster where
    the hardware has bf16 matrix units (GPUs; CPUs with AVX512-BF16/AMX); the recorded logprobs of a float32 engine
    then differ from the learner's by bf16 rounding, which the PPO ratio sees as noise."""


class SFTSettings(Section):
    """The supervised stage before RL: `steps` optimizer steps of `batch_tasks` expert episodes each, on tasks
    of the train split filtered by `task_kwargs` (e.g. only some task types)."""

    steps: int = Field(default=0, ge=0)
    batch_tasks: int = Field(default=16, ge=1)
    lr: float | None = Field(default=None, gt=0)
    task_kwargs: dict[str, Any] = Field(default_factory=dict)


class TrainerSettings(Section):
    """The loop. `mode: async` keeps rollouts running while the learner trains; groups generated more than
    `max_staleness` versions ago are dropped (`stale: drop`) or trained with truncated importance weights
    (`stale: importance`, which sets the loss's off-policy correction)."""

    mode: Literal["sync", "async"] = "sync"
    steps: int = Field(default=20, ge=0)
    max_staleness: int = Field(default=1, ge=0)
    stale: Literal["drop", "importance"] = "drop"
    eval_every: int = Field(default=10, ge=0)
    eval_tasks: int = Field(default=64, ge=0)
    checkpoint_every: int = Field(default=5, ge=1)
    keep_checkpoints: int = Field(default=2, ge=1)
    seed: int = 0
    tensorboard: bool = True
    weight_sync: Literal["object_store", "nccl", "gloo"] = "object_store"
    hooks: list[Component] = Field(default_factory=list)
    """Trainer hooks (`raygent.platform.rl.hooks`): `{entry: "module:attr", kwargs: {...}}` each."""

    @model_validator(mode="after")
    def _staleness(self) -> TrainerSettings:
        if self.mode == "sync" and self.stale == "importance":
            raise ValueError("stale: importance only applies to mode: async")
        return self


class AgentRunConfig(Section):
    """The sections an agent recipe adds to its job config (see `platform.config.validate_config`)."""

    policy: PolicySettings = PolicySettings()
    env: EnvSettings
    rollout: RolloutSettings = RolloutSettings()
    learner: LearnerSettings = LearnerSettings()
    sft: SFTSettings = SFTSettings()
    trainer: TrainerSettings = TrainerSettings()
    reward: RewardSettings | None = None
    """The reward model (`raygent.platform.rl.reward`); None: the environment's own checker."""
    tasks: TaskSettings = TaskSettings()
    """The task source (`raygent.platform.rl.tasks`) over `env.tasks`."""

    @model_validator(mode="after")
    def _task_kwargs_are_parameters(self) -> AgentRunConfig:
        # a task function's keyword arguments are named and may be annotated: an unknown key (a typo) or a value its
        # annotation refuses is refused here, before Ray starts, instead of inside the workers; a function taking
        # **kwargs checks its own
        tasks = load_entry(self.env.tasks)
        parameters = inspect.signature(tasks).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            return self
        named = [n for n, p in list(parameters.items())[3:] if p.kind is not inspect.Parameter.VAR_POSITIONAL]
        for where, given in (("env.task_kwargs", self.env.task_kwargs), ("sft.task_kwargs", self.sft.task_kwargs)):
            check_known_keys(where, given, named)
            check_arguments(where, tasks, given)
        return self

    @model_validator(mode="after")
    def _lora_targets_exist(self) -> AgentRunConfig:
        if self.learner.lora is not None:  # else found only inside the learner actor (or not at all, for one typo)
            config = policy_config(self.policy.model, self.policy.preset, self.policy.vocab_size)
            if config is not None:
                check_lora_targets(self.learner.lora.target_modules, config)
        return self

    @model_validator(mode="after")
    def _weight_sync_beside_learner_group(self) -> AgentRunConfig:
        # ray.util.collective's gloo group reuses a process's default torch.distributed group, which a learner
        # group already holds (NCCL sync uses cupy's communicators and object_store none, so both work).
        if self.trainer.weight_sync == "gloo" and self.learner.num_workers > 1:
            raise ValueError(
                "trainer.weight_sync: gloo cannot run beside a learner group (learner.num_workers > 1); "
                "use object_store (CPU) or nccl (GPU)"
            )
        return self
