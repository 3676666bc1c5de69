"""AugmentationEnv: one anchor image per episode; the agent writes one edit instruction, the frozen generator
renders it.

The observation is the anchor's description in the grammar's words (`world.describe`: its ID-critical attributes and
its nuisances); the action is an instruction (`world.parse_instruction`). The episode ends after that one action.
The environment's own reward is the format: 1.0 for an instruction that parses, 0.0 otherwise; the ReasonAug reward
model (`rewards/reasonaug/magr.py`, MAGR) judges the edited image instead. The final step's `info` carries what the
reward model needs, as plain values (the rollout keeps only those): `anchor` and `edited` (base64 of the uint8
3 x 32 x 16 images), `label` (the anchor's identity), `valid_action`, `success`, `instruction` (the edit as
applied) and `identity_changed` (ground truth, logged to measure the gate, never used by the reward).

`instruction: random` (the random-augmentation baseline) ignores the agent's text and applies a uniformly random
identity-preserving edit (`tasks.random_instruction`), seeded by the task and the environment's episode count.
"""

from __future__ import annotations

import base64
import zlib
from typing import Any, Literal, SupportsFloat

import gymnasium
import numpy as np
from gymnasium import spaces
from pydantic import BaseModel, ConfigDict

from raygent.environments.reasonaug.tasks import ENV_ID, observation_text, random_instruction
from raygent.environments.reasonaug.world import (
    InstructionError,
    apply_instruction,
    identity_changed,
    parse_instruction,
    render,
    to_uint8,
)
from raygent.environments.text import text_space
from raygent.platform.contracts import Task

MAX_TEXT = 256
DONE_TEXT = "done"
Observation = dict[str, Any]


def encode_image(image: np.ndarray) -> str:
    """A uint8 image as base64 text (what travels in a step's info)."""
    return base64.b64encode(np.ascontiguousarray(image, dtype=np.uint8).tobytes()).decode("ascii")


class AugmentationEnv(gymnasium.Env[Observation, str]):
    """The ReasonAug environment (module docstring); registered as `raygent/ReasonAug-v0`."""

    metadata = {"render_modes": [], "render_fps": 1}  # noqa: RUF012 (gymnasium's class attribute)

    class Settings(BaseModel):
        """`env.kwargs`, checked when the config is (`platform.rl.settings.EnvSettings`)."""

        model_config = ConfigDict(frozen=True, extra="forbid")

        instruction: Literal["policy", "random"] = "policy"

    def __init__(self, instruction: Literal["policy", "random"] = "policy") -> None:
        if instruction not in ("policy", "random"):
            raise ValueError(f"instruction must be 'policy' or 'random', got {instruction!r}")
        self.instruction = instruction
        self.observation_space = spaces.Dict({"text": text_space(MAX_TEXT, min_length=1)})
        self.action_space = text_space(MAX_TEXT, min_length=1)
        self._task: Task | None = None
        self._episodes = 0
        self._done = True

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict]:
        super().reset(seed=seed)
        given = (options or {}).get("task")
        if given is None:
            from raygent.environments.reasonaug.tasks import reasonaug_tasks

            given = reasonaug_tasks("train", int(self.np_random.integers(2**31)), 1)[0]
        task = given if isinstance(given, Task) else Task.model_validate(given)
        if task.env != ENV_ID or "identity" not in task.params:
            raise ValueError(f"task {task.id!r} is not a ReasonAug task (env {task.env!r})")
        self._task, self._done = task, False
        self._episodes += 1
        return {"text": observation_text(task)}, {}

    def step(self, action: str) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._done or self._task is None:
            raise RuntimeError("call reset() before step() (the episode is over)")
        self._done = True
        params = self._task.params
        text = action
        if self.instruction == "random":
            rng = np.random.default_rng([zlib.crc32(self._task.id.encode()), self._episodes])
            text = random_instruction(self._task, rng)
        try:
            slots = parse_instruction(text)
        except InstructionError as error:
            info = {"valid_action": False, "success": False, "error": str(error), "label": int(params["label"])}
            return {"text": f"error: {error}"[:MAX_TEXT]}, 0.0, True, False, info
        identity, view, noise = params["identity"], params["view"], int(params["noise_seed"])
        edited_identity, edited_view = apply_instruction(identity, view, slots)
        anchor = to_uint8(render(identity, view, noise))
        edited = to_uint8(render(edited_identity, edited_view, noise + 1))
        info = {
            "valid_action": True,
            "success": True,
            "label": int(params["label"]),
            "anchor": encode_image(anchor),
            "edited": encode_image(edited),
            "instruction": " ".join(text.split()),
            "identity_changed": identity_changed(identity, slots),
        }
        return {"text": DONE_TEXT}, 1.0, True, False, info


def register_envs() -> None:
    """Register `raygent/ReasonAug-v0` with gymnasium (idempotent)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="raygent.environments.reasonaug.env:AugmentationEnv")
