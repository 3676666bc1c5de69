"""The `factguard` environment of the registry (`raygent envs`; the `raygent.envs` entry point in pyproject.toml)."""

from __future__ import annotations

from raygent.environments.factguard.world import ENV_ID, SPLITS
from raygent.platform.envs import EnvSpec

SPEC = EnvSpec(
    name="factguard",
    description="verify synthetic short videos' claims with a clip analyzer and a fact-check retriever (budgeted)",
    id=ENV_ID,
    registration="raygent.environments.factguard:register_envs",
    tasks="raygent.environments.factguard:factguard_tasks",
    demonstrations="raygent.environments.factguard:factguard_demonstrations",
    # the factguard job's (jobs/configs/factguard.yaml)
    kwargs={"max_turns": 4, "budgets": {"retrieve": 2, "analyze_clip": 2}},
    task_kwargs={"mix": {"claim": 0.4, "clip": 0.3, "kb": 0.3}, "frames": 8, "world_seed": 0, "tools": True},
    splits=SPLITS,
)
