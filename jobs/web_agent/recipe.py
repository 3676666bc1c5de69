"""web_agent: a tiny language-model agent learns to operate the suite's web apps — SFT on four, GRPO on the fifth.

1. **Demonstrations**: the scripted experts of four apps (`sft.task_kwargs.apps`) solve a pool of their tasks
   in Chromium; each turn is kept as (compact observation, action) and cached on disk (`demos.py`).
2. **Policy**: a `tiny-qwen2` model with a byte-level BPE tokenizer trained on the demonstrations' text, every
   app's instructions and the fifth app's first screens (unlabelled text: without them its screens fall apart
   into byte pieces and run past the prompt lengths SFT trains on), built into `RUN_DIR/init_model` when
   `policy.model` is unset and loaded through the same `load_policy` path a real checkpoint takes.
3. **SFT** on the four apps' demonstrations, then **GRPO** on the fifth app's tasks (`env.task_kwargs`) with the
   task checker as reward, through the RL core's rollout workers and engines over `CompactWebEnv`. After each
   GRPO update, SFT steps on hindsight demonstrations: the fifth app's goals the episodes achieved on the way,
   whatever they were asked, replayed from a buffer (`replay.py`, a trainer hook; `web.replay`) that
   `web.explore_episodes` of random-click exploration of the fifth app's train tasks seed (`explore.py`).
4. **Evaluation** (greedy, one episode per task) before and after GRPO on held-out tasks of the fifth app —
   parameter seeds never drawn in training — and, as their own row, on templates of the fifth app that are
   never trained on (`env.task_kwargs.exclude`).
5. **Report**: `report.html` with the learning curve, the before/after table and example trajectories whose
   screens are replayed in the browser (`screens.py`).

Claim: GRPO raises held-out success on the fifth app by at least `MIN_GAIN` (absolute) over the SFT model. The
"after" model is the whole RL stage's — GRPO with its hindsight replay; the exploration data is used only there.

How it differs from SEAgent (`docs/architecture.md`): SEAgent starts from UI-TARS-7B, learns each
novel app from its own curriculum judged by a World State Model, and trains GRPO on judged good steps plus
adversarial imitation on failure steps. Here the prior knowledge is SFT on other apps, the reward is the
app's own checker (no judge), the tasks are the suite's templates (no generated curriculum) and GRPO is
rollout-level with the group-normalised advantage. Cluster scale is the same job:
`raygent submit web_agent --address ... policy.model=/models/UI-TARS-7B policy.backend=vllm rollout.num_workers=16`.
"""

from __future__ import annotations

from pathlib import Path
from statistics import mean
from typing import Any

from pydantic import Field
from rich.console import Console

from raygent.environments.web.agent import screens
from raygent.environments.web.agent.demos import demonstrations, first_screens, record_pool
from raygent.environments.web.agent.tasks import sft_pool_for, template_ids, tokenizer_corpus, web_tasks
from raygent.environments.web.registry import make_task
from raygent.jobs.web_agent.explore import explorations
from raygent.jobs.web_agent.replay import HindsightReplay, ReplaySettings
from raygent.platform.config import JobConfig
from raygent.platform.rl import metrics as m
from raygent.platform.rl.recipe import AgentRecipe, Setup, Trained
from raygent.platform.rl.settings import AgentRunConfig, Section
from raygent.platform.rl.tasks import heldout_seed

MIN_GAIN = 0.10
UNSEEN = "unseen_templates"
"""The name of the extra evaluation set of templates never trained on (`eval/unseen_templates/success`)."""


class WebSettings(Section):
    """The web agent's own knobs (the `web:` section of its config)."""

    heldout_template_tasks: int = Field(default=16, ge=0)
    """Tasks of the templates never trained on (`env.task_kwargs.exclude`) evaluated as their own row."""
    demo_workers: int = Field(default=3, ge=1)
    """Threads (each with its own Chromium) that record missing demonstrations."""
    hindsight_per_template: int = Field(default=8, ge=0)
    """Candidate goals per GRPO template that each episode is checked against after every step (hindsight
    demonstrations, with `replay.demos`); 0 turns the check off."""
    replay: ReplaySettings = ReplaySettings()
    """The hindsight replay hook (`replay.py`)."""
    explore_episodes: int = Field(default=0, ge=0)
    """Random-click exploration episodes on train tasks of the RL app whose reached goals seed the hindsight
    buffer (`explore.py`); 0 turns exploration off."""
    explore_steps: int = Field(default=6, ge=1)
    """Clicks per exploration episode."""
    explore_transfers: int = Field(default=0, ge=0)
    """Other train tasks of its template each short exploration demonstration is replayed on; every goal its
    clicks reach there joins the buffer too (`explore._transfer`)."""
    examples: int = Field(default=4, ge=0)
    """Example trajectories in the report (at least one failure when there is one)."""
    screenshot_size: tuple[int, int] = (480, 300)


class WebAgentConfig(AgentRunConfig):
    """The sections of `jobs/configs/web_agent.yaml`: the RL core's and `web`."""

    web: WebSettings = WebSettings()


def template_rows(records: list[dict[str, Any]], last_step: int) -> list[tuple[str, float, float]]:
    """`(held-out <template>, before, after)`: held-out success per template in the evaluations at step 0 and
    `last_step` (their `eval/outcomes`); none when either is missing."""
    outcomes = {r[m.STEP]: r[m.EVAL_OUTCOMES] for r in records if r.get(m.STAGE) == "eval" and m.EVAL_OUTCOMES in r}
    if 0 not in outcomes or last_step not in outcomes:
        return []

    def by_template(step: int) -> dict[str, list[bool]]:
        grouped: dict[str, list[bool]] = {}
        for task_id, success in outcomes[step].items():
            grouped.setdefault(task_id.rsplit("/", 1)[0], []).append(bool(success))
        return grouped

    before, after = by_template(0), by_template(last_step)
    return [
        (f"held-out {template}", float(mean(before.get(template, [float("nan")]))), float(mean(results)))
        for template, results in sorted(after.items())
    ]


class WebAgent(AgentRecipe):
    name = "web_agent"
    summary = "SFT of a tiny LM agent on four web apps' experts, then GRPO on the fifth app with its checker"
    claim = f"GRPO raises held-out success on the fifth app by >= {MIN_GAIN} over the SFT model"
    config_model = WebAgentConfig
    min_gain = MIN_GAIN

    def prepare(self, agent: Any, run_dir: Path, console: Console) -> Setup:
        grpo_kwargs = agent.env.task_kwargs
        sft_kwargs = {**grpo_kwargs, **agent.sft.task_kwargs}
        pool = sft_pool_for(sft_kwargs)
        record_pool(pool, agent.web.demo_workers, console)
        never_trained = list(grpo_kwargs.get("exclude", ()))
        grpo_templates = template_ids(
            grpo_kwargs.get("apps"), grpo_kwargs.get("templates"), grpo_kwargs.get("difficulties", (1,)), never_trained
        )
        if agent.web.hindsight_per_template:
            agent.env.kwargs.setdefault("hindsight", grpo_templates)
            agent.env.kwargs.setdefault("hindsight_per_template", agent.web.hindsight_per_template)
        first = first_screens([make_task(f"{tid}/0").to_platform() for tid in grpo_templates], agent.web.demo_workers)
        unseen = (
            web_tasks(
                agent.env.eval_split,
                heldout_seed(agent.trainer.seed),
                agent.web.heldout_template_tasks,
                apps=None,
                templates=never_trained,
                difficulties=(1, 2, 3),
            )
            if never_trained and agent.web.heldout_template_tasks
            else []
        )
        explored = self._explore(agent, grpo_templates, console) if agent.web.explore_episodes else []
        return Setup(
            tokenizer_text=tokenizer_corpus(demonstrations(pool), first),
            hooks=[HindsightReplay(agent.web.replay, seed=explored)] if agent.web.replay.demos else [],
            extra_evals={UNSEEN: unseen} if unseen else None,
            state={"grpo_templates": grpo_templates, "never_trained": never_trained, "sft_tasks": len(pool)},
        )

    def kept_examples(self, agent: Any) -> tuple[int, int]:
        return agent.web.examples, 1

    def report(
        self, config: JobConfig, agent: Any, run_dir: Path, trained: Trained, console: Console
    ) -> dict[str, Any]:
        examples = screens.capture(trained.examples, run_dir, agent.web.screenshot_size) if trained.examples else []
        result, state = trained.result, trained.setup.state
        rows = (
            [("templates never trained on", result[f"eval/{UNSEEN}/before"], result[f"eval/{UNSEEN}/after"])]
            if trained.setup.extra_evals
            else []
        )
        rows += template_rows(m.MetricsLog(run_dir, tensorboard=False).read(), agent.trainer.steps)
        summary = self.write(
            config,
            agent,
            run_dir,
            trained,
            rows=rows,
            examples=examples,
            extra={
                "grpo_templates": state["grpo_templates"],
                "never_trained_templates": state["never_trained"],
                "sft_tasks": state["sft_tasks"],
            },
        )
        unseen_line = (
            f"; templates never trained on: {rows[0][1]:.3f} → {rows[0][2]:.3f}" if trained.setup.extra_evals else ""
        )
        console.print(
            f"held-out success: SFT {summary['before_success']:.3f} → GRPO {summary['after_success']:.3f} "
            f"(gain {summary['gain']:+.3f}; claim {'holds' if summary['holds'] else 'does not hold'}){unseen_line}"
        )
        return summary

    @staticmethod
    def _explore(agent: WebAgentConfig, templates: list[str], console: Console) -> list[Any]:
        """Exploration episodes of the RL app's train tasks (cached); their demonstrations (`explore.py`)."""
        tasks = web_tasks("train", agent.trainer.seed + 104_729, agent.web.explore_episodes, **agent.env.task_kwargs)
        with console.status("exploring the RL app"):
            found = explorations(
                tasks,
                templates,
                agent.web.hindsight_per_template,
                agent.web.explore_steps,
                agent.web.demo_workers,
                agent.env.id,
                agent.web.explore_transfers,
            )
        goals = len({task.instruction for task, _ in found})
        console.print(f"exploration: {len(tasks)} episodes, {len(found)} demonstrations of {goals} distinct goals")
        return found
