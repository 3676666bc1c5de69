"""Specialist to generalist (`seagent.generalist: [app, app, ...]`): SEAgent's last stage at laptop scale.

    raygent run seagent seagent.generalist='[media_player,code_editor]'

1. **Specialists**: for each app in turn, the self-evolution run of `recipe.py` on that app served as an unknown
   page (`RUN_DIR/specialists/<app>`, a whole run with its own report), with `JudgedSuccesses` keeping every
   training episode the World State Model judged done. A finished specialist is not run again on resume.
2. **Generalist**: a new agent from the same kind of prior (the suite's other apps' experts), fine-tuned on the
   specialists' judged successes (`Distill`: `seagent.distill_steps` SFT steps of `distill_batch`, the apps in
   turn), then trained with GRPO + adversarial imitation on the WSM's judgements on all the apps at once
   (`SeagentEnv` with every page, `Curricula` started from the specialists' curricula; `generalist_steps`, by
   default the specialists' steps together) (`RUN_DIR/generalist`).
3. **Measure**: each app's held-out tasks with its checker, the same tasks for the specialist and the generalist;
   the claim is that the generalist matches or beats the mean of the specialists on their own apps.

The judge and both priors are trained on the suite's apps outside `seagent.generalist` (one judge for all runs,
so it is fine-tuned once and cached); no run ever sees a learned app's checker. `generalist.json` holds every
number; `summary.json`'s `before_success` is the specialists' mean (each on its own app) and `after_success` the
generalist's, with one row per app for each.
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean
from typing import Any

from rich.console import Console

from raygent.environments.web.registry import BUILTIN_APPS
from raygent.environments.web.server import AppServer
from raygent.jobs.seagent.hook import Distill, JudgedExamples, JudgedSuccesses
from raygent.jobs.seagent.recipe import (
    CURRICULA,
    Seagent,
    SeagentConfig,
    prepare_judge,
    prior_pool,
    self_evolving,
    tokenizer_corpus,
)
from raygent.platform.config import load_entry
from raygent.platform.rl.initial import initial_model
from raygent.platform.rl.report import write_report
from raygent.platform.rl.tasks import heldout_seed
from raygent.platform.rl.trainer import AgentTrainer

CLAIM = "the generalist matches or beats the mean of the specialists on their own apps"
SUCCESSES = "successes.json"


def for_apps(agent: SeagentConfig, apps: list[str], **seagent: Any) -> SeagentConfig:
    """`agent` learning `apps`, with the judge and the prior on the suite's other apps."""
    others = [a for a in BUILTIN_APPS if a not in agent.seagent.generalist]
    return agent.model_copy(
        update={
            "seagent": agent.seagent.model_copy(update={"app": apps[0], "wsm_apps": tuple(others), **seagent}),
            "env": agent.env.model_copy(update={"kwargs": {}, "task_kwargs": {**agent.env.task_kwargs, "apps": apps}}),
            "sft": agent.sft.model_copy(update={"task_kwargs": {**agent.sft.task_kwargs, "apps": others}}),
        }
    )


def specialist(
    agent: SeagentConfig, app: str, url: str, job: str, run_dir: Path, resume: bool, console: Console
) -> dict[str, Any]:
    """One specialist's summary, curriculum state and judged successes (read back when it already finished)."""
    if not (run_dir / "summary.json").is_file():
        console.rule(f"specialist: {app}")
        successes = JudgedSuccesses()
        config = for_apps(agent, [app], generalist=())
        Seagent().run_page(config, job, run_dir, resume and run_dir.is_dir(), url, console, hooks=[successes])
        (run_dir / SUCCESSES).write_text(json.dumps(successes.state()))
    successes = JudgedSuccesses()
    successes.load_state(json.loads((run_dir / SUCCESSES).read_text()))
    return {
        "summary": json.loads((run_dir / "summary.json").read_text()),
        "curriculum": json.loads((run_dir / "seagent.json").read_text())["curriculum"],
        "successes": successes,
    }


def run_generalist(agent: SeagentConfig, job: str, run_dir: Path, resume: bool, console: Console) -> dict[str, Any]:
    apps = list(agent.seagent.generalist)
    s = agent.seagent
    server = AppServer(docs=False).start()
    try:
        urls = {app: server.app_url(app) for app in apps}
        specialists = {
            app: specialist(agent, app, urls[app], job, run_dir / "specialists" / app, resume, console) for app in apps
        }
        console.rule("generalist")
        steps = s.generalist_steps if s.generalist_steps is not None else agent.trainer.steps * len(apps)
        config = for_apps(agent, apps, wsm_eval_seeds=0)
        trainer_settings = config.trainer.model_copy(update={"steps": steps, "eval_tasks": 0})
        config = config.model_copy(update={"trainer": trainer_settings})
        model, _ = prepare_judge(config, console)
        config = self_evolving(config, model, CURRICULA, {"urls": list(urls.values())})
        config.env.kwargs["urls"] = list(urls.values())
        directory = run_dir / "generalist"
        directory.mkdir(parents=True, exist_ok=True)
        pool = prior_pool(config, s.demo_workers, console)
        model_path = initial_model(config, directory, tokenizer_corpus(pool, apps, list(urls.values())))
        task_fn = load_entry(agent.env.tasks)
        held_out = (agent.env.eval_split, heldout_seed(agent.trainer.seed), agent.trainer.eval_tasks)
        # each app's held-out tasks exactly as its specialist's trainer drew them
        evals = {app: task_fn(*held_out, **{**agent.env.task_kwargs, "apps": [app]}) for app in apps}
        demonstrations = {app: specialists[app]["successes"].demonstrations() for app in apps}
        examples = JudgedExamples(s.judged_examples)
        hooks = [Distill(demonstrations, s.distill_steps, s.distill_batch), examples]
        trainer = AgentTrainer(config, directory, model_path, console=console, extra_evals=evals, hooks=hooks)
        trainer.source.load_state({"pages": [specialists[app]["curriculum"] for app in apps]})
        try:
            result = trainer.run(resume=resume)
            curricula = trainer.source.state()
        finally:
            trainer.shutdown()
    finally:
        server.stop()
    per_app = {
        app: {
            "specialist_before": specialists[app]["summary"]["before_success"],
            "specialist_after": specialists[app]["summary"]["after_success"],
            "generalist_before": result[f"eval/{app}/before"],
            "generalist_after": result[f"eval/{app}/after"],
            "successes_distilled": len(demonstrations[app]),
        }
        for app in apps
    }
    specialists_mean = mean(row["specialist_after"] for row in per_app.values())
    generalist_mean = mean(row["generalist_after"] for row in per_app.values())
    details = {"apps": per_app, "urls": urls, "steps": steps, "curricula": curricula, "judged": examples.kept}
    (run_dir / "generalist.json").write_text(json.dumps(details, indent=2, default=str))
    rows = [
        row
        for app, r in per_app.items()
        for row in (
            (f"{app}: specialist (prior → after)", r["specialist_before"], r["specialist_after"]),
            (f"{app}: generalist (prior → after)", r["generalist_before"], r["generalist_after"]),
        )
    ]
    summary = write_report(
        run_dir,
        job,
        CLAIM,
        before=specialists_mean,
        after=generalist_mean,
        min_gain=0.0,
        rows=rows,
        metrics_dir=directory,
        extra={
            "seed": agent.trainer.seed,
            "apps": apps,
            "specialists_success": specialists_mean,
            "generalist_success": generalist_mean,
            "generalist_prior_success": mean(row["generalist_before"] for row in per_app.values()),
            "details": "generalist.json",
        },
    )
    console.print(
        f"held-out success, each app's own tasks: specialists {specialists_mean:.3f}, generalist "
        f"{generalist_mean:.3f} ({'holds' if summary['holds'] else 'does not hold'}: {CLAIM})"
    )
    return summary
