"""Seeded presentations for the slide editor's tasks, the template base class, and the checkers' state readers.

A deck is the `setState` document: `{"theme", "current", "slides": [{"layout", "texts": {role: text},
"notes", "boxes": [free text boxes]}]}`. Titles within a deck are unique, so goals name slides by title.
The state's slides carry `title` (the title placeholder's text, else the first non-empty box's), `layout`,
`notes` and `boxes` (`name`, `role`, `text`, `x`, `y`, `w`, `h` in percent of the slide, `size`, `bold`,
`italic`, `color`, `align`).
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from raygent.environments.web.task import WebTask

TOPICS = (
    "Quarterly review", "Agenda", "Market overview", "Roadmap", "Budget", "Team", "Risks", "Timeline", "Results",
    "Next steps", "Customer feedback", "Hiring plan", "Architecture", "Demo", "Open questions", "Summary", "Goals",
    "Metrics", "Launch plan", "Lessons learned", "Competition", "Pricing", "Partners", "Milestones",
)  # fmt: skip
POINTS = (
    "Revenue grew in every region", "Ship the beta in May", "Two new hires in support", "Latency halved",
    "Costs stay flat", "Focus on retention", "Pilot with three customers", "Migrate to the new cluster",
    "Survey results are in", "Freeze features in June", "Partner launch in autumn", "Train the sales team",
)  # fmt: skip
NOTES = (
    "Pause here for questions", "Mention the customer quote", "Keep this under two minutes", "Hand over to Dana",
    "Show the live demo", "Stress the deadline", "Skip if short on time", "Thank the design team",
)  # fmt: skip
LAYOUTS: dict[str, str] = {
    "title": "Title Slide",
    "title_content": "Title and Content",
    "two_content": "Two Content",
    "blank": "Blank",
}
THEMES = ("Plain", "Ocean", "Forest", "Sunset", "Midnight", "Paper")
COLORS: dict[str, str] = {
    "Black": "#000000",
    "White": "#ffffff",
    "Red": "#c9211e",
    "Blue": "#2a6099",
    "Green": "#3c8d2f",
    "Orange": "#e8751a",
    "Purple": "#7030a0",
    "Gray": "#808080",
}
FORMATS: dict[str, str] = {"ODP": ".odp", "PPTX": ".pptx", "PDF": ".pdf"}
FILE_STEMS = ("review", "kickoff", "pitch", "update", "briefing", "summary", "plan", "retro")


def slide_spec(title: str, rng: random.Random, layout: str | None = None) -> dict[str, Any]:
    """One slide with a title and, for content layouts, some body text."""
    layout = layout or rng.choice(("title_content", "title_content", "two_content"))
    texts = {"title": title}
    if layout == "title":
        texts["subtitle"] = rng.choice(POINTS)
    elif layout == "title_content":
        texts["body"] = rng.choice(POINTS)
    elif layout == "two_content":
        texts["left"], texts["right"] = rng.sample(POINTS, 2)
    return {"layout": layout, "texts": texts, "notes": ""}


def deck(rng: random.Random, count: int, theme: str | None = None) -> dict[str, Any]:
    """A deck of `count` slides with unique titles; the first uses the Title Slide layout."""
    titles = rng.sample(TOPICS, count)
    slides = [slide_spec(t, rng, "title" if i == 0 else None) for i, t in enumerate(titles)]
    return {"theme": theme or rng.choice(THEMES), "current": 0, "slides": slides}


def titles_of(deck_params: dict[str, Any]) -> list[str]:
    return [slide["texts"].get("title", "") for slide in deck_params["slides"]]


def pick_slide(rng: random.Random, count: tuple[int, int]) -> tuple[dict[str, Any], str]:
    """A deck of `count[0]`..`count[1]` slides and one of its titles."""
    d = deck(rng, rng.randint(*count))
    return d, rng.choice(titles_of(d))


def titles_problem(state: dict[str, Any], want: list[str]) -> str | None:
    """None if the slide titles are `want` in order, else a message."""
    got = state_titles(state)
    return None if got == want else f"slide titles are {got}, expected {want}"


class SlideTask(WebTask):
    """Shared plumbing: the app name and a deck-based initial state."""

    app: ClassVar[str] = "slide_editor"

    def initial_state(self, params: dict[str, Any]) -> dict[str, Any]:
        return params["deck"]


# ---- state readers ---------------------------------------------------------------------------------------------


def state_titles(state: dict[str, Any]) -> list[str]:
    return [slide.get("title", "") for slide in state.get("slides", [])]


def slide_titled(state: dict[str, Any], title: str) -> dict[str, Any] | None:
    return next((s for s in state.get("slides", []) if s.get("title") == title), None)


def box_of(slide: dict[str, Any] | None, role: str) -> dict[str, Any] | None:
    """The first box of this role (`title`, `subtitle`, `body`, `left`, `right`, `text`) on the slide."""
    if slide is None:
        return None
    return next((b for b in slide.get("boxes", []) if b.get("role") == role), None)


def text_boxes(slide: dict[str, Any] | None) -> list[dict[str, Any]]:
    return [b for b in (slide or {}).get("boxes", []) if b.get("role") == "text"]


def same(actual: Any, expected: Any, what: str) -> str | None:
    """None when equal (strings compared stripped), else a message."""
    a = actual.strip() if isinstance(actual, str) else actual
    e = expected.strip() if isinstance(expected, str) else expected
    return None if a == e else f"{what} is {actual!r}, expected {expected!r}"


def outcome(problems: list[str | None], success: str) -> tuple[float, bool, str]:
    """`(1.0, True, success)` when there are no problems, else `(0.0, False, first problem)`."""
    found = [p for p in problems if p]
    return (0.0, False, found[0]) if found else (1.0, True, success)
