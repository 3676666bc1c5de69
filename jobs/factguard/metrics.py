"""FactGuard's evaluation numbers from evaluated trajectories: accuracy, macro-F1, accuracy and tool calls per
item kind, and the cost-weighted error (missed fakes, false alarms and missing verdicts weighted by their costs)."""

from __future__ import annotations

from collections.abc import Sequence

from raygent.platform.contracts import Trajectory
from raygent.rewards.factguard.decision_aware import DecisionCosts, error_cost, error_kind, final_verdict, tool_calls

KINDS = ("claim", "clip", "kb")


def macro_f1(labels: Sequence[str], predictions: Sequence[str | None]) -> float:
    """The mean over the classes real and fake of F1 (a missing prediction counts against its label's class)."""
    scores = []
    for cls in ("real", "fake"):
        tp = sum(y == cls and p == cls for y, p in zip(labels, predictions, strict=True))
        fp = sum(y != cls and p == cls for y, p in zip(labels, predictions, strict=True))
        fn = sum(y == cls and p != cls for y, p in zip(labels, predictions, strict=True))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0)
    return sum(scores) / len(scores)


def decision_metrics(trajectories: Sequence[Trajectory], costs: DecisionCosts | None = None) -> dict[str, float]:
    """`accuracy`, `macro_f1`, `cost_error`, `tool_calls`, `no_verdict`, and per kind `accuracy/<kind>` and
    `tool_calls/<kind>` (kinds with items only). Empty input gives {}."""
    done = [t for t in trajectories if not t.infra_failure]
    if not done:
        return {}
    costs = costs or DecisionCosts()
    labels = [str(t.task.params["label"]) for t in done]
    verdicts = [final_verdict(t) for t in done]
    predictions = [v[0] if v else None for v in verdicts]
    errors = [error_kind(y, v) for y, v in zip(labels, verdicts, strict=True)]
    calls = [tool_calls(t) for t in done]
    n = len(done)
    out = {
        "accuracy": sum(e == "" for e in errors) / n,
        "macro_f1": macro_f1(labels, predictions),
        "cost_error": sum(error_cost(e, costs) for e in errors) / n,
        "tool_calls": sum(calls) / n,
        "no_verdict": sum(e == "no_verdict" for e in errors) / n,
        "missed_fake": sum(e == "false_negative" for e in errors) / n,
        "false_alarm": sum(e == "false_positive" for e in errors) / n,
    }
    for kind in KINDS:
        index = [i for i, t in enumerate(done) if t.task.params.get("kind") == kind]
        if index:
            out[f"accuracy/{kind}"] = sum(errors[i] == "" for i in index) / len(index)
            out[f"tool_calls/{kind}"] = sum(calls[i] for i in index) / len(index)
    return out
