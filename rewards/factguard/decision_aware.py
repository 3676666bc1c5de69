"""Decision-aware reward for claim verification (FactGuard), and its outcome-only ablation.

    reward:
      entry: raygent.rewards.factguard.decision_aware:DecisionAware
      kwargs: {false_negative: 1.5, false_positive: 1.0, tool_call: 0.1, confident_wrong: 0.5}

A trajectory's score is the sum of

    r_dec  = +correct                 the verdict matches `task.params["label"]`
             −false_negative          missed misinformation (label fake, verdict real)
             −false_positive          false alarm (label real, verdict fake)
             −no_verdict              the episode ended without a parsable verdict (truncated, malformed)
    r_tool = −tool_call · n_calls     every `retrieve(...)` / `analyze_clip(...)` the agent wrote, refused ones too
    r_risk = −confident_wrong         a wrong verdict given with confidence ≥ `confident_threshold`
             −calibration · (p̂ − 1{label = fake})²   p̂ = the stated probability of fake (Brier term)

`success` is a correct verdict. Step labels: a tool call is `redundant` on an item that needs no tool (`kind`
`claim`) or when the tool refused it (its answer starts with `error:`), otherwise `correct`; the verdict step is
`correct` or `error`; an unparsable action is an `error`. `first_error_step` is the first `error` step.

How this differs from the paper: FactGuard's exact reward could not be read (the method notes mark it as a
reconstruction). This keeps its stated ingredients — a correct decision, tool-usage cost, risk-sensitive errors —
as the notes' stand-in R = r_fmt + r_dec + r_tool; the format reward is folded into `no_verdict` (a malformed
answer is no verdict), and the notes' credit for useful calls (which needs a tool-free rollout of the base policy
per item) is left out: the cost per call and the item kinds' needs make the same trade-off learnable.

`OutcomeOnly` is the ablation: 1 for a correct verdict, 0 otherwise (no costs, no tool or confidence terms);
it accepts the same kwargs, so `reward.entry` alone switches a config between the two.
Pure: no Ray, no environment import; it reads only the trajectory (its task's `label`/`kind` and step actions).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from raygent.platform.contracts import Judgement, StepLabel, Trajectory

_TOOL = re.compile(r"^\s*(retrieve|analyze_clip)\(")
_VERDICT = re.compile(r"^\s*verdict\(\s*(real|fake)\s*,\s*([0-9]*\.?[0-9]+)\s*\)\s*$")

ErrorKind = Literal["", "false_negative", "false_positive", "no_verdict"]


class DecisionCosts(BaseModel):
    """The reward's weights (the `reward.kwargs` of `DecisionAware`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    correct: float = Field(default=1.0, ge=0)
    false_negative: float = Field(default=1.5, ge=0)
    false_positive: float = Field(default=1.0, ge=0)
    no_verdict: float = Field(default=1.5, ge=0)
    tool_call: float = Field(default=0.1, ge=0)
    confident_wrong: float = Field(default=0.5, ge=0)
    confident_threshold: float = Field(default=0.8, ge=0, le=1)
    calibration: float = Field(default=0.5, ge=0)


def parse_verdict(action: str) -> tuple[str, float] | None:
    """(label, confidence) of a `verdict(real|fake, C)` action with C in [0, 1], else None."""
    match = _VERDICT.match(action.strip())
    if match is None or not 0.0 <= float(match.group(2)) <= 1.0:
        return None
    return match.group(1), float(match.group(2))


def is_tool_call(action: str) -> bool:
    return _TOOL.match(action) is not None


def final_verdict(trajectory: Trajectory) -> tuple[str, float] | None:
    """The episode's verdict: its last step's action, when that is a verdict."""
    return parse_verdict(trajectory.steps[-1].action) if trajectory.steps else None


def tool_calls(trajectory: Trajectory) -> int:
    """Tool calls the agent wrote (agent-side or environment steps; refused ones too)."""
    return sum(is_tool_call(step.action) for step in trajectory.steps)


def error_kind(label: str, verdict: tuple[str, float] | None) -> ErrorKind:
    if verdict is None:
        return "no_verdict"
    if verdict[0] == label:
        return ""
    return "false_negative" if label == "fake" else "false_positive"


def error_cost(kind: ErrorKind, costs: DecisionCosts) -> float:
    """What an error of `kind` costs (0 for a correct verdict): the cost-weighted error of one item."""
    return 0.0 if kind == "" else float(getattr(costs, kind))


class DecisionAware:
    """The decision-aware reward model (module docstring); `kwargs` are `DecisionCosts` fields."""

    Settings = DecisionCosts

    def __init__(self, **kwargs: Any) -> None:
        self.costs = DecisionCosts.model_validate(kwargs)

    def judge(self, trajectories: Sequence[Trajectory]) -> list[Judgement]:
        return [self._judge(t) for t in trajectories]

    def _judge(self, trajectory: Trajectory) -> Judgement:
        costs = self.costs
        label = trajectory.task.params.get("label")
        if label not in ("real", "fake"):
            raise ValueError(f"task {trajectory.task.id!r} has no params['label'] real|fake (got {label!r})")
        verdict = final_verdict(trajectory)
        kind = error_kind(label, verdict)
        calls = tool_calls(trajectory)
        score = costs.correct if kind == "" else -error_cost(kind, costs)
        score -= costs.tool_call * calls
        if verdict is not None:
            p_fake = verdict[1] if verdict[0] == "fake" else 1.0 - verdict[1]
            score -= costs.calibration * (p_fake - float(label == "fake")) ** 2
            if kind and verdict[1] >= costs.confident_threshold:
                score -= costs.confident_wrong
        labels = step_labels(trajectory, kind == "")
        first_error = labels.index("error") if "error" in labels else None
        reason = f"label {label}, verdict {verdict[0] if verdict else 'none'}, {calls} tool call(s)"
        return Judgement(
            score=score,
            success=kind == "",
            reason=reason,
            step_labels=labels,
            first_error_step=first_error,
            info={"error": kind, "tool_calls": calls, "kind": str(trajectory.task.params.get("kind", ""))},
        )


class OutcomeOnly(DecisionAware):
    """The ablation: 1.0 for a correct verdict, 0.0 otherwise; no error costs, tool cost or confidence terms.
    It takes the same `kwargs` (validated, then kept in `costs` only, so a run's config switches between the two
    by `reward.entry` alone and its cost-weighted error is measured with the same costs)."""

    def __init__(self, **kwargs: Any) -> None:
        costs = DecisionCosts.model_validate(kwargs)
        super().__init__(
            false_negative=0.0,
            false_positive=0.0,
            no_verdict=0.0,
            tool_call=0.0,
            confident_wrong=0.0,
            calibration=0.0,
        )
        self.reported_costs = costs


def step_labels(trajectory: Trajectory, correct: bool) -> list[StepLabel]:
    """Per-step labels (module docstring)."""
    needs_no_tool = trajectory.task.params.get("kind") == "claim"
    labels: list[StepLabel] = []
    last = len(trajectory.steps) - 1
    for index, step in enumerate(trajectory.steps):
        if is_tool_call(step.action):
            # an agent-side call carries its answer; an environment-step call's answer is the next observation
            answer = str(step.info.get("tool_result", ""))
            if not answer and index < last:
                answer = trajectory.steps[index + 1].observation.text
            refused = answer.startswith("error:")
            labels.append("redundant" if needs_no_tool or refused else "correct")
        elif index == last and parse_verdict(step.action) is not None:
            labels.append("correct" if correct else "error")
        else:
            labels.append("error")
    return labels
