"""The `reasonaug` environment of the registry (`raygent envs`; the `raygent.envs` entry point in pyproject.toml)."""

from __future__ import annotations

from raygent.environments.reasonaug.tasks import ENV_ID, SPLITS
from raygent.platform.envs import EnvSpec

SPEC = EnvSpec(
    name="reasonaug",
    description="write edit instructions for a frozen procedural pedestrian renderer (person ReID augmentation)",
    id=ENV_ID,
    registration="raygent.environments.reasonaug:register_envs",
    tasks="raygent.environments.reasonaug:reasonaug_tasks",
    demonstrations="raygent.environments.reasonaug:reasonaug_demonstrations",
    # the reasonaug job's (jobs/configs/reasonaug.yaml)
    kwargs={"instruction": "policy"},
    task_kwargs={
        "world_seed": 0,
        "train_ids": 48,
        "views_per_id": 4,
        "test_ids": 48,
        "queries_per_id": 2,
        "gallery_per_id": 5,
        "recolour": 0.1,
    },
    splits=SPLITS,
)
