"""factguard: a tiny LM agent verifies short videos' claims, calling a clip analyzer or a fact-check retriever only
when the item needs it; SFT on oracle traces, then GRPO with a decision-aware reward.

Stages (`raygent run factguard`): a `tiny-qwen2` policy with a BPE tokenizer trained on FactGuard text (built into
the run directory when `policy.model` is unset); SFT on the oracle's episodes (`env.demonstrations`); GRPO whose
reward is the judge stage's `reward.entry` (`DecisionAware` by default) run in Ray actors; the tools are Ray actors
called from the agent loop (`rollout.agent: FactGuardLoop`). Greedy evaluation on held-out items (claims never
trained on) before GRPO (= the SFT model) and after it: accuracy, macro-F1, accuracy and tool calls per item kind,
cost-weighted error (`metrics.py`), in `summary.json`, `factguard.json` and the report's table.

Ablations are config overrides: `reward.entry=raygent.rewards.factguard.decision_aware:OutcomeOnly` (outcome-only
reward),
`env.task_kwargs.tools=false` (no tools: the loop refuses every call and the oracle answers without evidence).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from raygent.environments.factguard import corpus
from raygent.jobs.factguard.metrics import decision_metrics
from raygent.platform.config import JobConfig
from raygent.platform.contracts import Trajectory
from raygent.platform.rl.hooks import TrainerHook
from raygent.platform.rl.recipe import AgentRecipe, Setup, Trained
from raygent.platform.rl.settings import AgentRunConfig
from raygent.rewards.factguard.decision_aware import DecisionCosts

DECISION_AWARE = "raygent.rewards.factguard.decision_aware:DecisionAware"
OUTCOME_ONLY = "raygent.rewards.factguard.decision_aware:OutcomeOnly"
RESULTS_FILE = "factguard.json"
TABLE_KEYS = (
    "accuracy",
    "macro_f1",
    "cost_error",
    "tool_calls",
    "tool_calls/claim",
    "tool_calls/clip",
    "tool_calls/kb",
    "accuracy/claim",
    "accuracy/clip",
    "accuracy/kb",
    "no_verdict",
)


class DecisionCurve(TrainerHook):
    """The decision metrics of each evaluation's held-out episodes, by step (a hook, so a resumed run keeps the
    evaluations it does not redo: its state is checkpointed)."""

    def __init__(self, costs: DecisionCosts) -> None:
        self.costs = costs
        self.curve: dict[int, dict[str, float]] = {}

    def on_eval(self, step: int, sets: dict[str, list[Trajectory]]) -> None:
        self.curve[step] = decision_metrics(sets.get("", []), self.costs)

    def state(self) -> Any:
        return {str(step): metrics for step, metrics in self.curve.items()}

    def load_state(self, state: Any) -> None:
        self.curve = {int(step): dict(metrics) for step, metrics in state.items()}


def ablation_of(config: AgentRunConfig) -> str:
    """A name for the run's variant: `decision_aware`, `outcome_only`, `env_reward` (no judge), `+no_tools`."""
    entry = config.reward.entry if config.reward else None
    name = {DECISION_AWARE: "decision_aware", OUTCOME_ONLY: "outcome_only", None: "env_reward"}.get(entry, str(entry))
    return name + ("+no_tools" if config.env.task_kwargs.get("tools") is False else "")


class FactGuard(AgentRecipe):
    name = "factguard"
    summary = "SFT then GRPO with a decision-aware reward of a claim-verification agent with agent-side tools"
    claim = (
        "GRPO with the decision-aware reward raises held-out accuracy and macro-F1 over the SFT model and lowers "
        "the cost-weighted error, with no more tool calls on items that need none"
    )
    examples_kept = (4, 2)

    def prepare(self, agent: Any, run_dir: Path, console: Console) -> Setup:
        world_seed = int(agent.env.task_kwargs.get("world_seed", 0))
        # a real model (`policy.model`) keeps its own tokenizer; only a tiny model built here needs FactGuard text
        text = corpus(2000, agent.trainer.seed, world_seed) if agent.policy.model is None else []
        # the cost-weighted error uses the costs of the run's reward section (both variants take them), else defaults
        ours = agent.reward is not None and agent.reward.entry in (DECISION_AWARE, OUTCOME_ONLY)
        costs = DecisionCosts.model_validate(agent.reward.kwargs if agent.reward and ours else {})
        recorder = DecisionCurve(costs)
        return Setup(tokenizer_text=text, hooks=[recorder], state={"recorder": recorder, "costs": costs})

    def report(
        self, config: JobConfig, agent: Any, run_dir: Path, trained: Trained, console: Console
    ) -> dict[str, Any]:
        recorder, costs = trained.setup.state["recorder"], trained.setup.state["costs"]
        steps = agent.trainer.steps
        before, after = recorder.curve.get(0, {}), recorder.curve.get(steps, {})
        curve = dict(sorted(recorder.curve.items()))
        holds = bool(
            before
            and after
            and after["accuracy"] > before["accuracy"]
            and after["macro_f1"] > before["macro_f1"]
            and after["cost_error"] < before["cost_error"]
            and after.get("tool_calls/claim", 0.0) <= before.get("tool_calls/claim", 0.0)
        )
        nan = float("nan")
        rows = [(key, before.get(key, nan), after.get(key, nan)) for key in TABLE_KEYS if key in before or key in after]
        variant = ablation_of(agent)
        results = {"ablation": variant, "costs": costs.model_dump(), "before": before, "after": after, "curve": curve}
        (run_dir / RESULTS_FILE).write_text(json.dumps(results, indent=2))
        summary = self.write(
            config,
            agent,
            run_dir,
            trained,
            rows=rows,
            extra={"ablation": variant, "holds": holds, "before": before, "after": after},
        )
        table = Table("held-out", "SFT", "SFT→GRPO", title=f"factguard ({variant}, seed {agent.trainer.seed})")
        for key, b, a in rows:
            table.add_row(key, f"{b:.3f}", f"{a:.3f}")
        console.print(table)
        console.print(f"claim {'holds' if holds else 'does not hold'} on this run")
        return summary
