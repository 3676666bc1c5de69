"""FactGuard's action grammar and its two tools: a BM25 retriever over the fact-check corpus and a clip analyzer.

Actions (one per turn)::

    analyze_clip(S, E)          the frames of seconds S..E (inclusive, at most MAX_WINDOW of them), with their
                                forensic flag (intact / spliced) that the first observation does not show
    retrieve(QUERY)             the best-matching corpus document for QUERY (BM25, `rank_bm25.BM25Okapi`)
    verdict(real|fake, C)       the final answer with a confidence C in [0, 1]; ends the episode

`EpisodeTools` answers one episode's tool calls with per-episode call budgets. Its backend is either `LocalTools`
(in process: the environment's own path and unit tests) or a pair of Ray actors (`agent.py`); both return the same
texts, so demonstrations made in process match what the agent loop shows the policy.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from rank_bm25 import BM25Okapi

from raygent.environments.factguard.world import LABELS, build_world

MAX_WINDOW = 3
"""The most frames one `analyze_clip` call returns."""
MAX_QUERY_CHARS = 64
TOOLS: tuple[str, ...] = ("analyze_clip", "retrieve")
DEFAULT_BUDGETS: dict[str, int] = {"analyze_clip": 2, "retrieve": 2}

_CLIP = re.compile(r"^\s*analyze_clip\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)\s*$")
_RETRIEVE = re.compile(r"^\s*retrieve\(([^()]*)\)\s*$")
_VERDICT = re.compile(r"^\s*verdict\(\s*([a-z]+)\s*,\s*([0-9]*\.?[0-9]+)\s*\)\s*$")
_WORD = re.compile(r"[a-z0-9]+")

PARSE_ERROR = "error: reply with analyze_clip(S, E), retrieve(QUERY) or verdict(real|fake, C)"


class ActionError(ValueError):
    """An action the grammar refuses; the message is the observation the agent sees."""


@dataclass(frozen=True)
class ToolCall:
    name: str
    query: str = ""
    start: int = 0
    end: int = 0


@dataclass(frozen=True)
class Verdict:
    label: str
    confidence: float


def parse_action(text: str) -> ToolCall | Verdict:
    """The action in `text`, or `ActionError` with the text to show the agent.

    >>> parse_action("analyze_clip(3, 4)"), parse_action("verdict(fake, 0.9)").label
    (ToolCall(name='analyze_clip', query='', start=3, end=4), 'fake')
    """
    text = text.strip()
    if match := _CLIP.match(text):
        return ToolCall("analyze_clip", start=int(match.group(1)), end=int(match.group(2)))
    if match := _RETRIEVE.match(text):
        query = match.group(1).strip()
        if not query or len(query) > MAX_QUERY_CHARS:
            raise ActionError(f"error: the query needs 1 to {MAX_QUERY_CHARS} characters")
        return ToolCall("retrieve", query=query)
    if match := _VERDICT.match(text):
        label, confidence = match.group(1), float(match.group(2))
        if label not in LABELS:
            raise ActionError("error: the verdict is real or fake")
        if not 0.0 <= confidence <= 1.0:
            raise ActionError("error: the confidence is between 0 and 1")
        return Verdict(label, confidence)
    raise ActionError(PARSE_ERROR)


def format_clip(start: int, end: int) -> str:
    return f"analyze_clip({start}, {end})"


def format_retrieve(query: str) -> str:
    return f"retrieve({query})"


def format_verdict(label: str, confidence: float) -> str:
    return f"verdict({label}, {confidence:.1f})"


def tokens(text: str) -> list[str]:
    """BM25's tokenizer: lower-case words and numbers."""
    return _WORD.findall(text.lower())


class Retriever:
    """BM25 (Okapi) over the fact-check corpus of world `world_seed`; `retrieve` returns the top document's text."""

    def __init__(self, world_seed: int = 0) -> None:
        self.world = build_world(world_seed)
        self.texts = [article.text for article in self.world.articles]
        self.index = BM25Okapi([tokens(text) for text in self.texts])

    def search(self, query: str, k: int = 1) -> list[tuple[str, float]]:
        """The `k` best (text, score) pairs for `query`, best first (documents with score 0 left out)."""
        words = tokens(query)
        if not words:
            return []
        scores = self.index.get_scores(words)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
        return [(self.texts[i], float(scores[i])) for i in order if scores[i] > 0]

    def retrieve(self, query: str) -> str:
        found = self.search(query, k=1)
        return f"retrieved: {found[0][0]}" if found else "retrieved: nothing found"


class ClipAnalyzer:
    """Looks at frames S..E of a video (its frame descriptors) and reports each frame's scene and forensic flag;
    the stand-in for re-examining a temporal segment with a vision model."""

    def analyze(self, frames: Sequence[str], start: int, end: int) -> str:
        if not 0 <= start <= end < len(frames):
            return f"error: the clip has seconds 0 to {len(frames) - 1}"
        if end - start + 1 > MAX_WINDOW:
            return f"error: at most {MAX_WINDOW} seconds per call"
        shown = ", ".join(f"t{second} {frames[second]}" for second in range(start, end + 1))
        return f"clip {start}-{end}: {shown}"


class ToolBackend(Protocol):
    def retrieve(self, query: str) -> str: ...

    def analyze(self, frames: Sequence[str], start: int, end: int) -> str: ...


class LocalTools:
    """Both tools in process (the environment's own path, and the agent loop's fallback when Ray is not running)."""

    def __init__(self, world_seed: int = 0) -> None:
        self.retriever = Retriever(world_seed)
        self.analyzer = ClipAnalyzer()

    def retrieve(self, query: str) -> str:
        return self.retriever.retrieve(query)

    def analyze(self, frames: Sequence[str], start: int, end: int) -> str:
        return self.analyzer.analyze(frames, start, end)


@dataclass
class EpisodeTools:
    """One episode's tool calls against `backend`, within per-tool `budgets` (calls per episode); `enabled` False
    refuses every call (the no-tools ablation). `calls` counts every tool call the agent made, refused ones too."""

    backend: ToolBackend
    frames: Sequence[str]
    budgets: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_BUDGETS))
    enabled: bool = True
    calls: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOOLS, 0))
    refused: int = 0

    def call(self, call: ToolCall) -> str:
        """The observation text answering `call`."""
        self.calls[call.name] += 1
        if not self.enabled:
            self.refused += 1
            return "error: no tools in this run"
        budget = self.budgets.get(call.name, 0)
        if self.calls[call.name] > budget:
            self.refused += 1
            return f"error: {call.name} budget used ({budget} calls)"
        if call.name == "retrieve":
            return self.backend.retrieve(call.query)
        return self.backend.analyze(self.frames, call.start, call.end)

    @property
    def total(self) -> int:
        return sum(self.calls.values())


def check_budgets(budgets: Mapping[str, int]) -> dict[str, int]:
    unknown = sorted(set(budgets) - set(TOOLS))
    if unknown:
        raise ValueError(f"budgets: unknown tool(s) {unknown}; expected some of {TOOLS}")
    if any(not isinstance(v, int) or v < 0 for v in budgets.values()):
        raise ValueError(f"budgets: calls per episode must be integers >= 0, got {dict(budgets)}")
    return {**DEFAULT_BUDGETS, **budgets}
