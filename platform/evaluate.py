"""`raygent eval ENV --policy P`: a policy's greedy success on a registered environment's tasks, without training.

    raygent eval toolcalc --policy runs/grpo_toy/20261207-101500      # a run directory: its trained policy
    raygent eval toolcalc --policy smollm2-135m-instruct --episodes 64   # a preset or a model directory

Where it sits: the same actors as a training run (`AgentTrainer`: engines, rollout workers, the judge), built with
no SFT and no RL steps; `AgentTrainer.evaluate` runs one greedy evaluation of `episodes` tasks of `split` drawn
with the held-out seed of `seed` (`heldout_seed`), one episode per task, exactly the set a run's own evaluation
draws. With a run directory the run's saved sections (prompt format, turns, environment and task kwargs, reward
model, seed) are used and the policy is its final checkpoint, so the number is the run's own "after" number.

Output (`--out DIR`, default `runs/eval/<env>-<timestamp>`): `summary.json` (success overall and per template, each
with its Wilson 95 % interval, and what was evaluated), `trajectories.jsonl` (one line per episode), `metrics.jsonl`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from raygent.platform.config import ConfigError, first_error
from raygent.platform.contracts import Trajectory
from raygent.platform.envs import EnvRegistryError, get_env, named_env
from raygent.platform.rl import checkpoint as ckpt
from raygent.platform.rl.settings import AgentRunConfig
from raygent.platform.rundir import load_run_config
from raygent.policies.loading import resolve_model

SUMMARY_FILE = "summary.json"
TRAJECTORIES_FILE = "trajectories.jsonl"
Z95 = 1.959964


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a success rate (95 % by default); (nan, nan) for no episodes.

    >>> [round(x, 3) for x in wilson(8, 10)]
    [0.49, 0.943]
    """
    if n == 0:
        return float("nan"), float("nan")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _plain(value: Any) -> Any:
    return value.model_dump() if hasattr(value, "model_dump") else value


def template_of(trajectory: Trajectory) -> str:
    """A task's template: `params["template"]` where the task function sets it, else its id without the seed."""
    template = trajectory.task.params.get("template")
    return str(template) if template is not None else trajectory.task.id.rsplit("/", 1)[0]


def eval_sections(
    env: str, policy: str, episodes: int | None, seed: int | None, split: str | None
) -> tuple[AgentRunConfig, str, dict[str, Any]]:
    """The agent sections an evaluation runs with, the model directory and a description of the policy; a
    `ConfigError` naming the argument when one is wrong (before Ray starts)."""
    try:
        spec = get_env(env)
    except EnvRegistryError as exc:
        raise ConfigError(f"ENV: {exc}") from None
    if policy.startswith(("http://", "https://")):
        raise ConfigError(
            f"--policy {policy}: evaluating an OpenAI-compatible endpoint is not built yet; give a run directory, "
            "a preset (smollm2-135m-instruct) or a model directory"
        )
    given = Path(policy)
    trainer: dict[str, Any] = {"steps": 0, "tensorboard": False}
    if (given / "config.yaml").is_file():
        saved = load_run_config(given)
        final = given / ckpt.CHECKPOINTS / ckpt.FINAL
        if not (final / "config.json").is_file():
            raise ConfigError(f"--policy {policy}: the run has no trained policy yet ({final} is missing)")
        data = {
            name: _plain(getattr(saved, name))
            for name in AgentRunConfig.model_fields
            if getattr(saved, name, None) is not None
        }
        trained_on = (data.get("env") or {}).get("id", "no environment")
        if trained_on != spec.id:
            raise ConfigError(f"ENV: the run at {policy} trained on {trained_on}; {env} is {spec.id}")
        data["trainer"] = {**data.get("trainer", {}), **trainer}
        data["sft"] = {**data.get("sft", {}), "steps": 0}
        data["policy"] = {**data.get("policy", {}), "model": str(final)}
        described = {"policy": str(given.resolve()), "model": str(final), "run": str(given.resolve())}
    else:
        data = {"env": named_env({"name": env}), "policy": {"model": policy}, "trainer": trainer, "sft": {"steps": 0}}
        described = {"policy": policy}
    if episodes is not None:
        data["trainer"]["eval_tasks"] = episodes
    if seed is not None:
        data["trainer"]["seed"] = seed
    if split is not None:
        data["env"] = {**data["env"], "eval_split": split}
    try:
        config = AgentRunConfig.model_validate(data)
    except ValidationError as exc:
        where = first_error(exc)
        where = where.replace("policy.model: ", "--policy: ", 1) if where.startswith("policy.model: ") else where
        raise ConfigError(f"raygent eval {env}: {where}") from None
    if config.trainer.eval_tasks < 1:
        raise ConfigError("--episodes: expected at least 1")
    assert config.policy.model is not None  # both branches above set it
    # a preset's name becomes its converted directory in the cache, as a run's `initial_model` does
    return config, str(resolve_model(config.policy.model)), described


def summarize(
    trajectories: Sequence[Trajectory], config: AgentRunConfig, env: str, described: dict[str, Any]
) -> dict[str, Any]:
    """Success overall and per template with Wilson intervals; infrastructure failures counted apart."""
    done = [t for t in trajectories if not t.infra_failure]
    by_template: dict[str, list[bool]] = {}
    for t in done:
        by_template.setdefault(template_of(t), []).append(bool(t.success))
    wins = sum(bool(t.success) for t in done)
    low, high = wilson(wins, len(done))
    return {
        "env": env,
        **described,
        "split": config.env.eval_split,
        "seed": config.trainer.seed,
        "episodes": len(done),
        "infra_failures": max(config.trainer.eval_tasks - len(done), 0),
        "success": wins / len(done) if done else float("nan"),
        "ci95": [low, high],
        "templates": {
            name: {
                "episodes": len(outcomes),
                "success": sum(outcomes) / len(outcomes),
                "ci95": list(wilson(sum(outcomes), len(outcomes))),
            }
            for name, outcomes in sorted(by_template.items())
        },
    }


def run_eval(config: AgentRunConfig, model: str, out: Path, env: str, described: dict[str, Any]) -> dict[str, Any]:
    """Start the actors on the connected cluster, evaluate once, write the outputs; the summary."""
    from rich.console import Console

    from raygent.platform.rl.trainer import AgentTrainer

    trainer = AgentTrainer(config, out, model, console=Console())
    try:
        trajectories = trainer.evaluate()
    finally:
        trainer.shutdown()
    summary = summarize(trajectories, config, env, described)
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2))
    with (out / TRAJECTORIES_FILE).open("w") as lines:
        for t in trajectories:
            record = {
                "task_id": t.task.id,
                "task": t.task.instruction,
                "template": template_of(t),
                "success": bool(t.success),
                "reward": t.total_reward,
                "infra_failure": t.infra_failure,
                "steps": [{"observation": s.observation.text, "action": s.action} for s in t.steps],
            }
            lines.write(json.dumps(record) + "\n")
    return summary
