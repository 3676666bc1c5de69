"""The `single_turn` environment of the registry (`raygent envs`; the `raygent.envs` entry point in pyproject.toml).

Its task and reward are the `single_turn` job's default (`examples.py`: one-digit sums, the last number of the
completion is the answer); another task is `env.tasks` and `env.kwargs.reward` (or the `single_turn` job).
"""

from __future__ import annotations

from raygent.environments.single_turn import ENV_ID
from raygent.platform.envs import EnvSpec

SPEC = EnvSpec(
    name="single_turn",
    description="one completion per prompt, scored by a reward function (default: one-digit sums)",
    id=ENV_ID,
    registration="raygent.environments.single_turn:register_envs",
    tasks="raygent.environments.single_turn.examples:one_digit_sum",
    kwargs={"reward": "raygent.environments.single_turn.examples:last_number_is_answer", "success_threshold": 1.0},
)
