"""DocOS's agent-side documentation tools, the metrics over an episode (TCR, TUI) and the scripted reader.

The documentation site (`docs/`) writes its pages per UI seed; these helpers are what an agent loop calls instead
of driving a browser to the site (the tools are agent-side: a lookup does not step the app):

- `DocIndex(seed, ranker)`: the seed's pages (every app's overview, command and how-to pages), ranked by
  - `bm25` (the default): Okapi BM25 from the `rank_bm25` library (`BM25Okapi`) over the site's own terms
    (`docs.search.terms`: lower-case words, stop words out, a crude stemmer; the title counted three times);
  - `dense`: the cosine between the query's and each page's sentence embedding (`policies.embeddings`, WordLlama
    by default; a page is embedded from what BM25 reads of it: its title and its text);
  - `hybrid`: both lists fused by reciprocal rank (RRF, k = 60) over the pages either ranker scores above 0.
  `search(query, app, k)` gives `Hit`s, best first. `dense_index` and `hybrid_index` are `DocLoop` backends
  (`rollout.agent.kwargs.backend`).
- `page_text(page)`: what `open_doc` returns: the page's title, its numbered steps and its keyboard shortcut as
  plain text (the page's `<main>` read by an HTML parser; related links, notes and menus left out so that the
  page fits a small model's prompt).
- `parse_doc_call(text)`: `search_docs("words")`, `open_doc(2)` (the second hit of the last search) or
  `open_doc("/docs/<app>/commands/<id>")`; anything else is None (an app action).
- `DocSession`: one episode's tools: remembers the last hits, the pages opened, and counts lookups that failed
  (an exception, or a lookup slower than `timeout_s`): a failure answers "no context" for that turn and the
  episode goes on.
- Metrics: `target_pages` (the command pages of the commands a task needs), `tui_found` (did the episode open one
  of them: DocOS's Target URL Inclusion over the pages opened and the URLs visited) and `tui_followed` (the share
  of the task's commands the episode ran as the docs say: the documented menu clicked, then the documented label,
  or the documented shortcut pressed), `commands_run` (which commands a turn list ran, by the labels of a layout).
- The scripted reader (`read_spec`, `reader_solver`): a program that reads the given pages, takes each command's
  menu and label from the page text, and runs the task's scripted expert with that layout in place of the
  privileged one (commands no page describes keep the default layout's menu and label): the upper bound of an
  agent that finds the right page and follows it exactly.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from html.parser import HTMLParser
from typing import Any

import numpy as np
from rank_bm25 import BM25Okapi

from raygent.environments.web.docs.pages import Page, commands_of, site
from raygent.environments.web.docs.search import TITLE_WEIGHT, terms
from raygent.environments.web.docs.urls import INDEX, PREFIX, command_path, visited_docs
from raygent.environments.web.grammar import WEB_GRAMMAR, ClickLabel, DoubleClickElement, RightClickElement
from raygent.environments.web.observe import find_label, parse
from raygent.environments.web.task import Solver
from raygent.environments.web.ui import UISpec, randomize
from raygent.policies.actions import ClickAction
from raygent.policies.embeddings import WORDLLAMA, make_embedder

SEARCH_TOOL, OPEN_TOOL = "search_docs", "open_doc"
DEFAULT_HITS = 3
MAX_QUERY_CHARS = 200
NO_CONTEXT = "no documentation (lookup failed)"
"""What a failed or timed-out lookup answers: the turn goes on without context."""

_CALL = re.compile(r"^\s*(search_docs|open_doc)\s*\(\s*(.*?)\s*\)\s*$", re.DOTALL)


# -- the index and the pages ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    path: str
    title: str
    summary: str
    score: float


RANKERS = ("bm25", "dense", "hybrid")
RRF_K = 60
"""Reciprocal-rank fusion's constant (Cormack et al. 2009): a page scores sum(1 / (RRF_K + rank))."""


class DocIndex:
    """Every searchable page of UI seed `seed` (the index page is not), ranked by `ranker` (module docstring)."""

    def __init__(self, seed: int, ranker: str = "bm25", embedder: str = WORDLLAMA) -> None:
        if ranker not in RANKERS:
            raise ValueError(f"ranker must be one of {RANKERS}, got {ranker!r}")
        self.seed, self.ranker = seed, ranker
        self.pages: dict[str, Page] = {path: page for path, page in site(seed).pages.items() if path != INDEX}
        self.paths = list(self.pages)
        corpus = [terms(p.title) * TITLE_WEIGHT + terms(p.text) for p in self.pages.values()]
        self.bm25 = BM25Okapi(corpus)
        self.embedder = make_embedder(embedder) if ranker != "bm25" else None
        self.vectors = (
            self.embedder.embed([f"{p.title}. {p.text}" for p in self.pages.values()]) if self.embedder else None
        )

    def scores(self, query: str) -> np.ndarray:
        """Every page's score for `query` under the index's ranker (0 or less: not a hit)."""
        query = query[:MAX_QUERY_CHARS]
        dense = None
        if self.embedder is not None and self.vectors is not None:
            dense = (self.vectors @ self.embedder.embed([query])[0]).astype(float)
        if self.ranker == "dense" and dense is not None:
            return dense
        words = list(dict.fromkeys(terms(query)))
        lexical = np.asarray(self.bm25.get_scores(words), dtype=float) if words else np.zeros(len(self.paths))
        if dense is None:
            return lexical
        fused = np.zeros(len(self.paths))
        for scored in (lexical, dense):
            order = sorted(range(len(self.paths)), key=lambda i: (-scored[i], i))
            for rank, i in enumerate(order, 1):
                fused[i] += 1.0 / (RRF_K + rank) if scored[i] > 0 else 0.0
        return fused

    def search(self, query: str, app: str | None = None, k: int = DEFAULT_HITS) -> list[Hit]:
        """The best `k` pages with a positive score (of `app` only, when given); ties keep the site's order."""
        scores = self.scores(query)
        ranked = sorted(range(len(self.paths)), key=lambda i: (-scores[i], i))
        hits = []
        for i in ranked:
            page = self.pages[self.paths[i]]
            if scores[i] <= 0 or (app is not None and page.app != app):
                continue
            hits.append(Hit(page.path, page.title, page.summary, float(scores[i])))
            if len(hits) == k:
                break
        return hits

    def page(self, path: str) -> Page | None:
        return self.pages.get(path) or self.pages.get(path.rstrip("/") + "/")


def doc_index(seed: int, ranker: str = "bm25", embedder: str = WORDLLAMA) -> DocIndex:
    """The index of UI seed `seed` (cached per process: building one reads every guide)."""
    return _cached_index(seed, ranker, embedder)


@lru_cache(maxsize=64)
def _cached_index(seed: int, ranker: str, embedder: str) -> DocIndex:
    return DocIndex(seed, ranker, embedder)


def dense_index(seed: int, embedder: str = WORDLLAMA) -> DocIndex:
    """`DocLoop`'s backend ranking by sentence embeddings (`embedder`: WordLlama, or a model directory)."""
    return doc_index(seed, "dense", embedder)


def hybrid_index(seed: int, embedder: str = WORDLLAMA) -> DocIndex:
    """`DocLoop`'s backend fusing BM25 and sentence embeddings by reciprocal rank."""
    return doc_index(seed, "hybrid", embedder)


class _MainReader(HTMLParser):
    """Collects the `<h1>`, and per `<h2>` section its list items (or paragraphs), as plain text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.sections: dict[str, list[str]] = {}
        self._section = ""
        self._tag = ""
        self._buffer: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h1", "h2", "li", "p"):
            self._tag, self._buffer = tag, []

    def handle_endtag(self, tag: str) -> None:
        if tag != self._tag:
            return
        text = " ".join("".join(self._buffer).split())
        if tag == "h1":
            self.title = text
        elif tag == "h2":
            self._section = text
            self.sections.setdefault(text, [])
        elif self._section and text:
            self.sections[self._section].append(text)
        self._tag = ""

    def handle_data(self, data: str) -> None:
        if self._tag:
            self._buffer.append(data)


def page_text(page: Page) -> str:
    """The page as `open_doc` returns it: title, numbered steps, keyboard shortcut (module docstring)."""
    reader = _MainReader()
    reader.feed(page.main)
    lines = [f"{reader.title}"]
    steps = reader.sections.get("Steps", [])
    lines += [f"{n}. {step}" for n, step in enumerate(steps, 1)]
    shortcut = [s for s in reader.sections.get("Keyboard shortcut", []) if s.startswith("Press ")]
    if shortcut:
        lines.append(shortcut[0])
    return "\n".join(lines)


def format_hits(hits: Sequence[Hit]) -> str:
    """Search results as the agent reads them: `[n] title: summary`, one a line."""
    if not hits:
        return "no page matches"
    return "\n".join(f"[{n}] {h.title}: {h.summary}" for n, h in enumerate(hits, 1))


# -- the tool calls -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DocCall:
    name: str
    """`search_docs` or `open_doc`."""
    argument: str
    """The query, or the page: a hit number (`"2"`) or a path."""


def parse_doc_call(text: str) -> DocCall | None:
    """`search_docs("...")` / `open_doc(N)` / `open_doc("/docs/...")`, else None.

    >>> parse_doc_call('search_docs("mute the sound")'), parse_doc_call("open_doc(2)")
    (DocCall(name='search_docs', argument='mute the sound'), DocCall(name='open_doc', argument='2'))
    >>> parse_doc_call("click(3)") is None
    True
    """
    match = _CALL.match(text)
    if match is None:
        return None
    name, raw = match[1], match[2]
    if raw.startswith('"') or raw.startswith("'"):
        try:
            value = json.loads(raw) if raw.startswith('"') else raw.strip("'")
        except json.JSONDecodeError:
            value = raw.strip("\"'")
        argument = str(value)
    else:
        argument = raw
    return DocCall(name, argument.strip())


def search_call(query: str) -> str:
    return f"{SEARCH_TOOL}({json.dumps(query, ensure_ascii=False)})"


def open_call(rank: int) -> str:
    return f"{OPEN_TOOL}({rank})"


class LookupFailed(RuntimeError):
    """A lookup that raised or ran past its deadline (answered with `NO_CONTEXT`)."""


_POOL = cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="doc-lookup")


@dataclass
class DocSession:
    """One episode's documentation tools over UI seed `seed` (of `app`'s pages only when `app` is given).

    `backend` is anything with `search(query, app, k)` and `page(path)` (`DocIndex` by default); each lookup runs
    with a deadline of `timeout_s`; a failure answers `NO_CONTEXT` and is counted in `failures`."""

    seed: int
    app: str | None = None
    hits: int = DEFAULT_HITS
    timeout_s: float = 2.0
    backend: Any = None
    last_hits: list[Hit] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    searches: int = 0
    failures: int = 0

    def __post_init__(self) -> None:
        if self.backend is None:
            self.backend = doc_index(self.seed)

    def _bounded(self, fn: Any, *args: Any) -> Any:
        future = _POOL.submit(fn, *args)
        try:
            return future.result(timeout=self.timeout_s)
        except cf.TimeoutError as error:
            future.cancel()
            raise LookupFailed(f"lookup took over {self.timeout_s} s") from error
        except Exception as error:
            raise LookupFailed(f"{type(error).__name__}: {error}") from error

    def call(self, call: DocCall) -> str:
        """The text the agent reads back; `NO_CONTEXT` when the lookup failed."""
        try:
            if call.name == SEARCH_TOOL:
                self.searches += 1
                self.last_hits = list(self._bounded(self.backend.search, call.argument, self.app, self.hits))
                return format_hits(self.last_hits)
            return self._open(call.argument)
        except LookupFailed:
            self.failures += 1
            return NO_CONTEXT

    def _open(self, reference: str) -> str:
        if reference.isdigit():
            rank = int(reference)
            if not 1 <= rank <= len(self.last_hits):
                return f"no result [{rank}]: search first"
            path = self.last_hits[rank - 1].path
        else:
            path = reference
        page = self._bounded(self.backend.page, path)
        if page is None:
            return f"no page {path}"
        self.opened.append(page.path)
        return page_text(page)


# -- targets and metrics ----------------------------------------------------------------------------------------


def target_pages(app: str, command_ids: Iterable[str]) -> list[str]:
    """The documentation pages a task needs: the command page of each command it runs."""
    return [command_path(app, cid) for cid in command_ids]


def same_name(shown: str, label: str) -> bool:
    """Whether a name on screen is `label` (a compact screen cuts long names and ends them with "…")."""
    return shown == label or (shown.endswith("…") and len(shown) > 1 and label.startswith(shown[:-1]))


def _clicked(observation: str, action: str) -> tuple[str, str] | None:
    """`(role, name)` of the element an element action (click, double or right click, `click_label`) acts on."""
    parsed = WEB_GRAMMAR.parse(action)
    if isinstance(parsed, ClickLabel):
        try:
            ident = find_label(observation, parsed.label)
        except LookupError:
            return None
    elif isinstance(parsed, ClickAction | DoubleClickElement | RightClickElement):
        ident = parsed.element
    else:
        return None
    for element in parse(observation):
        if element.id == ident:
            return element.role, element.name
    return None


def _pressed(action: str) -> str | None:
    match = re.match(r'^\s*hotkey\("(.+)"\)\s*$', action)
    return match[1].lower() if match else None


def commands_run(turns: Sequence[tuple[str, str]], spec: UISpec) -> list[str]:
    """The commands a list of (observation text, action) turns ran under layout `spec`, in order: a click on a
    menu item whose name is a command's label, or its shortcut pressed."""
    by_label = {placed.label: cid for cid, placed in spec.commands.items()}
    by_key = {placed.shortcut.lower(): cid for cid, placed in spec.commands.items() if placed.shortcut}
    found: list[str] = []
    for observation, action in turns:
        clicked = _clicked(observation, action)
        if clicked and clicked[0].startswith("menuitem"):
            found += [cid for label, cid in by_label.items() if same_name(clicked[1], label)][:1]
        key = _pressed(action)
        if key and key in by_key:
            found.append(by_key[key])
    return found


def followed(turns: Sequence[tuple[str, str]], spec: UISpec, command_id: str) -> bool:
    """Whether the turns ran `command_id` as its page says: its documented menu opened and then its documented
    label chosen, or its documented shortcut pressed."""
    placed = spec.commands[command_id]
    menu_open = False
    for observation, action in turns:
        key = _pressed(action)
        if placed.shortcut and key == placed.shortcut.lower():
            return True
        clicked = _clicked(observation, action)
        if clicked is None:
            continue
        role, name = clicked
        if same_name(name, placed.menu) and not role.startswith("menuitem"):
            menu_open = True
        elif menu_open and role.startswith("menuitem") and same_name(name, placed.label):
            return True
    return False


def tui_found(opened: Iterable[str], visited_urls: Iterable[str], targets: Iterable[str]) -> bool:
    """Target URL inclusion: a target page among the pages opened with the tools or the doc URLs visited."""
    seen = set(opened) | set(visited_docs(visited_urls))
    return not seen.isdisjoint(targets)


def tui_followed(turns: Sequence[tuple[str, str]], spec: UISpec, command_ids: Sequence[str]) -> float:
    """The share of the task's commands the turns ran as documented (1.0 for a task that needs none)."""
    if not command_ids:
        return 1.0
    return sum(followed(turns, spec, cid) for cid in command_ids) / len(command_ids)


# -- the scripted reader ----------------------------------------------------------------------------------------

_MENU_STEP = re.compile(r"open the “(.+?)” menu")
_LABEL_STEP = re.compile(r"^\d+\. Choose “(.+?)”\.?$")


def read_command(text: str) -> tuple[str, str] | None:
    """(menu, label) as a command page's text (`page_text`) states them, or None when it does not."""
    menu = label = None
    for line in text.splitlines():
        if menu is None and (m := _MENU_STEP.search(line)):
            menu = m[1]
        elif menu is not None and (m := _LABEL_STEP.match(line.strip())):
            label = m[1]
            break
    return (menu, label) if menu and label else None


def read_spec(app: str, pages: dict[str, str]) -> UISpec:
    """The layout a reader believes in after reading `pages` (path -> `page_text`): each command page read overrides
    that command's menu and label in the default layout (UI seed 0)."""
    default = randomize(app, commands_of(app), 0)
    commands = dict(default.commands)
    for path, text in pages.items():
        prefix = f"{PREFIX}{app}/commands/"
        if not path.startswith(prefix):
            continue
        cid = path[len(prefix) :]
        read = read_command(text)
        if cid in commands and read is not None:
            commands[cid] = replace(commands[cid], menu=read[0], label=read[1])
    menus = tuple(dict.fromkeys([*default.menus, *(c.menu for c in commands.values())]))
    return UISpec(app=app, seed=-1, menus=menus, commands=commands)


def reader_pages(seed: int, paths: Iterable[str]) -> dict[str, str]:
    """The text of each page in `paths` under UI seed `seed` (what the reader reads; missing pages skipped)."""
    index = doc_index(seed)
    return {path: page_text(page) for path in paths if (page := index.page(path)) is not None}


def reader_solver(task: Any, params: dict[str, Any], app: str, pages: dict[str, str]) -> Solver:
    """The task's scripted expert driven by the layout read from `pages` (`read_spec`)."""
    return task.solve(params, read_spec(app, pages))
