"""Scripted demonstrations that use the documentation tools (`env.demonstrations` of `jobs/configs/docos.yaml`).

The app actions are the scripted expert's, recorded in the browser at the task's layout and cached on disk
(`web_agent.demos`). A `tools` task's demonstration first searches with the task's instruction as the query,
opens the best-ranked hit that is one of the task's target pages (the first hit when none is: the search
failed, and the demonstration shows what the agent then reads), and then acts; every turn's observation is
`loop.render(docs block, compact screen)`, exactly what `DocLoop` builds at that point, so SFT trains on the
prompts the loop gives. A `none` task's turns show the docs as unavailable; an `oracle` task's show its target
pages.

A task with `params["grounding"] == "label"` (`env.task_kwargs.grounding: label`) has its expert's clicks written
by name, `click_label("Play Rate…")`, where the screen shows that name whole and on one element only
(`web_agent.observation.grounded`):
the words the documentation prints, so following a page is copying it, not mapping a label to a screen id.
"""

from __future__ import annotations

from collections.abc import Sequence

from raygent.environments.web.agent.demos import demonstrations
from raygent.environments.web.agent.observation import grounded
from raygent.environments.web.doc_tools import OPEN_TOOL, SEARCH_TOOL, DocCall, DocSession, open_call, search_call
from raygent.jobs.docos.loop import EMPTY, UNAVAILABLE, oracle_context, render
from raygent.platform.contracts import Task

Turns = list[tuple[str, str]]
DEFAULT_HITS = 3


def query_of(task: Task) -> str:
    """The query a demonstration searches with: the instruction as given."""
    return task.instruction


def doc_turns(task: Task, expert: Turns, hits: int = DEFAULT_HITS) -> Turns:
    """The DocOS demonstration of `task` from the expert's (compact screen, action) turns (module docstring)."""
    if not expert:
        return []
    expert = grounded(task, expert)
    docs = str(task.params.get("docs", "tools"))
    ui_seed = int(task.params.get("ui_seed", 0))
    if docs == "none":
        return [(render(UNAVAILABLE, screen), action) for screen, action in expert]
    if docs == "oracle":
        context = oracle_context(ui_seed, list(task.params.get("doc_targets", [])))
        return [(render(context, screen), action) for screen, action in expert]
    session = DocSession(seed=ui_seed, app=task.params.get("app"), hits=hits)
    first = expert[0][0]
    query = query_of(task)
    turns = [(render(EMPTY, first), search_call(query))]
    found = session.call(DocCall(SEARCH_TOOL, query))
    targets = set(task.params.get("doc_targets", []))
    rank = next((n for n, hit in enumerate(session.last_hits, 1) if hit.path in targets), 1)
    turns.append((render(found, first), open_call(rank)))
    page = session.call(DocCall(OPEN_TOOL, str(rank)))
    return turns + [(render(page, screen), action) for screen, action in expert]


def docos_demonstrations(tasks: Sequence[Task]) -> list[Turns]:
    """`env.demonstrations`: each task's DocOS demonstration (none for a task whose expert failed)."""
    return [doc_turns(task, expert) for task, expert in zip(tasks, demonstrations(tasks), strict=True)]


__all__ = ["EMPTY", "doc_turns", "docos_demonstrations", "query_of"]
