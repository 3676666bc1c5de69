"""docos: an agent that reads the documentation of apps whose menus move (DocOS, issue 20), at laptop scale.

`raygent run docos`:

1. **Tasks** (`tasks.py`): the suite's templates that run a menu command, on randomized UI layouts (labels and
   menus dealt per UI seed; the docs site writes each layout's pages), tagged with a documentation variant.
2. **Demonstrations** (`demos.py`): the scripted expert's actions after a `search_docs` with the instruction and an
   `open_doc` of the target page; a share on the default layout without docs. Recorded once (cached).
3. **Policy**: a tiny LM (`tiny-qwen2`, BPE on the demonstrations, the doc pages and the instructions), SFT on
   the demonstrations, then GRPO with the app's checker as reward and the tools in the loop (`DocLoop`).
4. **Evaluation** before GRPO (the SFT model) and after it, greedy, on the same held-out tasks in every variant:
   `none`, `tools`, `oracle` (target pages in the prompt), on unseen randomized layouts and on the default one;
   and the **scripted reader** (`doc_tools.reader_solver`: reads the target page, follows it) as the upper bound.
5. **Numbers** (`metrics.py`): TCR and TUI (page found; steps followed) per app, variant and layout; the claims;
   `docos.json`, `report.html` (the RL core's) and `docos.html` (per-app tables, trajectories with the doc block
   beside each screen).

What is not the paper's: the apps, docs site and layouts are the suite's (five local web apps, not 20 desktop apps
and the open web); the tools are agent-side calls (`search_docs`/`open_doc`) rather than a browser the agent
drives to a search engine (the suite's docs site is also reachable in the browser, and visited doc URLs count for
TUI); the agent reads compact accessibility text, not screenshots; TUI's "followed" half is ours (the paper's
TUI is target-URL inclusion only).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from pydantic import Field
from rich.console import Console
from rich.table import Table

from raygent.environments.web.agent.demos import BLIND_LOOKS, drive, ensure_recorded, load_body
from raygent.environments.web.agent.demos import cache_path as demo_cache_path
from raygent.environments.web.doc_tools import page_text, reader_pages, reader_solver
from raygent.environments.web.docs.pages import site
from raygent.environments.web.env import BrowserEnv
from raygent.environments.web.registry import list_tasks, make_task
from raygent.jobs.docos.demos import docos_demonstrations
from raygent.jobs.docos.metrics import EpisodeScore, claims, reader_score, score, search_failure, summarize
from raygent.jobs.docos.tasks import VARIANTS, docos_tasks
from raygent.platform.config import JobConfig
from raygent.platform.contracts import Task, Trajectory
from raygent.platform.rl.hooks import TrainerHook
from raygent.platform.rl.recipe import AgentRecipe, Setup, Trained
from raygent.platform.rl.settings import AgentRunConfig, Section
from raygent.platform.rl.tasks import StaticSource, heldout_seed

RESULTS_FILE = "docos.json"
HTML_FILE = "docos.html"
READER_DIR = "reader"
LAYOUT_SPLITS = {"random": "heldout", "default": "default"}


class DocOSSettings(Section):
    """The `docos:` section."""

    reader: bool = True
    """Run the scripted reader (the upper bound) on the evaluation tasks."""
    demo_workers: int = Field(default=3, ge=1)
    """Browser threads that record missing demonstrations and the reader's episodes."""
    examples: int = Field(default=3, ge=0)
    """Trajectories shown in `docos.html` (tools variant, randomized layouts, after GRPO)."""
    tokenizer_layouts: int = Field(default=8, ge=0)
    """Layouts whose doc pages go into the tokenizer's text."""


class DocOSConfig(AgentRunConfig):
    """`AgentRunConfig` and the `docos:` section (the loop's kwargs are checked by `DocLoop.Settings`, the task
    kwargs against `docos_tasks`'s annotated parameters, both before Ray starts)."""

    docos: DocOSSettings = DocOSSettings()


def set_name(variant: str, layout: str) -> str:
    return f"{variant}/{layout}"


class DocOSRecorder(TrainerHook):
    """Every evaluation's episode scores by set (`""` is the trainer's held-out set: tools on random layouts)."""

    def __init__(self) -> None:
        self.scores: dict[int, list[dict[str, Any]]] = {}
        self.trajectories: dict[int, dict[str, list[Trajectory]]] = {}

    def on_eval(self, step: int, sets: dict[str, list[Trajectory]]) -> None:
        self.trajectories[step] = {name or set_name("tools", "random"): list(t) for name, t in sets.items()}
        self.scores[step] = [score(t).to_dict() for trajectories in sets.values() for t in trajectories]

    def state(self) -> Any:
        return {str(step): scores for step, scores in self.scores.items()}

    def load_state(self, state: Any) -> None:
        self.scores = {int(step): list(scores) for step, scores in state.items()}


def _reader_take(env: BrowserEnv, task: Task) -> dict[str, Any]:
    """One scripted-reader episode: read the target pages of the task's layout, run the expert on what they say."""
    observation, _ = env.reset(options={"task": task})
    instance = env.task
    assert instance is not None
    pages = reader_pages(instance.ui_seed, list(task.params.get("doc_targets", [])))
    solver = reader_solver(instance.task, instance.params, instance.app, pages)
    turns: list[tuple[str, str]] = []
    info: dict[str, Any] = {}
    try:
        info = drive(env, observation, solver, turns)
    except (StopIteration, LookupError):  # a label the page named is not on screen: the reader is lost
        pass
    turns = [t for t in turns if t[1] not in BLIND_LOOKS]
    return {"success": bool(info.get("success")), "turns": turns, "pages": sorted(pages)}


def run_reader(tasks: list[Task], root: Path, workers: int) -> list[EpisodeScore]:
    """The scripted reader on `tasks` (episodes kept under `root`, so a resumed run does not redo them)."""
    ensure_recorded(tasks, workers, root=root, kind="reader", take=_reader_take)
    scores = []
    for task in tasks:
        body = load_body(demo_cache_path(task, root, "reader")) or {"success": False, "turns": []}
        scores.append(reader_score(task, bool(body["success"]), [tuple(t) for t in body["turns"]]))
    return scores


def tokenizer_corpus(demos: list[list[tuple[str, str]]], layouts: int, instruction_seeds: int = 10) -> list[str]:
    """The demonstrations' text, every template's instructions, and the doc pages of `layouts` layouts."""
    text = [part for turns in demos for turn in turns for part in turn if part]
    for tid in list_tasks():
        text += [make_task(f"{tid}/{seed}").goal for seed in range(instruction_seeds)]
    for layout in range(layouts):
        text += [page_text(page) for page in site(layout).pages.values()]
    return text


def table_rows(summary: dict[str, dict[str, float]]) -> list[tuple[str, dict[str, float]]]:
    return [(key, row) for key, row in summary.items() if row.get("n")]


class DocOS(AgentRecipe):
    name = "docos"
    summary = "DocOS: an agent that searches and reads the docs of apps with randomized menus (SFT, then GRPO)"
    claim = (
        "on randomized layouts oracle >= tools > no docs for the trained agent; the gap shrinks on the default "
        "layout; GRPO raises TCR and TUI"
    )
    config_model = DocOSConfig

    def prepare(self, agent: Any, run_dir: Path, console: Console) -> Setup:
        kwargs = {k: v for k, v in agent.env.task_kwargs.items() if k != "docs"}
        seed = agent.trainer.seed
        # the SFT stage's draws, recorded up front (the trainer's StaticSource draws the same batches)
        sft_source = StaticSource(
            docos_tasks,
            split=agent.env.train_split,
            seed=seed,
            batch_size=agent.sft.batch_tasks,
            stage="sft",
            task_kwargs={**agent.env.task_kwargs, **agent.sft.task_kwargs},
        )
        pool = list({t.id + t.params["docs"]: t for i in range(agent.sft.steps) for t in sft_source.next(i)}.values())
        with console.status(f"recording {len(pool)} demonstrations"):
            recorded = ensure_recorded(pool, agent.docos.demo_workers)
        demos = docos_demonstrations(pool)
        console.print(f"demonstrations: {len(pool)} tasks ({recorded} recorded now), {sum(map(bool, demos))} solved")
        n = agent.trainer.eval_tasks
        extra: dict[str, list[Task]] = {}
        for layout, split in LAYOUT_SPLITS.items():
            for variant in VARIANTS:
                if (variant, layout) != ("tools", "random"):  # that one is the trainer's own held-out set
                    extra[set_name(variant, layout)] = docos_tasks(split, heldout_seed(seed), n, docs=variant, **kwargs)
        reader: list[EpisodeScore] = []
        if agent.docos.reader:
            tasks = [
                t
                for layout, split in LAYOUT_SPLITS.items()
                for t in docos_tasks(split, heldout_seed(seed), n, **kwargs)
            ]
            with console.status(f"scripted reader on {len(tasks)} tasks"):
                reader = run_reader(tasks, run_dir / READER_DIR, agent.docos.demo_workers)
        recorder = DocOSRecorder()
        return Setup(
            tokenizer_text=tokenizer_corpus(demos, agent.docos.tokenizer_layouts),
            hooks=[recorder],
            extra_evals=extra,
            state={"recorder": recorder, "reader": reader},
        )

    def kept_examples(self, agent: Any) -> tuple[int, int]:
        return agent.docos.examples, 1

    def report(
        self, config: JobConfig, agent: Any, run_dir: Path, trained: Trained, console: Console
    ) -> dict[str, Any]:
        recorder: DocOSRecorder = trained.setup.state["recorder"]
        reader: list[EpisodeScore] = trained.setup.state["reader"]
        seed, steps = agent.trainer.seed, agent.trainer.steps
        stages = {"sft": 0, "grpo": steps}
        scores = {
            stage: [EpisodeScore(**s) for s in recorder.scores.get(step, [])] + reader for stage, step in stages.items()
        }
        summaries = {stage: summarize(found) for stage, found in scores.items()}
        verdict = {
            "sft": claims(summaries["sft"]),
            "grpo": claims(summaries["grpo"], before=summaries["sft"]),
        }
        results = {
            "seed": seed,
            "summary": summaries,
            "claims": verdict,
            "episodes": {stage: [s.to_dict() for s in found] for stage, found in scores.items()},
        }
        (run_dir / RESULTS_FILE).write_text(json.dumps(results, indent=2))
        rows = [
            (f"TCR {key}", summaries["sft"].get(key, {}).get("tcr", float("nan")), row["tcr"])
            for key, row in table_rows(summaries["grpo"])
            if key.startswith("all/")
        ]
        rows += [
            (f"TUI found {key}", summaries["sft"].get(key, {}).get("tui_found", float("nan")), row["tui_found"])
            for key, row in table_rows(summaries["grpo"])
            if key.startswith("all/") and "/tools/" in key
        ]
        summary = self.write(config, agent, run_dir, trained, rows=rows, extra={"claims": verdict})
        k = agent.docos.examples
        shown = {
            f"{stage}, {name}": recorder.trajectories.get(step, {}).get(name, [])[:k]
            for stage, step in stages.items()
            for name in (set_name("tools", "random"), set_name("oracle", "random"))
        }
        write_html(run_dir / HTML_FILE, summaries, verdict, shown)
        print_tables(console, summaries, verdict)
        return summary


def print_tables(console: Console, summaries: dict[str, dict[str, dict[str, float]]], verdict: dict[str, Any]) -> None:
    """The DocOS table per app, variant and layout: TCR and TUI after SFT and after GRPO."""
    table = Table("app", "variant", "layout", "n", "TCR SFT", "TCR GRPO", "TUI found", "TUI followed", title="DocOS")
    for key, row in table_rows(summaries["grpo"]):
        app, variant, layout = key.split("/")
        sft = summaries["sft"].get(key, {})
        table.add_row(
            app,
            variant,
            layout,
            str(int(row["n"])),
            f"{sft.get('tcr', float('nan')):.3f}",
            f"{row['tcr']:.3f}",
            f"{sft.get('tui_found', float('nan')):.2f} → {row['tui_found']:.2f}",
            f"{sft.get('tui_followed', float('nan')):.2f} → {row['tui_followed']:.2f}",
        )
    console.print(table)
    for stage in ("sft", "grpo"):
        c = verdict[stage]
        sf = search_failure(summaries[stage])
        console.print(
            f"{stage}: oracle ≥ tools > none (random): {c['oracle_ge_tools_gt_none_random']}; tools−none random "
            f"{c['tools_minus_none_random']:+.3f}, default {c['tools_minus_none_default']:+.3f}; search failure gap "
            f"{sf['gap']:+.3f} (share {sf['share']:.2f})"
            + (
                f"; GRPO raises TCR {c['grpo_raises_tcr']}, TUI {c['grpo_raises_tui']}"
                if "grpo_raises_tcr" in c
                else ""
            )
        )


def _cell(text: str) -> str:
    return f"<td><pre>{html.escape(text[:2500])}</pre></td>"


def write_html(
    path: Path,
    summaries: dict[str, dict[str, dict[str, float]]],
    verdict: dict[str, Any],
    examples: dict[str, list[Trajectory]],
) -> None:
    """`docos.html`: per-app tables, the claims, and trajectories with the doc block beside each screen."""
    heads = (
        "variant",
        "layout",
        "n",
        "TCR SFT",
        "TCR GRPO",
        "TUI found SFT→GRPO",
        "TUI followed SFT→GRPO",
        "lookups failed",
    )
    apps = sorted({key.split("/")[0] for key in summaries["grpo"]})
    parts = ["<!doctype html><meta charset='utf-8'><title>DocOS</title><h1>DocOS</h1>"]
    for app in apps:
        rows = []
        for key, row in table_rows(summaries["grpo"]):
            if not key.startswith(f"{app}/"):
                continue
            sft = summaries["sft"].get(key, {})
            _, variant, layout = key.split("/")
            cells = (
                variant,
                layout,
                str(int(row["n"])),
                f"{sft.get('tcr', float('nan')):.3f}",
                f"{row['tcr']:.3f}",
                f"{sft.get('tui_found', float('nan')):.2f} → {row['tui_found']:.2f}",
                f"{sft.get('tui_followed', float('nan')):.2f} → {row['tui_followed']:.2f}",
                f"{row.get('lookup_failures', 0):.0f}",
            )
            rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
        header = "".join(f"<th>{h}</th>" for h in heads)
        parts.append(
            f"<h2>{html.escape(app)}</h2><table border=1 cellpadding=4><tr>{header}</tr>{''.join(rows)}</table>"
        )
    parts.append(f"<h2>Claims</h2><pre>{html.escape(json.dumps(verdict, indent=2))}</pre>")
    for heading, shown in examples.items():
        parts.append(f"<h2>Trajectories: {html.escape(heading)}</h2>")
        parts.extend(_trajectory_html(t) for t in shown)
    path.write_text("".join(parts))


def _trajectory_html(trajectory: Trajectory) -> str:
    """One trajectory: the documentation read beside each screen, and the action taken."""
    params = trajectory.task.params
    title = f"{trajectory.task.instruction} ({trajectory.task.id}) — success: {trajectory.success}"
    rows = []
    for step in trajectory.steps:
        docs, _, _ = step.observation.text.partition("\nScreen:\n")
        screen = str(step.observation.info.get("screen", ""))
        rows.append(f"<tr>{_cell(docs)}{_cell(screen)}<td><code>{html.escape(step.action)}</code></td></tr>")
    targets = ", ".join(params.get("doc_targets", []))
    return (
        f"<h3>{html.escape(title)}</h3><p>target pages: {html.escape(targets)}</p>"
        "<table border=1 cellpadding=4><tr><th>documentation read</th><th>screen</th><th>action</th></tr>"
        + "".join(rows)
        + "</table>"
    )
