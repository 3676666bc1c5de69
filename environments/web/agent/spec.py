"""The suite's web apps as environments of the registry (`raygent envs`; the `raygent.envs` entry point in
pyproject.toml): one per app of the web registry (`environments/web/registry.py`: the suite's own and those of
the `raygent.apps` entry points), as a web agent runs it: `CompactWebEnv` (`raygent/web-agent-v0`), the
task source over that app (`tasks.web_tasks`) and its scripted experts' demonstrations (`tasks.web_demonstrations`).
"""

from __future__ import annotations

from importlib.metadata import entry_points

from raygent.environments.web.registry import ENTRY_POINT_GROUP, available_apps
from raygent.platform.envs import EnvSpec

ENV_ID = "raygent/web-agent-v0"
"""`env.ENV_ID`, written out: importing that module takes seconds (torch), too long for a
listing."""


def web_app_specs() -> list[EnvSpec]:
    """One `EnvSpec` per web app, named after the app (`raygent tasks <app>` lists its templates)."""
    apps = dict.fromkeys([*available_apps(), *(entry.name for entry in entry_points(group=ENTRY_POINT_GROUP))])
    return [
        EnvSpec(
            name=app,
            description=f"the {app.replace('_', ' ')} web app in Chromium: compact page text, its checker's reward",
            id=ENV_ID,
            registration="raygent.environments.web.agent.env:register_envs",
            tasks="raygent.environments.web.agent.tasks:web_tasks",
            demonstrations="raygent.environments.web.agent.tasks:web_demonstrations",
            task_kwargs={"apps": [app], "difficulties": [1]},
        )
        for app in apps
    ]
