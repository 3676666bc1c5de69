"""seagent: a web agent teaches itself an app it has never seen — curriculum, World State Model, GRPO + AI.

`raygent run seagent env.url=http://127.0.0.1:PORT/app/` (default: the suite's media player, served by the run
on its own loopback server as a page the environment knows nothing about):

1. **Prior**: a `tiny-qwen2` agent (tokenizer on the known apps' text and the new page's first screen) is
   fine-tuned on the scripted experts of four other apps (`sft.task_kwargs.apps`), as the web agent is; this is
   the starting agent.
2. **World State Model** (`rewards/seagent/`): unless `seagent.wsm_model` names one, the pretrained preset
   (SmolLM2-135M-Instruct) is fine-tuned as a yes/no judge on checker-labelled trajectories of the four other
   apps (`wsm_data.py`, `wsm_train.py`; recorded and trained once, cached), and its agreement with the learned
   app's checker is measured on that app's expert, prefix, deviation and random trajectories (success accuracy,
   first-error-step accuracy). The learned app never trains it.
3. **Self-evolution** (`seagent.variant: wsm`): the curriculum (`curriculum.py`, the task source) explores the
   page, writes its guidebook and proposes instructions; the episodes run in `SeagentEnv` on the URL with no
   checker; the WSM judges them in a reward actor (`reward.mode: replace`), and the learner sums GRPO on the
   judged outcome and adversarial imitation (γ = `learner.loss.terms[adversarial_imitation].coef`, 0.2) on
   each failed episode's first error step.
4. **Measure**: greedy held-out success on the learned app's own tasks, with its checker (never seen in
   training), before (the prior) and after. `seagent.variant: checker` is the same run on the app's own train
   tasks with its checker as reward (the upper reference); `bench/seagent.py` runs both.
5. **Report**: `report.html` (curve, before/after, evaluation trajectories with screenshots) and `seagent.html`
   / `seagent.json` (the WSM's agreement, the guidebook, the curriculum's tasks with their judged outcomes, and
   judged training trajectories with each step's screen, caption and label).
6. **Specialist to generalist** (`seagent.generalist: [apps]`, `generalist.py`): this run on each app, then a
   generalist distilled from their judged successes and trained on all of them.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator
from rich.console import Console

from raygent.environments.web.agent import screens as screenshots
from raygent.environments.web.agent.demos import demonstrations, record_pool
from raygent.environments.web.agent.tasks import sft_pool
from raygent.environments.web.registry import BUILTIN_APPS, list_tasks, make_task
from raygent.environments.web.server import AppServer
from raygent.environments.web.url_env import check_url, url_task
from raygent.jobs.seagent.hook import JudgedExamples
from raygent.platform.config import JobConfig
from raygent.platform.rl.hooks import TrainerHook
from raygent.platform.rl.initial import agent_sections, initial_model
from raygent.platform.rl.report import write_report
from raygent.platform.rl.reward import RewardSettings
from raygent.platform.rl.settings import AgentRunConfig, EnvSettings, Section
from raygent.platform.rl.tasks import TaskSettings
from raygent.platform.rl.trainer import AgentTrainer
from raygent.policies.cache import cache_root, file_lock

WSM = "raygent.rewards.seagent.wsm:WorldStateModel"
CURRICULUM = "raygent.jobs.seagent.curriculum:Curriculum"
CURRICULA = "raygent.jobs.seagent.curriculum:Curricula"
TRAIN_APPS = ("code_editor", "image_editor", "word_processor", "slide_editor")
MIN_GAIN = 0.05
AGREEMENT_SWAPPED = 2
"""Swapped instructions per trajectory in the judge's agreement report (its training takes `seagent.wsm_swapped`)."""


class SeagentEnvSettings(EnvSettings):
    url: str = ""
    """The app to learn (http(s) on loopback). Empty: `seagent.app` of the suite, served by the run on its own
    loopback server as a page the environment knows nothing about."""

    @field_validator("url")
    @classmethod
    def _loopback(cls, value: str) -> str:
        return check_url(value) if value else value


class SeagentSettings(Section):
    """The `seagent:` section."""

    variant: Literal["wsm", "checker"] = "wsm"
    """wsm: the curriculum's tasks on the URL judged by the World State Model (SEAgent); checker: the app's own
    train tasks with its checker as reward (the comparison; needs a suite app)."""
    app: str = "media_player"
    """The suite app served as the unknown page when `env.url` is empty, and whose held-out tasks (and checker)
    measure the agent."""
    wsm_model: str | None = None
    """A trained judge directory; None: fine-tuned by the run from the pretrained preset (cached)."""
    wsm_base: str = "smollm2-135m-instruct"
    wsm_apps: tuple[str, ...] = TRAIN_APPS
    """The apps whose checker-labelled trajectories train the judge (never the learned app)."""
    wsm_seeds: int = Field(default=1, ge=1)
    """Task seeds per template (difficulties 1 and 2) recorded for the judge's training."""
    wsm_eval_seeds: int = Field(default=2, ge=0)
    """Task seeds per template of the learned app for the judge's agreement with its checker (0: not measured)."""
    wsm_swapped: int = Field(default=0, ge=0)
    """Done questions per training trajectory under other tasks' instructions of its app, labelled by their
    checkers on its final state (`wsm_train.samples`). Measured with 2 (docs/seagent.md): the judge then called
    nothing done on the unseen app, and its first-error accuracy fell; so 0."""
    wsm_train_layers: int = Field(default=4, ge=1)
    wsm_epochs: int = Field(default=3, ge=1)
    wsm_lr: float = Field(default=2e-4, gt=0)
    record_workers: int = Field(default=2, ge=1)
    demo_workers: int = Field(default=3, ge=1)
    examples: int = Field(default=4, ge=0)
    judged_examples: int = Field(default=8, ge=0)
    screenshot_size: tuple[int, int] = (480, 300)
    generalist: tuple[str, ...] = ()
    """Specialist to generalist: a specialist self-evolves on each of these suite apps in turn
    (`RUN_DIR/specialists/<app>`), then a generalist starts from the same prior, is fine-tuned on the specialists'
    judged successes and self-evolves on all the apps at once. The judge and the prior are trained on the suite's
    other apps (`wsm_apps` and `sft.task_kwargs.apps` are replaced). Empty: one run on `app` (or `env.url`)."""
    generalist_steps: int | None = Field(default=None, ge=0)
    """The generalist's RL steps; None: `trainer.steps` × the number of apps (the specialists' steps together)."""
    distill_steps: int = Field(default=40, ge=0)
    """SFT steps on the specialists' judged successes before the generalist's first RL step."""
    distill_batch: int = Field(default=8, ge=1)
    """Successful trajectories per distillation step (a seeded draw, balanced over the apps)."""

    @field_validator("app")
    @classmethod
    def _suite_app(cls, value: str) -> str:
        if value not in BUILTIN_APPS:
            raise ValueError(f"expected one of the suite's apps {BUILTIN_APPS}, got {value!r}")
        return value

    @field_validator("generalist")
    @classmethod
    def _generalist_apps(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [a for a in value if a not in BUILTIN_APPS]
        if unknown:
            raise ValueError(f"unknown apps {unknown}; expected the suite's apps {BUILTIN_APPS}")
        if value and (len(set(value)) < 2 or len(set(value)) == len(BUILTIN_APPS)):
            raise ValueError(f"a generalist needs at least 2 distinct apps and leaves one to train the judge, "
                             f"got {list(value)}")  # fmt: skip
        return tuple(dict.fromkeys(value))

    @model_validator(mode="after")
    def _held_out(self) -> SeagentSettings:
        if self.app in self.wsm_apps:
            raise ValueError(f"wsm_apps: the learned app {self.app!r} must not train the judge")
        unknown = [a for a in self.wsm_apps if a not in BUILTIN_APPS]
        if unknown:
            raise ValueError(f"wsm_apps: unknown apps {unknown}")
        return self


class SeagentConfig(AgentRunConfig):
    """The sections of `jobs/configs/seagent.yaml`: the agent sections (the WSM's kwargs are checked by
    `WorldStateModel.Settings`, the curriculum's by `Curriculum.Settings`), `env.url` and `seagent:`."""

    env: SeagentEnvSettings
    seagent: SeagentSettings = SeagentSettings()

    @model_validator(mode="after")
    def _generalist_run(self) -> SeagentConfig:
        if self.seagent.generalist:
            if self.seagent.variant != "wsm":
                raise ValueError("seagent.generalist: specialists and generalist self-evolve (variant: wsm)")
            if self.env.url:
                raise ValueError("seagent.generalist: the apps are the suite's, served by the run (env.url is empty)")
            if self.rollout.groups_per_step < len(self.seagent.generalist):
                raise ValueError("rollout.groups_per_step: the generalist needs at least one group per app")
        return self


def first_screen(url: str) -> str:
    """The page's first screen as the agent reads it (one episode start, no action)."""
    from raygent.jobs.seagent.env import SeagentEnv

    env = SeagentEnv(url=url)
    try:
        observation, _ = env.reset(options={"task": url_task(url, "Explore the app.")})
        return str(observation["text"])
    finally:
        env.close()


def wsm_tasks(apps: tuple[str, ...], seeds: int) -> list[Any]:
    return [make_task(f"{t}/{s}").to_platform() for a in apps for t in list_tasks(a, (1, 2)) for s in range(seeds)]


def train_wsm(settings: SeagentSettings, console: Console) -> tuple[str, dict[str, Any]]:
    """The judge's directory (fine-tuned once and cached) and its training stats."""
    from raygent.jobs.seagent.wsm_data import VERSION, record_tasks
    from raygent.jobs.seagent.wsm_train import finetune, samples
    from raygent.policies.loading import resolve_model
    from raygent.rewards.seagent.lm_judge import PROMPT_FORMAT

    key = f"{settings.wsm_base}-{'-'.join(settings.wsm_apps)}-s{settings.wsm_seeds}-l{settings.wsm_train_layers}"
    key += f"-w{settings.wsm_swapped}-e{settings.wsm_epochs}-lr{settings.wsm_lr:g}-p{PROMPT_FORMAT}-d{VERSION}"
    out = cache_root("seagent", "judges") / key
    stats_file = out / "training.json"
    with file_lock(out.with_suffix(".lock")):
        if stats_file.is_file():
            return str(out), json.loads(stats_file.read_text())
        with console.status("recording the judge's training trajectories"):
            records = record_tasks(wsm_tasks(settings.wsm_apps, settings.wsm_seeds), settings.record_workers)
        step_data, done_data = samples(records, swap=settings.wsm_swapped)
        console.print(f"wsm: {len(records)} trajectories, {len(step_data)} step and {len(done_data)} done samples")
        stats = finetune(
            resolve_model(settings.wsm_base),
            [*step_data, *done_data],
            out,
            train_layers=settings.wsm_train_layers,
            epochs=settings.wsm_epochs,
            lr=settings.wsm_lr,
            log=console.print,
        )
        stats.update({"trajectories": len(records), "step_samples": len(step_data), "done_samples": len(done_data)})
        stats_file.write_text(json.dumps(stats, indent=2))
    return str(out), stats


def wsm_agreement(settings: SeagentSettings, wsm: dict[str, Any], console: Console) -> dict[str, Any]:
    """The judge (`WorldStateModel` kwargs `wsm`) against the learned app's checker (`wsm_train.agreement`, with
    `AGREEMENT_SWAPPED` swapped instructions per trajectory: does it read the instruction?)."""
    from raygent.jobs.seagent.wsm_data import record_tasks
    from raygent.jobs.seagent.wsm_train import agreement
    from raygent.rewards.seagent.wsm import WorldStateModel

    with console.status(f"recording {settings.app}'s checker-labelled trajectories"):
        records = record_tasks(wsm_tasks((settings.app,), settings.wsm_eval_seeds), settings.record_workers)
    return agreement(WorldStateModel(**wsm), records, swap=AGREEMENT_SWAPPED)


class Seagent:
    name = "seagent"
    summary = "SEAgent: a web agent learns an unseen app from its own curriculum, judged by a World State Model"
    claim = f"self-evolution with the WSM raises held-out success on the unseen app by >= {MIN_GAIN}"
    config_model = SeagentConfig

    def run(self, config: JobConfig, run_dir: Path, resume: bool = False) -> dict[str, Any]:
        console = Console()
        agent = agent_sections(config, SeagentConfig)
        s = agent.seagent
        if s.generalist:
            from raygent.jobs.seagent.generalist import run_generalist

            return run_generalist(agent, config.job, run_dir, resume, console)
        server = None
        url = agent.env.url
        if not url:
            server = AppServer(docs=False).start()
            url = server.app_url(s.app)
        try:
            return self.run_page(agent, config.job, run_dir, resume, url, console)
        finally:
            if server is not None:
                server.stop()

    def run_page(
        self,
        agent: SeagentConfig,
        job: str,
        run_dir: Path,
        resume: bool,
        url: str,
        console: Console,
        hooks: Sequence[TrainerHook] = (),
    ) -> dict[str, Any]:
        """One self-evolution (or checker) run on the page at `url`; `hooks` join the run's own."""
        s = agent.seagent
        agent.env.kwargs["url"] = url
        pool = prior_pool(agent, s.demo_workers, console)
        judge: dict[str, Any] = {}
        if s.variant == "wsm":
            model, judge = prepare_judge(agent, console)
            agent = self_evolving(agent, model, CURRICULUM, {"url": url})
        else:
            agent = agent.model_copy(update={"tasks": TaskSettings(), "reward": None})
        model_path = initial_model(agent, run_dir, tokenizer_corpus(pool, [s.app], [url]))
        hook = JudgedExamples(s.judged_examples)
        trainer = AgentTrainer(agent, run_dir, model_path, console=console, hooks=[hook, *hooks])
        try:
            result = trainer.run(resume=resume)
            examples = trainer.examples(s.examples, failures=1)
            curriculum = trainer.source.state() if s.variant == "wsm" else {}
        finally:
            trainer.shutdown()
        examples = screenshots.capture(examples, run_dir, s.screenshot_size) if examples else []
        details = {"variant": s.variant, "url": url, "wsm": judge, "curriculum": curriculum, "judged": hook.kept}
        (run_dir / "seagent.json").write_text(json.dumps(details, indent=2, default=str))
        (run_dir / "seagent.html").write_text(render(details))
        summary = write_report(
            run_dir,
            job,
            self.claim,
            before=result["eval/before"],
            after=result["eval/after"],
            min_gain=MIN_GAIN,
            examples=examples,
            extra={
                "seed": agent.trainer.seed,
                "variant": s.variant,
                "app": s.app,
                "url": url,
                "wsm_agreement": judge.get("agreement", {}).get("all", {}),
                "guidebook_entries": len(curriculum.get("guidebook", {})),
                "details": "seagent.html",
            },
        )
        console.print(
            f"held-out success on {s.app} ({s.variant}): {summary['before_success']:.3f} → "
            f"{summary['after_success']:.3f} (gain {summary['gain']:+.3f})"
        )
        return summary


def prior_pool(agent: SeagentConfig, workers: int, console: Console) -> list[str]:
    """The prior's SFT task ids (the other apps' experts), recorded into the demonstration cache."""
    sft_kwargs = {**agent.env.task_kwargs, **agent.sft.task_kwargs}
    pool = sft_pool(sft_kwargs.get("apps"), None, sft_kwargs.get("difficulties", (1,)), 1, ())
    record_pool(pool, workers, console)
    return pool


def wsm_kwargs(agent: SeagentConfig) -> dict[str, Any]:
    """The config's `reward.kwargs` when its `reward` section names the WSM, else none."""
    return dict(agent.reward.kwargs) if agent.reward is not None and agent.reward.entry == WSM else {}


def prepare_judge(agent: SeagentConfig, console: Console) -> tuple[str, dict[str, Any]]:
    """The WSM's model and what is known of it: its training stats and its agreement with the learned app's checker
    (`seagent.wsm_eval_seeds`). The `lm` backend's model is `seagent.wsm_model`, else fine-tuned once and cached;
    the `vlm` backend's is `reward.kwargs.model`, the name its endpoint serves (nothing is fine-tuned here)."""
    s = agent.seagent
    kwargs = wsm_kwargs(agent)
    judge: dict[str, Any] = {}
    model = kwargs["model"] if kwargs.get("backend") == "vlm" else s.wsm_model
    if model is None:
        model, judge["training"] = train_wsm(s, console)
    if s.wsm_eval_seeds:
        judge["agreement"] = wsm_agreement(s, {**kwargs, "model": model}, console)
        overall = judge["agreement"]["all"]
        console.print(
            f"wsm on {s.app} (never trained on): success accuracy {overall['success_accuracy']:.3f}, "
            f"first-error accuracy {overall.get('first_error_accuracy', float('nan')):.3f}"
        )
    return model, judge


def self_evolving(agent: SeagentConfig, model: str, source: str, pages: dict[str, Any]) -> SeagentConfig:
    """`agent` with the curriculum `source` (its kwargs plus `pages`: the url or urls) as the task source and the
    WSM at `model` as the reward model (`reward.mode: replace`; the config's `reward` section's actors and
    kwargs kept when it names the WSM)."""
    given_tasks = agent.tasks.kwargs if agent.tasks.entry in (CURRICULUM, CURRICULA) else {}
    tasks = TaskSettings(entry=source, kwargs={**given_tasks, **pages})
    given = agent.reward if agent.reward is not None and agent.reward.entry == WSM else None
    reward = RewardSettings(
        entry=WSM,
        num_actors=given.num_actors if given else 1,
        resources=given.resources if given else {"num_cpus": 0},
        kwargs={**wsm_kwargs(agent), "model": model},
        mode="replace",
    )
    return agent.model_copy(update={"tasks": tasks, "reward": reward})


def tokenizer_corpus(pool: Sequence[str], apps: Sequence[str], urls: Sequence[str]) -> list[str]:
    """Text for a tiny policy's tokenizer: the prior's demonstrations, the instructions of the suite's other
    apps, and each page's first screen."""
    corpus = [part for turns in demonstrations(pool) for turn in turns for part in turn if part]
    corpus += [make_task(f"{tid}/{seed}").goal for tid in list_tasks() if tid.split("/")[0] not in apps
               for seed in range(20)]  # fmt: skip
    for url in urls:
        corpus += [first_screen(url)] * 3
    return corpus


def render(details: dict[str, Any]) -> str:
    """`seagent.html`: the WSM's agreement, the guidebook, the curriculum and judged trajectories."""
    e = html.escape
    parts = [f"<html><body><h1>SEAgent: {e(details['variant'])} on {e(details['url'])}</h1>"]
    agreement = details.get("wsm", {}).get("agreement")
    if agreement:
        parts.append("<h2>World State Model against the checker (an app it was not trained on)</h2><table border=1>")
        parts.append("<tr><th>trajectories</th><th>n</th><th>success acc.</th><th>first-error acc.</th></tr>")
        for kind, row in agreement.items():
            first = row.get("first_error_accuracy")
            parts.append(
                f"<tr><td>{e(kind)}</td><td>{int(row['n'])}</td><td>{row['success_accuracy']:.3f}</td>"
                f"<td>{'' if first is None else f'{first:.3f}'}</td></tr>"
            )
        parts.append("</table>")
    guidebook = details.get("curriculum", {}).get("guidebook", {})
    if guidebook:
        parts.append("<h2>Guidebook</h2><table border=1><tr><th>control</th><th>role</th><th>observed effect</th>"
                     "<th>judged done / tries</th></tr>")  # fmt: skip
        for entry in guidebook.values():
            parts.append(
                f"<tr><td>{e(entry['key'])}</td><td>{e(entry['role'])}</td><td><pre>{e(entry['effect'])}</pre></td>"
                f"<td>{entry['successes']} / {entry['tries']}</td></tr>"
            )
        parts.append("</table>")
    history = details.get("curriculum", {}).get("history", [])
    if history:
        parts.append("<h2>Curriculum (latest tasks, WSM verdict)</h2><ul>")
        parts.extend(
            f"<li>level {h['level']}: {e(h['instruction'])} — {'done' if h['success'] else 'not done'}</li>"
            for h in history[-60:]
        )
        parts.append("</ul>")
    for example in details.get("judged", []):
        parts.append(
            f"<h3>{e(example['instruction'])} (step {example['step']}): "
            f"{'done' if example['success'] else 'not done'}, first error {example['first_error_step']}</h3><ol>"
        )
        for index, action in enumerate(example["actions"]):
            label = example["labels"][index] if index < len(example["labels"]) else ""
            note = example["captions"][index] if index < len(example["captions"]) else ""
            parts.append(
                f"<li><pre>{e(example['screens'][index])}</pre><b>{e(action)}</b> [{e(label)}]<pre>{e(note)}</pre></li>"
            )
        parts.append(f"</ol><p>final screen</p><pre>{e(example['screens'][-1])}</pre>")
    parts.append("</body></html>")
    return "".join(parts)
