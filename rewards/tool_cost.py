"""`ToolCost`: a cost on agent-side tool calls past a free allowance, added to the environment's reward.

    reward: {entry: raygent.rewards.tool_cost:ToolCost, kwargs: {cost: 0.1, free: 2}, mode: add}

    score = −cost · max(0, calls − free)      calls: the steps with `Step.tool_call` (a docs lookup, a memory
                                              query: answered by the agent loop, no environment step)

Meant for `mode: add`: the environment's reward and success stand, and an episode that succeeds with more lookups
than it needs is worth less than one that does not. Without it, GRPO reinforces everything a sampled success did
besides succeeding, extra lookups included (DocOS with the SmolLM2 agent learned 4.3 calls an episode against the
2 its demonstrations make). Measured there with `cost: 0.1, free: 2` (one seed, docs/docos.md): the cost bit on
the first GRPO step only and the agent then stopped looking anything up (0 calls), so it is no cure at 16 episodes
a step. `success` is the trajectory's own verdict (a `replace` run would keep it and score only the cost). No step
labels: a call past the allowance is not an error of the task.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from raygent.platform.contracts import Judgement, Trajectory


class ToolCost:
    class Settings(BaseModel):
        """`reward.kwargs` of `ToolCost` (module docstring)."""

        model_config = ConfigDict(frozen=True, extra="forbid")

        cost: float = Field(default=0.1, ge=0)
        free: int = Field(default=2, ge=0)

    def __init__(self, **kwargs: Any) -> None:
        settings = self.Settings(**kwargs)
        self.cost, self.free = settings.cost, settings.free

    def judge(self, trajectories: Sequence[Trajectory]) -> list[Judgement]:
        return [self._judge(t) for t in trajectories]

    def _judge(self, trajectory: Trajectory) -> Judgement:
        calls = sum(step.tool_call for step in trajectory.steps)
        extra = max(0, calls - self.free)
        return Judgement(
            score=-self.cost * extra,
            success=bool(trajectory.success),
            reason=f"{calls} tool call(s), {extra} past the {self.free} free",
            info={"tool_calls": calls},
        )
