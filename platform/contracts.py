"""The data that moves between the RL actors: tasks, observations, steps, trajectories, GRPO groups, judgements.

Every contract is a frozen pydantic model, so it pickles through Ray's object store and round-trips through JSON
(`model_dump_json` / `model_validate_json`; image bytes travel as base64). No torch here: environments, reward
models and the CLI import these without pulling in the learner.

Conventions the rest of the platform relies on:

- A `Step` is one policy call. `prompt_ids` is the whole context the inference engine saw for it (system prompt,
  instruction, earlier turns, the current observation); `response_ids` are the tokens it sampled and `logprobs`
  their log-probabilities under the sampling distribution, recorded by the engine at generation time. Text is
  never re-tokenized for training: the learner trains on these ids (docs/design.md §3).
- `policy_version` is the weight version of the engine that produced the step. A trajectory's version is that of
  its oldest step, so staleness is measured conservatively.
- A trajectory's reward is the sum of its step rewards unless a reward model gave it a `score` (the judge stage of
  the trainer writes `judgement` and `score`); `Trajectory.reward` is the number advantages are computed from.
- `Step.failure` is a judge's (or the environment's) per-step verdict: True on a failure action, False on a step
  judged fine, None when nobody judged the step.
- `TrajectoryGroup` is the GRPO unit: every queue moves whole groups, never single trajectories.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

LOGPROB_TOLERANCE = 1e-4
"""How far above 0 a recorded log-probability may round (engines compute them in low precision)."""

ZERO_VARIANCE_ATOL = 1e-9
"""Rewards closer than this count as equal when deciding that a group carries no learning signal."""


class Contract(BaseModel):
    """Base of the contracts: frozen, no unknown keys, no NaN or infinite floats, bytes as base64 in JSON."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        allow_inf_nan=False,
        ser_json_bytes="base64",
        val_json_bytes="base64",
    )


class Task(Contract):
    """One thing to do in one environment.

    `env` names a registered environment; `params` are that environment's task parameters (seed, target values,
    ...). `difficulty` is the curriculum's ordering key, 0 the easiest.
    """

    id: str = Field(min_length=1)
    env: str = Field(min_length=1)
    instruction: str
    difficulty: int = Field(default=0, ge=0)
    params: dict[str, Any] = Field(default_factory=dict)


class Observation(Contract):
    """What the agent sees before it acts.

    `text` is the model-facing rendering (e.g. an accessibility tree with element ids); `image` optional encoded
    image bytes (PNG/JPEG); `last_action_error` the environment's complaint about the previous action, if any.
    `info` holds JSON-serializable extras that are not shown to the model.
    """

    text: str
    image: bytes | None = None
    url: str | None = None
    last_action_error: str | None = None
    info: dict[str, Any] = Field(default_factory=dict)


class Step(Contract):
    """One policy call and the environment's answer to it (see the module docstring for the token conventions).

    `action` is the parsed action string sent to the environment; `valid_action` is False when the response did
    not parse (such a step earns no reward and is counted in metrics). `tool_call` is True for an agent-side tool
    call (its result went back into the context without an environment step). `failure`: see the module docstring.
    """

    observation: Observation
    prompt_ids: list[int] = Field(min_length=1)
    response_ids: list[int]
    logprobs: list[float]
    action: str
    reward: float = 0.0
    valid_action: bool = True
    tool_call: bool = False
    failure: bool | None = None
    info: dict[str, Any] = Field(default_factory=dict)
    policy_version: int = Field(ge=0)

    @field_validator("logprobs")
    @classmethod
    def _logprobs_are_log_probabilities(cls, logprobs: list[float]) -> list[float]:
        for position, value in enumerate(logprobs):
            if value > LOGPROB_TOLERANCE:
                raise ValueError(f"logprobs[{position}] = {value} is not a log-probability (must be <= 0)")
        return logprobs

    @model_validator(mode="after")
    def _one_logprob_per_response_token(self) -> Step:
        if len(self.response_ids) != len(self.logprobs):
            raise ValueError(
                f"len(response_ids) = {len(self.response_ids)} but len(logprobs) = {len(self.logprobs)}: "
                "the engine must return one log-probability per sampled token"
            )
        return self


StepLabel = Literal["correct", "redundant", "error"]


class Judgement(Contract):
    """A reward model's verdict on one trajectory.

    `success` and `score` are the episode-level decision and scalar; `step_labels` (one per step, when the model
    gives them) say whether each step was correct, redundant or an error; `first_error_step` is the index of the
    first error step (None: no error found, or the model does not localise errors); `reason` is a short
    explanation; `info` carries model-specific structure (e.g. the World State Model's per-step captions).
    `infra_failure`: the model could not judge (its endpoint failed or kept answering malformed, after its own
    retries); the trajectory then becomes an infrastructure failure (not trained on, not counted as an agent
    failure, not shown to the task source), whatever `score` and `success` say.
    """

    score: float
    success: bool
    reason: str = ""
    step_labels: list[StepLabel] | None = None
    first_error_step: int | None = Field(default=None, ge=0)
    info: dict[str, Any] = Field(default_factory=dict)
    infra_failure: bool = False


class Trajectory(Contract):
    """One episode of one task, as the rollout worker recorded it.

    - `success`: the task checker's or judge's verdict; None while unjudged.
    - `policy_version`: the oldest step's version. Filled in from the steps when not given; when given it must
      agree with them. A trajectory without steps (an infrastructure failure before the first call) must give it.
    - `infra_failure`: the episode ended because infrastructure failed (browser, environment or engine crash,
      timeout) after `infra_retries` restarts; it is not an agent failure and is kept out of training and of the
      success rate. Only such a trajectory may have no steps.
    - `truncated`: the episode was cut by a limit (turn limit, context length, a response cut at max tokens)
      rather than ended by the agent or the environment; the learner can mask it out of the loss.
    - `judgement`: the reward model's verdict (None before the judge stage, or when the run has none);
      `score`: the scalar the learner uses instead of the sum of step rewards (None: that sum).
    """

    task: Task
    steps: list[Step]
    success: bool | None = None
    policy_version: int = Field(ge=0)
    group_id: str = Field(min_length=1)
    infra_failure: bool = False
    infra_retries: int = Field(default=0, ge=0)
    truncated: bool = False
    judgement: Judgement | None = None
    score: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _version_from_steps(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("policy_version") is None and data.get("steps"):
            versions = [s.policy_version if isinstance(s, Step) else s.get("policy_version") for s in data["steps"]]
            if all(isinstance(v, int) for v in versions):
                data = {**data, "policy_version": min(versions)}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Trajectory:
        if not self.steps and not self.infra_failure:
            raise ValueError("a trajectory without steps must be an infra_failure")
        if self.steps:
            oldest = min(step.policy_version for step in self.steps)
            if self.policy_version != oldest:
                raise ValueError(f"policy_version = {self.policy_version} but the oldest step's version is {oldest}")
        return self

    @property
    def total_reward(self) -> float:
        """The undiscounted return: the sum of the step rewards."""
        return math.fsum(step.reward for step in self.steps)

    @property
    def reward(self) -> float:
        """What advantages are computed from: the judge stage's `score`, else `total_reward`."""
        return self.score if self.score is not None else self.total_reward


class TrajectoryGroup(Contract):
    """G trajectories of the same task: the unit GRPO normalizes advantages over, and the unit every queue moves."""

    group_id: str = Field(min_length=1)
    task: Task
    trajectories: list[Trajectory] = Field(min_length=1)

    @model_validator(mode="after")
    def _members_belong(self) -> TrajectoryGroup:
        for index, trajectory in enumerate(self.trajectories):
            if trajectory.group_id != self.group_id:
                raise ValueError(
                    f"trajectories[{index}].group_id = {trajectory.group_id!r}, expected {self.group_id!r}"
                )
            if trajectory.task != self.task:
                raise ValueError(f"trajectories[{index}] is for task {trajectory.task.id!r}, not {self.task.id!r}")
        return self

    @property
    def rewards(self) -> list[float]:
        """Each trajectory's reward (`Trajectory.reward`), in order."""
        return [trajectory.reward for trajectory in self.trajectories]

    @property
    def policy_version(self) -> int:
        """The oldest trajectory's version."""
        return min(trajectory.policy_version for trajectory in self.trajectories)

    def is_zero_variance(self, atol: float = ZERO_VARIANCE_ATOL) -> bool:
        """True when all rewards are equal within `atol`: group-normalized advantages are all zero, no signal.

        The same rule as `raygent.platform.losses.advantages.nonzero_variance_mask`.
        """
        rewards = self.rewards
        return max(rewards) - min(rewards) <= atol
