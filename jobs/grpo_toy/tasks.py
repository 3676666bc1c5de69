"""ToolCalc as the trainer's task source and expert (`env.tasks` and `env.demonstrations` in the job config).

They are the `toolcalc` environment's (`raygent.environments.toolcalc.source`, registered as `toolcalc`), kept
under these names for the configs and code that name them here.
"""

from __future__ import annotations

from raygent.environments.toolcalc.source import toolcalc_demonstrations, toolcalc_tasks

__all__ = ["toolcalc_demonstrations", "toolcalc_tasks"]
