"""single_turn: the generic agent job for a single-turn task, a prompt source and a reward function.

    raygent run single_turn                                     # the shipped example (one-digit sums on SmolLM2)
    raygent run my_task.yaml                                    # entry: raygent.jobs.single_turn.recipe:SingleTurn

The config's `single_turn` section names the task function (or a list of prompts) and the reward function
(`settings.py`); the recipe runs them through the RL core as one-step episodes of `SingleTurnEnv`: an optional SFT
stage (`sft.steps` with `env.demonstrations`), then GRPO, with greedy success on the held-out split before and after.
The prompt is the task's instruction as it is (`policy.prompt.framing: chat`, the default here), so SFT, GRPO,
evaluation and `raygent serve` render the same messages TRL or an OpenAI client would send. The report says what
ran (e.g. "GRPO only, no SFT"), on which tasks, with which reward and success threshold.

`policy.model` is a checkpoint or a pretrained preset (`smollm2-135m-instruct`); unset, a tiny model of
`policy.preset` is built with a tokenizer trained on the tasks' text (the tests' setting).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from rich.console import Console

from raygent.jobs.single_turn.settings import SingleTurnConfig
from raygent.platform.config import JobConfig, load_entry
from raygent.platform.rl.recipe import AgentRecipe, Setup, Trained
from raygent.platform.rl.tasks import heldout_seed

TOKENIZER_TASKS = 512
"""Training tasks whose text (with the held-out ones) trains the tokenizer of a tiny model built from scratch."""


def stages(config: SingleTurnConfig) -> str:
    """What the run trains, in words: "GRPO only, no SFT", "SFT (20 steps), then GRPO (12 steps)", ..."""
    sft, rl = config.sft.steps, config.trainer.steps
    if sft and rl:
        return f"SFT ({sft} steps), then GRPO ({rl} steps)"
    if sft:
        return f"SFT only ({sft} steps), no GRPO"
    if rl:
        return f"GRPO only ({rl} steps), no SFT"
    return "no training (evaluation only)"


def tokenizer_text(config: SingleTurnConfig) -> list[str]:
    """The tasks' instructions, for the tokenizer of a tiny model built from scratch."""
    env = config.env
    task_fn = load_entry(env.tasks)
    seed = config.trainer.seed
    tasks = task_fn(env.train_split, seed, TOKENIZER_TASKS, **env.task_kwargs)
    tasks += task_fn(env.eval_split, heldout_seed(seed), max(config.trainer.eval_tasks, 1), **env.task_kwargs)
    return [task.instruction for task in tasks]


class SingleTurn(AgentRecipe):
    name = "single_turn"
    summary = "GRPO (optionally after SFT) on a single-turn task: a prompt source and a reward function by module:attr"
    claim = "held-out greedy success rises by >= single_turn.min_gain"
    config_model = SingleTurnConfig
    examples_kept = (3, 1)

    def prepare(self, agent: Any, run_dir: Path, console: Console) -> Setup:
        return Setup(tokenizer_text=tokenizer_text(agent) if agent.policy.model is None else [])

    def report(
        self, config: JobConfig, agent: Any, run_dir: Path, trained: Trained, console: Console
    ) -> dict[str, Any]:
        task = agent.single_turn
        ran = stages(agent)
        before, after = float(trained.result["eval/before"]), float(trained.result["eval/after"])
        evaluated = agent.trainer.eval_tasks > 0
        held_out = (
            f"{agent.trainer.eval_tasks} tasks of split {agent.env.eval_split!r}"
            if evaluated
            else "none (trainer.eval_tasks=0)"
        )
        if task.prompts is not None and task.eval_prompts is None and evaluated:
            held_out += " (no eval_prompts: the training prompts)"
        claim = (
            f"{ran}: held-out greedy success (reward >= {task.success_threshold:g}) rises by >= {task.min_gain:g}"
            f" from the model as {'SFT left it' if agent.sft.steps else 'it started'}"
        )
        summary = self.write(
            config,
            agent,
            run_dir,
            trained,
            claim=claim,
            min_gain=task.min_gain,
            extra={
                "run": ran,
                "sft_steps": agent.sft.steps,
                "grpo_steps": agent.trainer.steps,
                "tasks": task.source(),
                "reward": task.reward,
                "success_threshold": task.success_threshold,
                "held_out": held_out,
                "model": agent.policy.model or f"{agent.policy.preset} (built from scratch)",
                "framing": agent.policy.prompt.framing,
                "prompts_per_step": agent.rollout.groups_per_step,
                "group_size": agent.rollout.group_size,
            },
        )
        if evaluated and not (math.isnan(before) or math.isnan(after)):
            console.print(
                f"{ran}: held-out greedy success {before:.3f} → {after:.3f} (gain {after - before:+.3f} on {held_out})"
            )
        else:
            console.print(f"{ran}: no held-out evaluation (trainer.eval_tasks=0)")
        return summary
