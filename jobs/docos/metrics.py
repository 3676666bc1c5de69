"""DocOS's numbers from episodes: TCR, TUI (found, followed), lookups, and the tables by app, variant and layout.

Per episode (`score`): `success` (the app's checker: task completion), `found` (Target URL Inclusion: a target page
among the pages the agent opened with `open_doc` or the doc URLs its browser visited), `followed` (the share of
the task's commands it ran as the docs say: documented menu then documented label, or the documented shortcut),
`searches`, `failures` (lookups that failed or timed out and answered no context) and `calls` (tool calls).

Summaries (`summarize`): per group, `tcr`, `tui_found`, `tui_followed`, counts; `search_failure` for the tools
variant: the oracle-minus-tools TCR gap, and its share of the tools agent's failures
(`(TCR_oracle − TCR_tools) / (1 − TCR_tools)`: the failures a correct page would have fixed). The tools episodes'
failures are also split by cause: target page never opened (search) or opened and still failed (grounding).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from statistics import mean
from typing import Any

from raygent.environments.web.doc_tools import tui_followed, tui_found
from raygent.environments.web.server import ui_spec
from raygent.platform.contracts import Trajectory


@dataclass(frozen=True)
class EpisodeScore:
    task_id: str
    app: str
    template: str
    variant: str
    layout: str
    success: bool
    found: bool
    followed: float
    searches: int = 0
    failures: int = 0
    calls: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def layout_of(ui_seed: int) -> str:
    return "default" if ui_seed == 0 else "random"


def _split(value: Any) -> list[str]:
    return [part for part in str(value or "").split(";") if part]


def score(trajectory: Trajectory, variant: str | None = None) -> EpisodeScore:
    """One episode's DocOS numbers (module docstring); `variant` overrides the task's `params["docs"]`."""
    params = trajectory.task.params
    app, ui_seed = str(params["app"]), int(params.get("ui_seed", 0))
    variant = variant or str(params.get("docs", "tools"))
    steps = trajectory.steps
    info = steps[-1].observation.info if steps else {}
    opened = _split(info.get("doc_opened"))
    visited = _split(info.get("doc_visited"))
    turns = [(str(s.observation.info.get("screen", s.observation.text)), s.action) for s in steps if not s.tool_call]
    commands = list(params.get("doc_commands", []))
    return EpisodeScore(
        task_id=trajectory.task.id,
        app=app,
        template=str(params["template"]),
        variant=variant,
        layout=layout_of(ui_seed),
        success=bool(trajectory.success),
        found=tui_found(opened, visited, params.get("doc_targets", [])),
        followed=tui_followed(turns, ui_spec(app, ui_seed), commands),
        searches=int(info.get("doc_searches", 0) or 0),
        failures=int(info.get("doc_failures", 0) or 0),
        calls=int(info.get("doc_calls", 0) or 0),
    )


def reader_score(task: Any, success: bool, turns: Sequence[tuple[str, str]]) -> EpisodeScore:
    """The scripted reader's episode: it reads the target pages (found by construction)."""
    params = task.params
    app, ui_seed = str(params["app"]), int(params.get("ui_seed", 0))
    return EpisodeScore(
        task_id=task.id,
        app=app,
        template=str(params["template"]),
        variant="reader",
        layout=layout_of(ui_seed),
        success=success,
        found=True,
        followed=tui_followed(turns, ui_spec(app, ui_seed), list(params.get("doc_commands", []))),
    )


def aggregate(scores: Sequence[EpisodeScore]) -> dict[str, float]:
    """TCR, TUI (found, followed), lookups and failure causes of a group of episodes."""
    if not scores:
        return {"n": 0}
    failed = [s for s in scores if not s.success]
    return {
        "n": len(scores),
        "tcr": mean(s.success for s in scores),
        "tui_found": mean(s.found for s in scores),
        "tui_followed": mean(s.followed for s in scores),
        "searches": mean(s.searches for s in scores),
        "lookup_failures": float(sum(s.failures for s in scores)),
        "tool_calls": mean(s.calls for s in scores),
        "failed_not_found": mean(not s.found for s in failed) if failed else 0.0,
        "failed_found": mean(s.found for s in failed) if failed else 0.0,
    }


def group_key(score: EpisodeScore, by_app: bool) -> str:
    return f"{score.app}/{score.variant}/{score.layout}" if by_app else f"all/{score.variant}/{score.layout}"


def summarize(scores: Iterable[EpisodeScore]) -> dict[str, dict[str, float]]:
    """`{"<app|all>/<variant>/<layout>": aggregate}` over every app and over all of them."""
    scores = list(scores)
    groups: dict[str, list[EpisodeScore]] = {}
    for s in scores:
        for by_app in (True, False):
            groups.setdefault(group_key(s, by_app), []).append(s)
    return {key: aggregate(group) for key, group in sorted(groups.items())}


def search_failure(summary: dict[str, dict[str, float]], app: str = "all", layout: str = "random") -> dict[str, float]:
    """The oracle-minus-tools TCR gap and its share of the tools agent's failures (nan without both groups)."""
    oracle = summary.get(f"{app}/oracle/{layout}", {}).get("tcr")
    tools = summary.get(f"{app}/tools/{layout}", {}).get("tcr")
    if oracle is None or tools is None:
        return {"gap": float("nan"), "share": float("nan")}
    gap = oracle - tools
    return {"gap": gap, "share": gap / (1 - tools) if tools < 1 else 0.0}


EPS = 1e-9
"""Differences of rates closer than this are equal (3/12 - 1/12 and 4/12 - 2/12 differ in the last bit)."""


def claims(summary: dict[str, dict[str, float]], before: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    """The brief's claims on one stage's summary (and `before`, the SFT stage's, for "GRPO raises TCR and TUI")."""

    def tcr(variant: str, layout: str) -> float:
        return float(summary.get(f"all/{variant}/{layout}", {}).get("tcr", float("nan")))

    gap_random = tcr("tools", "random") - tcr("none", "random")
    gap_default = tcr("tools", "default") - tcr("none", "default")
    out: dict[str, Any] = {
        "oracle_ge_tools_gt_none_random": tcr("oracle", "random") >= tcr("tools", "random") > tcr("none", "random"),
        "tools_minus_none_random": gap_random,
        "tools_minus_none_default": gap_default,
        # only meaningful when the docs help on randomized layouts at all
        "gap_shrinks_on_default": gap_random > EPS and gap_default < gap_random - EPS,
        "search_failure": search_failure(summary),
    }
    if before is not None:
        b, a = before.get("all/tools/random", {}), summary.get("all/tools/random", {})
        if b and a:
            out["grpo_raises_tcr"] = a["tcr"] > b["tcr"]
            out["grpo_raises_tui"] = a["tui_found"] > b["tui_found"] and a["tui_followed"] > b["tui_followed"]
    return out
