"""The `toolcalc` environment of the registry (`raygent envs`; the `raygent.envs` entry point in pyproject.toml)."""

from __future__ import annotations

from raygent.environments.toolcalc.tasks import ENV_ID, SPLITS
from raygent.platform.envs import EnvSpec

SPEC = EnvSpec(
    name="toolcalc",
    description="multi-turn arithmetic with a calculator tool (calc(EXPR), then answer(N)); the checker's reward",
    id=ENV_ID,
    registration="raygent.environments.toolcalc:register_envs",
    tasks="raygent.environments.toolcalc.source:toolcalc_tasks",
    demonstrations="raygent.environments.toolcalc.source:toolcalc_demonstrations",
    # the proof job's (grpo_toy) tasks: two-digit operands, the two task types with at most one calculator call
    task_kwargs={"difficulty": 1, "task_types": ["compare", "single"]},
    splits=SPLITS,
)
