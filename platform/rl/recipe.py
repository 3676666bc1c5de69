"""`AgentRecipe`: the skeleton every agent job shares, so a recipe writes only what is its own.

Where it sits: `raygent run <job>` validates the config (`config_model`) and calls the job's `run`; `AgentRecipe.run`
is that call for an agent job:

    agent = the config's agent sections           (`agent_sections(config, config_model)`)
    setup = self.prepare(agent, run_dir, console)  tokenizer text, trainer hooks, extra evaluation sets (the job's)
    model = initial_model(agent, run_dir, text)    `policy.model`, or a tiny model on the job's text
    trainer = AgentTrainer(agent, run_dir, model, hooks, extra_evals)
    try: trainer.run(resume); trainer.examples(...)
    finally: trainer.shutdown()
    return self.report(...)                        `write_report` and the console's last line (the job's table)

A job subclasses it and sets `name`, `summary`, `claim`, `config_model` and `min_gain`; it overrides `prepare` to
give its tokenizer text, hooks and extra evaluations, and `report` where its verdict is more than the held-out
gain. `jobs/grpo_toy/recipe.py` is the smallest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from rich.console import Console

from raygent.platform.config import JobConfig
from raygent.platform.contracts import Task
from raygent.platform.rl.hooks import TrainerHook
from raygent.platform.rl.initial import agent_sections, initial_model
from raygent.platform.rl.report import write_report
from raygent.platform.rl.settings import AgentRunConfig
from raygent.platform.rl.trainer import AgentTrainer


@dataclass
class Setup:
    """What a recipe's `prepare` hands the skeleton."""

    tokenizer_text: list[str] = field(default_factory=list)
    """Text to train a tiny model's tokenizer on (unused when `policy.model` is set)."""
    hooks: Sequence[TrainerHook] = ()
    extra_evals: Mapping[str, Sequence[Task]] | None = None
    """More held-out sets evaluated with the main one (`eval/<name>/success`)."""
    state: dict[str, Any] = field(default_factory=dict)
    """Anything the recipe's `report` needs from its preparation."""
    agent: Any = None
    """The agent sections to train with, when preparation changed them (else the config's)."""


@dataclass
class Trained:
    """What the skeleton hands `report`: the trainer's result and the example trajectories."""

    result: dict[str, Any]
    examples: list[dict[str, Any]]
    setup: Setup


class AgentRecipe:
    """An agent job: SFT then RL through `AgentTrainer`, evaluated before and after (see the module docstring)."""

    name: ClassVar[str]
    summary: ClassVar[str]
    claim: ClassVar[str]
    config_model: ClassVar[type[AgentRunConfig]] = AgentRunConfig
    min_gain: ClassVar[float] = 0.0
    """The held-out gain the claim needs (`summary["holds"]`)."""
    examples_kept: ClassVar[tuple[int, int]] = (3, 0)
    """(trajectories, of which at least this many failed) shown in the report."""

    def run(self, config: JobConfig, run_dir: Path, resume: bool = False) -> dict[str, Any]:
        console = Console()
        agent = agent_sections(config, self.config_model)
        setup = self.prepare(agent, run_dir, console)
        agent = setup.agent if setup.agent is not None else agent
        model_path = initial_model(agent, run_dir, setup.tokenizer_text if agent.policy.model is None else [])
        trainer = AgentTrainer(
            agent, run_dir, model_path, console=console, extra_evals=setup.extra_evals, hooks=setup.hooks
        )
        try:
            result = trainer.run(resume=resume)
            examples = trainer.examples(*self.kept_examples(agent))
        finally:
            trainer.shutdown()
        return self.report(config, agent, run_dir, Trained(result, examples, setup), console)

    def prepare(self, agent: Any, run_dir: Path, console: Console) -> Setup:
        """The job's own preparation (data recorded, tokenizer text, hooks, extra evaluations); none by default."""
        return Setup()

    def kept_examples(self, agent: Any) -> tuple[int, int]:
        """(trajectories, of which at least this many failed) the report shows; `examples_kept` by default."""
        return self.examples_kept

    def report(
        self, config: JobConfig, agent: Any, run_dir: Path, trained: Trained, console: Console
    ) -> dict[str, Any]:
        """`write_report` on the held-out success before and after, and the console's verdict line."""
        summary = self.write(config, agent, run_dir, trained)
        console.print(
            f"held-out success: SFT {summary['before_success']:.3f} → RL {summary['after_success']:.3f} "
            f"(gain {summary['gain']:+.3f}; claim {'holds' if summary['holds'] else 'does not hold'})"
        )
        return summary

    def write(
        self,
        config: JobConfig,
        agent: Any,
        run_dir: Path,
        trained: Trained,
        rows: Sequence[tuple[str, float, float]] = (),
        extra: Mapping[str, Any] | None = None,
        examples: list[dict[str, Any]] | None = None,
        claim: str | None = None,
        min_gain: float | None = None,
    ) -> dict[str, Any]:
        """`write_report` with the recipe's claim and gain (or those given), the run's seed, backend and mode, and
        `extra`."""
        return write_report(
            run_dir,
            config.job,
            self.claim if claim is None else claim,
            before=trained.result["eval/before"],
            after=trained.result["eval/after"],
            min_gain=self.min_gain if min_gain is None else min_gain,
            examples=trained.examples if examples is None else examples,
            rows=rows,
            extra={
                "seed": agent.trainer.seed,
                "backend": agent.policy.backend,
                "mode": agent.trainer.mode,
                **(extra or {}),
            },
        )
