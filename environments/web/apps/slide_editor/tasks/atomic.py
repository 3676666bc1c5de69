"""Slide editor task templates of the atomic level (one command each); composed and long ones are in
`composed.py` and `long.py`.

Goals name slides by their titles and say what the presentation should become, never which menu to use
(labels and menus are randomized per UI seed; the procedure is in the docs).
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from raygent.environments.web.apps.slide_editor import expert as x
from raygent.environments.web.apps.slide_editor.decks import (
    LAYOUTS,
    NOTES,
    THEMES,
    TOPICS,
    SlideTask,
    deck,
    outcome,
    pick_slide,
    same,
    slide_titled,
    titles_of,
    titles_problem,
)
from raygent.environments.web.task import ATOMIC, Solver, register
from raygent.environments.web.ui import UISpec

# ---- atomic ---------------------------------------------------------------------------------------------------


@register
class AddSlideAfter(SlideTask):
    template: ClassVar[str] = "add_slide_after"
    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 10

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d, title = pick_slide(rng, (2, 4))
        return {"deck": d, "after": title}

    def goal(self, params: dict[str, Any]) -> str:
        return f"Insert a new empty slide directly after the slide titled “{params['after']}”."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        want = titles_of(params["deck"])
        want.insert(want.index(params["after"]) + 1, "")
        return outcome([titles_problem(state, want)], "slide inserted")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.select_slide(obs, params["after"])
        yield from x.run_command(obs, ui, "new_slide")


@register
class DeleteSlide(SlideTask):
    template: ClassVar[str] = "delete_slide"
    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 10

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d, title = pick_slide(rng, (3, 5))
        return {"deck": d, "title": title}

    def goal(self, params: dict[str, Any]) -> str:
        return f"Delete the slide titled “{params['title']}”."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        want = [t for t in titles_of(params["deck"]) if t != params["title"]]
        return outcome([titles_problem(state, want)], "slide deleted")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.select_slide(obs, params["title"])
        yield from x.run_command(obs, ui, "delete_slide")


@register
class DuplicateSlide(SlideTask):
    template: ClassVar[str] = "duplicate_slide"
    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 10

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d, title = pick_slide(rng, (2, 4))
        return {"deck": d, "title": title}

    def goal(self, params: dict[str, Any]) -> str:
        return f"Duplicate the slide titled “{params['title']}” so that the copy follows it."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        want = titles_of(params["deck"])
        at = want.index(params["title"])
        want.insert(at + 1, params["title"])
        slides = state.get("slides", [])
        copy_ok = len(slides) == len(want) and [b.get("text") for b in slides[at]["boxes"]] == [
            b.get("text") for b in slides[at + 1]["boxes"]
        ]
        return outcome(
            [titles_problem(state, want), None if copy_ok else "the copy differs from the original"],
            "slide duplicated",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.select_slide(obs, params["title"])
        yield from x.run_command(obs, ui, "duplicate_slide")


@register
class ChangeLayout(SlideTask):
    template: ClassVar[str] = "change_layout"
    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 10

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d, title = pick_slide(rng, (2, 4))
        current = d["slides"][titles_of(d).index(title)]["layout"]
        return {"deck": d, "title": title, "layout": rng.choice([k for k in LAYOUTS if k != current])}

    def goal(self, params: dict[str, Any]) -> str:
        return f"Change the layout of the slide titled “{params['title']}” to “{LAYOUTS[params['layout']]}”."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        slide = slide_titled(state, params["title"])
        return outcome(
            [
                None if slide else f"no slide titled {params['title']!r}",
                same(slide and slide.get("layout"), params["layout"], "the layout"),
                titles_problem(state, titles_of(params["deck"])),
            ],
            "layout changed",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.select_slide(obs, params["title"])
        obs = yield from x.run_command(obs, ui, "slide_layout")
        yield from x.fill_dialog(obs, {"Layout": LAYOUTS[params["layout"]]}, submit="Apply")


@register
class ApplyTheme(SlideTask):
    template: ClassVar[str] = "apply_theme"
    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 10

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d = deck(rng, rng.randint(2, 4))
        return {"deck": d, "theme": rng.choice([t for t in THEMES if t != d["theme"]])}

    def goal(self, params: dict[str, Any]) -> str:
        return f"Apply the “{params['theme']}” theme to the presentation."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        return outcome([same(state.get("theme"), params["theme"], "the theme")], "theme applied")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.run_command(obs, ui, "theme")
        yield from x.fill_dialog(obs, {"Theme": params["theme"]}, submit="Apply")


@register
class RetitleSlide(SlideTask):
    template: ClassVar[str] = "retitle_slide"
    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 10

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d, title = pick_slide(rng, (2, 4))
        return {"deck": d, "title": title, "new_title": rng.choice([t for t in TOPICS if t not in titles_of(d)])}

    def goal(self, params: dict[str, Any]) -> str:
        return f"Change the title of the slide titled “{params['title']}” to “{params['new_title']}”."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        want = [params["new_title"] if t == params["title"] else t for t in titles_of(params["deck"])]
        return outcome([titles_problem(state, want)], "title changed")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.select_slide(obs, params["title"])
        yield from x.type_into(obs, "Title", params["new_title"])


@register
class SpeakerNotes(SlideTask):
    template: ClassVar[str] = "speaker_notes"
    difficulty: ClassVar[int] = ATOMIC
    max_steps: ClassVar[int] = 10

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d, title = pick_slide(rng, (2, 4))
        return {"deck": d, "title": title, "notes": rng.choice(NOTES)}

    def goal(self, params: dict[str, Any]) -> str:
        return f"Add the speaker notes “{params['notes']}” to the slide titled “{params['title']}”."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        slide = slide_titled(state, params["title"])
        return outcome([same(slide and slide.get("notes"), params["notes"], "the notes")], "notes added")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.select_slide(obs, params["title"])
        yield from x.type_into(obs, "Speaker notes", params["notes"])
