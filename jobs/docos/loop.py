"""`DocLoop`: the web agent's chat loop with DocOS's documentation tools, answered agent-side.

    rollout:
      agent:
        entry: raygent.jobs.docos.loop:DocLoop
        kwargs: {hits: 3, tool_budget: 4, timeout_s: 2.0}     # DocLoop.Settings

The prompt's observation is `render(context, screen)`: a `Docs:` block (what the agent last read) above the app's
compact screen. The task's `params["docs"]` picks the variant:

- `tools`: the completion `search_docs("words")` or `open_doc(n)` is answered by a `DocSession` over the task's UI
  seed (BM25 from `rank_bm25`, the seed's pages of the task's app) and returned as a `ToolResult`: a trained step,
  no app step; the answer becomes the `Docs:` block. Nothing forces a lookup: the agent may act at once. A lookup
  that raises or runs past `timeout_s` answers "no documentation (lookup failed)" for that turn and is counted; the
  episode goes on. Calls beyond `tool_budget` are answered "tool budget used" (they still take a turn).
- `oracle`: the `Docs:` block starts as the text of the task's target pages (`params["doc_targets"]`); the tools
  still answer.
- `none`: the block says the documentation is unavailable and every tool call is answered so.

Every recorded observation carries, apart from the text, `info["screen"]` (the compact screen the action was taken
on) and the running `doc_opened` (pages opened, `;`-joined), `doc_visited` (doc URLs the browser visited),
`doc_searches` and `doc_failures`, from which `metrics.py` reads TCR and TUI.

`backend` (optional, `"module:attr"`): a factory `f(ui_seed, **backend_kwargs) -> backend` with
`search(query, app, k)` and `page(path)`, e.g. a retrieval service on a cluster; default: the in-process `DocIndex`
(BM25). `dense_index` and `hybrid_index` take `embedder` ("wordllama", or a transformers encoder's directory).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from raygent.environments.web.doc_tools import (
    DocSession,
    page_text,
    parse_doc_call,
    reader_pages,
)
from raygent.environments.web.docs.urls import visited_docs
from raygent.platform.config import entry_validator, load_entry
from raygent.platform.contracts import Observation, Task
from raygent.platform.rl.agent_loop import ChatLoop, EnvAction, LoopContext, ToolResult
from raygent.policies.prompts import Turn

EMPTY = "none opened"
UNAVAILABLE = "unavailable"
REFUSED = "no documentation in this episode"
BUDGET_USED = "tool budget used"


class DocLoopSettings(BaseModel):
    """`rollout.agent.kwargs` of `DocLoop` (its `Settings`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hits: int = Field(default=3, ge=1, le=10)
    """Results a search returns."""
    tool_budget: int = Field(default=4, ge=0)
    """Tool calls an episode may make (more are answered `BUDGET_USED`)."""
    timeout_s: float = Field(default=2.0, gt=0)
    """Deadline of one lookup; a slower one answers no context for that turn and is counted."""
    backend: Annotated[str, entry_validator("callable", "a factory f(ui_seed) of a lookup backend", 1)] | None = None
    """`"module:attr"`: a factory `f(ui_seed)` of the lookup backend (e.g. `raygent.environments.web.doc_tools:
    hybrid_index`); None: the in-process BM25 index."""
    backend_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments of the backend's factory, e.g. `{embedder: /models/bge-small-en}` for `dense_index` or
    `hybrid_index` (default: WordLlama)."""


def render(context: str, screen: str) -> str:
    """The observation text the policy reads: the docs block, then the app's screen."""
    return f"Docs: {context}\nScreen:\n{screen}"


def oracle_context(ui_seed: int, targets: Sequence[str]) -> str:
    """The `Docs:` block of the oracle variant: the target pages' text for the layout."""
    pages = reader_pages(ui_seed, targets)
    return "\n".join(pages.values()) if pages else EMPTY


def initial_context(task: Task) -> str:
    docs = str(task.params.get("docs", "tools"))
    if docs == "none":
        return UNAVAILABLE
    if docs == "oracle":
        return oracle_context(int(task.params.get("ui_seed", 0)), list(task.params.get("doc_targets", [])))
    return EMPTY


class DocLoop(ChatLoop):
    """The chat loop with agent-side documentation tools (module docstring)."""

    current: Observation

    Settings = DocLoopSettings

    def __init__(self, task: Task, observation: Any, context: LoopContext, **kwargs: Any) -> None:
        settings = DocLoopSettings.model_validate(kwargs)
        self.task, self.context = task, context
        self.settings = settings
        self.variant = str(task.params.get("docs", "tools"))
        seed = int(task.params.get("ui_seed", 0))
        backend = load_entry(settings.backend)(seed, **settings.backend_kwargs) if settings.backend else None
        self.session = DocSession(
            seed=seed,
            app=task.params.get("app"),
            hits=settings.hits,
            timeout_s=settings.timeout_s,
            backend=backend,
        )
        self.docs = initial_context(task)
        self.calls = 0
        self.visited: list[str] = []
        self.history: list[Turn] = []
        self._last_action = ""
        self.current = self._observe(observation)

    def _observe(self, raw: Any) -> Observation:
        raw = raw if isinstance(raw, dict) else {"text": str(raw)}
        self.screen = str(raw.get("text", ""))
        url = raw.get("url") if isinstance(raw.get("url"), str) and raw.get("url") else None
        error = raw.get("last_action_error") or None
        if url:
            self.visited = list(dict.fromkeys([*self.visited, *visited_docs([url])]))
        return self._observation(url, error if isinstance(error, str) else None)

    def _observation(self, url: str | None = None, error: str | None = None) -> Observation:
        info = {
            "screen": self.screen,
            "docs": self.variant,
            "doc_opened": ";".join(self.session.opened),
            "doc_visited": ";".join(self.visited),
            "doc_searches": self.session.searches,
            "doc_failures": self.session.failures,
            "doc_calls": self.calls,
        }
        return Observation(text=render(self.docs, self.screen), url=url, last_action_error=error, info=info)

    def act(self, text: str) -> EnvAction | ToolResult:
        call = parse_doc_call(text)
        if call is None:
            return super().act(text)
        self.calls += 1
        if self.variant == "none":
            result = REFUSED
        elif self.calls > self.settings.tool_budget:
            result = BUDGET_USED
        else:
            result = self.session.call(call)
            self.docs = result
        self.history.append(Turn(observation=self.current.text, action=text))
        self.current = self._observation(self.current.url)
        return ToolResult(call.name, result)

    def observe(self, observation: Any, reward: float, info: dict[str, Any]) -> None:
        for url in info.get("visited_urls", []) or []:
            self.visited = list(dict.fromkeys([*self.visited, *visited_docs([url])]))
        self.advance(self._observe(observation))


def page_context(ui_seed: int, path: str) -> str:
    """The `Docs:` block after opening `path` (what a demonstration shows)."""
    from raygent.environments.web.doc_tools import doc_index

    page = doc_index(ui_seed).page(path)
    return page_text(page) if page is not None else EMPTY
