"""xskill: an experience-and-skill memory that a frozen agent accumulates on training tasks and reads on held-out
ones (XSkill, issue 20).

`raygent run xskill`, on ToolCalc:

0. **Agent**: a `tiny-qwen2` trained by SFT on the scripted expert's episodes of the *seen* templates, where the
   first observation carries the memory context a teacher bank gives it (`sft.task_kwargs.modes`: none, tips only,
   skill only, both), so the agent learns to read a context. The *novel* templates (`xskill.novel_templates`,
   default `a+b*c` and `(a+b)*c`) are in no demonstration and no SFT context.
1. **Phase I, accumulation**: `trainer.steps` batches of train tasks of every template, `rollout.group_size`
   sampled episodes each, the loop (`MemoryLoop`) showing the current memory; after each batch the summarizer
   (`xskill.summarizer`) contrasts each task's successes and failures and its operations update the memory actor
   (`XSkillHook`). The weights stay frozen unless `xskill.rl: true` (then GRPO trains on the same batches).
2. **Phase II, inference**: the same agent, greedy, on held-out tasks (operand combinations never trained on) of
   every template, once per memory variant: `both` (the main evaluation), `none`, `experiences`, `skills`. The
   trainer evaluates them before phase I (memory empty: every variant is the bare agent) and after it.

Outputs: `xskill.json` (the variants' success overall, on seen and on novel templates, per template, and the memory
requests' statuses), `xskill/experiences.json` and `xskill/SKILL.md` (XSkill's files), `xskill/memory_<step>.json`
(the snapshots), and the usual `summary.json`/`report.html` whose before/after are without/with memory after phase I.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from rich.console import Console
from rich.table import Table

from raygent.environments.toolcalc import corpus
from raygent.environments.toolcalc.tasks import TEMPLATES
from raygent.jobs.xskill.actor import start_memory
from raygent.jobs.xskill.hook import XSkillHook
from raygent.jobs.xskill.memory import MemoryBank, MemorySettings, SnapshotError
from raygent.jobs.xskill.summarize import LMSummarizer, OpenAIChat, PolicyChat, ProgrammaticSummarizer, Summarizer
from raygent.jobs.xskill.tasks import tokenizer_text, xskill_tasks
from raygent.platform.config import JobConfig
from raygent.platform.contracts import Task
from raygent.platform.rl.initial import agent_sections, initial_model
from raygent.platform.rl.report import write_report
from raygent.platform.rl.settings import AgentRunConfig
from raygent.platform.rl.tasks import heldout_seed
from raygent.platform.rl.trainer import AgentTrainer

VARIANTS = ("none", "experiences", "skills")
"""Extra evaluation sets; the main held-out set is `both` (the loop's default mode)."""
MIN_GAIN = 0.02
RESULTS_FILE = "xskill.json"


class LMSettings(BaseModel):
    """The LM summarizer's model: `endpoint: policy` prompts the run's own policy engine; a URL is any
    OpenAI-compatible server (`/chat/completions` under it) serving `model`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    endpoint: str = "policy"
    model: str = ""
    api_key_env: str | None = None
    max_new_tokens: int = Field(default=160, ge=8)

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        if value != "policy" and not value.startswith(("http://", "https://")):
            raise ValueError(f"expected 'policy' or an http(s) URL, got {value!r}")
        return value


class MemoryJobSettings(BaseModel):
    """The `xskill` section's knobs that do not depend on the environment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    summarizer: Literal["programmatic", "lm"] = "programmatic"
    """`programmatic`: laptop scale (rules over abstract procedures); `lm`: a language model (`lm`), cluster scale."""
    lm: LMSettings = LMSettings()
    rl: bool = False
    """GRPO on the accumulation batches too (memory and RL in one run); false keeps the agent frozen."""
    max_ops: int = Field(default=3, ge=1)
    memory: MemorySettings = MemorySettings()
    initial_memory: Path | None = None
    """A memory snapshot the run starts from instead of an empty memory (`MemoryBank.save`'s JSON: another run's
    `xskill/memory_<step>.json`, or the experts' teacher bank `bench/xskill_oracle.py` writes); a missing or
    malformed file is refused, naming it. A resumed run restores its checkpoint's memory instead."""

    @field_validator("initial_memory")
    @classmethod
    def _snapshot(cls, value: Path | None) -> Path | None:
        if value is not None:
            try:
                MemoryBank.load(value)
            except SnapshotError as exc:
                raise ValueError(str(exc)) from None
        return value


class XSkillSettings(MemoryJobSettings):
    """The `xskill` section on ToolCalc."""

    novel_templates: list[str] = Field(default_factory=lambda: ["a+b*c", "(a+b)*c"])
    """Templates left out of SFT (reported apart: only memory can teach them)."""

    @field_validator("novel_templates")
    @classmethod
    def _templates(cls, value: list[str]) -> list[str]:
        unknown = [t for t in value if t not in TEMPLATES]
        if unknown:
            raise ValueError(f"unknown templates {unknown}; expected some of {list(TEMPLATES)}")
        return value


class XSkillRunConfig(AgentRunConfig):
    xskill: XSkillSettings = XSkillSettings()

    @model_validator(mode="after")
    def _novel_not_in_sft(self) -> XSkillRunConfig:
        sft_templates = self.sft.task_kwargs.get("templates") or list(TEMPLATES)
        overlap = sorted(set(sft_templates) & set(self.xskill.novel_templates))
        if self.sft.steps and overlap:
            raise ValueError(f"sft.task_kwargs.templates holds novel templates {overlap} (xskill.novel_templates)")
        return self


def make_summarizer(
    settings: MemoryJobSettings, trainer: AgentTrainer | None, programmatic: ProgrammaticSummarizer | None = None
) -> Summarizer:
    """The configured summarizer; the LM one over the trainer's first engine or an OpenAI-compatible URL.
    `programmatic`: the environment's rules (ToolCalc's by default), also what writes the LM summarizer's skills."""
    rules = programmatic or ProgrammaticSummarizer(max_ops=settings.max_ops)
    if settings.summarizer == "programmatic":
        return rules
    lm = settings.lm
    if lm.endpoint == "policy":
        if trainer is None:
            raise ValueError("xskill.lm.endpoint: policy needs the run's engines")
        chat: Any = PolicyChat(trainer.engines[0], trainer.tokenizer, lm.max_new_tokens)
    else:
        import os

        key = os.environ.get(lm.api_key_env) if lm.api_key_env else None
        chat = OpenAIChat(lm.endpoint, lm.model, key, lm.max_new_tokens)
    return LMSummarizer(chat, settings.max_ops, rules)


def actor_name(run_dir: Path) -> str:
    return f"xskill-memory-{zlib.crc32(str(run_dir.resolve()).encode()):08x}"


def with_variants(heldout: list[Task]) -> dict[str, list[Task]]:
    """The held-out tasks once per extra memory variant (`VARIANTS`), as the trainer's extra evaluation sets."""
    return {
        variant: [t.model_copy(update={"params": {**t.params, "xskill_mode": variant}}) for t in heldout]
        for variant in VARIANTS
    }


@dataclass(frozen=True)
class Prepared:
    """What an environment's XSkill job hands the shared phases: the initial model, the summarizer's rules, the
    held-out tasks and the templates reported as novel."""

    model_path: str
    rules: ProgrammaticSummarizer
    heldout: list[Task]
    novel: list[str]


class XSkill:
    name = "xskill"
    summary = "an experience-and-skill memory a frozen agent accumulates from its rollouts and reads on held-out tasks"
    claim = f"held-out success with memory exceeds success without it by >= {MIN_GAIN} (weights frozen)"
    config_model: type[AgentRunConfig] = XSkillRunConfig

    def prepare(self, agent: Any, run_dir: Path, console: Console) -> Prepared:
        """ToolCalc: the tokenizer's text (contexts of the SFT templates' teacher bank), held-out tasks of every
        template, the novel templates."""
        settings = agent.xskill
        sft_templates = agent.sft.task_kwargs.get("templates") or [
            t for t in TEMPLATES if t not in settings.novel_templates
        ]
        text = (
            corpus(n_tasks=2000, seed=agent.trainer.seed) + tokenizer_text(sft_templates, seed=agent.trainer.seed)
            if agent.policy.model is None
            else []
        )
        model_path = initial_model(agent, run_dir, text)
        task_kwargs = {k: v for k, v in agent.env.task_kwargs.items() if k != "modes"}
        heldout = xskill_tasks(
            agent.env.eval_split, heldout_seed(agent.trainer.seed), agent.trainer.eval_tasks, **task_kwargs
        )
        return Prepared(model_path, ProgrammaticSummarizer(max_ops=settings.max_ops), heldout, settings.novel_templates)

    def run(self, config: JobConfig, run_dir: Path, resume: bool = False) -> dict[str, Any]:
        import ray

        console = Console()
        agent: Any = agent_sections(config, self.config_model)
        settings: MemoryJobSettings = agent.xskill
        name = actor_name(run_dir)
        loop = agent.rollout.agent
        loop = loop.model_copy(update={"kwargs": {**loop.kwargs, "actor": name}})
        rollout = agent.rollout.model_copy(update={"agent": loop})
        agent = agent.model_copy(update={"rollout": rollout})
        prepared = self.prepare(agent, run_dir, console)
        actor = start_memory(name, settings.memory.model_dump())
        if settings.initial_memory is not None:
            start = MemoryBank.load(settings.initial_memory)
            ray.get(actor.restore.remote(start.snapshot(), str(settings.initial_memory)))
        hook = XSkillHook(actor, prepared.rules, run_dir, rl=settings.rl)
        trainer = AgentTrainer(
            agent,
            run_dir,
            prepared.model_path,
            console=console,
            extra_evals=with_variants(prepared.heldout),
            hooks=[hook],
        )
        try:
            hook.summarizer = make_summarizer(settings, trainer, prepared.rules)
            trainer.run(resume=resume)
            examples = trainer.examples(4, failures=2)
            MemoryBank.from_snapshot(ray.get(actor.snapshot.remote())).export(run_dir / "xskill")
            memory_stats = ray.get(actor.stats.remote())
        finally:
            trainer.shutdown()
        results = self.results(hook, prepared.novel, memory_stats)
        (run_dir / RESULTS_FILE).write_text(json.dumps(results, indent=1))
        after = results["after"]
        rows = [
            (f"{variant} / {part}", after["none"][part], after[variant][part])
            for variant in ("experiences", "skills", "both")
            for part in ("seen", "novel")
            if after["none"][part] == after["none"][part]  # a part without templates (nan) has no row
        ]
        summary = write_report(
            run_dir,
            config.job,
            self.claim,
            before=after["none"]["success"],
            after=after["both"]["success"],
            min_gain=MIN_GAIN,
            examples=self.examples(examples, run_dir),
            extra={"seed": agent.trainer.seed, "summarizer": settings.summarizer, "rl": settings.rl, **results["flat"]},
            rows=rows,
        )
        self.print_table(console, results)
        console.print(
            f"held-out success: without memory {after['none']['success']:.3f} → with memory "
            f"{after['both']['success']:.3f} (claim {'holds' if summary['holds'] else 'does not hold'})"
        )
        return summary

    def examples(self, examples: list[Any], run_dir: Path) -> list[Any]:
        """The report's example trajectories (the web job adds their screens)."""
        return examples

    @staticmethod
    def results(hook: XSkillHook, novel_templates: list[str], memory_stats: dict[str, float]) -> dict[str, Any]:
        """Per evaluation (before / after phase I) and variant: success overall, on seen and on novel templates."""
        steps = sorted(hook.evals)
        out: dict[str, Any] = {"memory": memory_stats, "novel_templates": novel_templates}
        flat: dict[str, float] = {}
        for label, step in (("before", steps[0]), ("after", steps[-1])):
            table = {}
            for name, record in hook.evals[step].items():
                variant = name or "both"
                templates = record["templates"]
                novel = [v for k, v in templates.items() if k in novel_templates]
                seen = [v for k, v in templates.items() if k not in novel_templates]
                table[variant] = {
                    **record,
                    "seen": sum(seen) / len(seen) if seen else float("nan"),
                    "novel": sum(novel) / len(novel) if novel else float("nan"),
                }
                for part in ("success", "seen", "novel"):
                    flat[f"{label}/{variant}/{part}"] = table[variant][part]
            out[label] = table
        out["flat"] = flat
        return out

    @staticmethod
    def print_table(console: Console, results: dict[str, Any]) -> None:
        table = Table(title="held-out success by memory variant (frozen agent)")
        for column in ("variant", "before", "after", "seen", "novel", "context failed"):
            table.add_column(column)
        for variant in ("none", "experiences", "skills", "both"):
            before, after = results["before"][variant], results["after"][variant]
            failed = after.get("xskill/context_failed", 0) + after.get("xskill/context_timeout", 0)
            table.add_row(
                variant,
                f"{before['success']:.3f}",
                f"{after['success']:.3f}",
                f"{after['seen']:.3f}",
                f"{after['novel']:.3f}",
                f"{failed:.0f}",
            )
        console.print(table)
