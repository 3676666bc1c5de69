"""The `docos` environment of the registry (`raygent envs`; the `raygent.envs` entry point in pyproject.toml): the
web agent's browser environment on randomized UI layouts, with the documentation site as the agent's tools
(`tasks.py`, `demos.py`; its task source and experts are this job's, so the spec lives here)."""

from __future__ import annotations

from raygent.platform.envs import EnvSpec

SPEC = EnvSpec(
    name="docos",
    description="a web app's menu commands on randomized UI layouts, its documentation site as tools (search, open)",
    id="raygent/web-agent-v0",
    registration="raygent.environments.web.agent.env:register_envs",
    tasks="raygent.jobs.docos.tasks:docos_tasks",
    demonstrations="raygent.jobs.docos.demos:docos_demonstrations",
    # the docos job's (jobs/configs/docos.yaml)
    task_kwargs={
        "apps": ["media_player"],
        "difficulties": [1],
        "docs": "tools",
        "pool": 2,
        "layouts": 8,
        "default_share": 0.2,
        "none_share": 0.2,
    },
    splits=("train", "heldout", "default"),
)
