"""Slide editor task templates of the long level: building, reorganizing, annotating and designing a deck."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from raygent.environments.web.apps.slide_editor import expert as x
from raygent.environments.web.apps.slide_editor.decks import (
    COLORS,
    FILE_STEMS,
    FORMATS,
    NOTES,
    POINTS,
    THEMES,
    TOPICS,
    SlideTask,
    box_of,
    deck,
    outcome,
    same,
    slide_titled,
    state_titles,
    text_boxes,
    titles_of,
)
from raygent.environments.web.task import LONG, Solver, register
from raygent.environments.web.ui import UISpec


@register
class BuildDeck(SlideTask):
    template: ClassVar[str] = "build_deck"
    difficulty: ClassVar[int] = LONG
    max_steps: ClassVar[int] = 40

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d = deck(rng, 1)
        titles = rng.sample([t for t in TOPICS if t not in titles_of(d)], 3)
        return {"deck": d, "titles": titles, "bodies": rng.sample(POINTS, 3)}

    def goal(self, params: dict[str, Any]) -> str:
        parts = "; ".join(
            f"“{t}” with the content “{b}”" for t, b in zip(params["titles"], params["bodies"], strict=True)
        )
        return f"After the title slide, add three “Title and Content” slides in this order: {parts}."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        want = [*titles_of(params["deck"]), *params["titles"]]
        got = state_titles(state)
        problems = [None if got == want else f"slide titles are {got}, expected {want}"]
        for title, body in zip(params["titles"], params["bodies"], strict=True):
            slide = slide_titled(state, title)
            problems += [
                same(slide and slide.get("layout"), "title_content", f"the layout of {title!r}"),
                same((box_of(slide, "body") or {}).get("text"), body, f"the content of {title!r}"),
            ]
        return outcome(problems, "deck built")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        for title, body in zip(params["titles"], params["bodies"], strict=True):
            obs = yield from x.run_command(obs, ui, "new_slide")
            obs = yield from x.type_into(obs, "Title", title)
            obs = yield from x.type_into(obs, "Content", body)


@register
class Reorganize(SlideTask):
    template: ClassVar[str] = "reorganize"
    difficulty: ClassVar[int] = LONG
    max_steps: ClassVar[int] = 40

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d = deck(rng, rng.randint(4, 6))
        titles = titles_of(d)
        delete, front, copy = rng.sample(titles[1:], 3)
        return {
            "deck": d,
            "delete": delete,
            "front": front,
            "copy": copy,
            "theme": rng.choice([t for t in THEMES if t != d["theme"]]),
        }

    def expected_titles(self, params: dict[str, Any]) -> list[str]:
        titles = [t for t in titles_of(params["deck"]) if t != params["delete"]]
        titles.remove(params["front"])
        titles.insert(0, params["front"])
        titles.insert(titles.index(params["copy"]) + 1, params["copy"])
        return titles

    def goal(self, params: dict[str, Any]) -> str:
        return (
            f"Reorganize the presentation: delete the slide “{params['delete']}”, move the slide "
            f"“{params['front']}” to the very beginning, duplicate the slide “{params['copy']}” (the copy "
            f"right after it), and apply the “{params['theme']}” theme."
        )

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        want, got = self.expected_titles(params), state_titles(state)
        return outcome(
            [
                None if got == want else f"slide titles are {got}, expected {want}",
                same(state.get("theme"), params["theme"], "the theme"),
            ],
            "reorganized",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.select_slide(obs, params["delete"])
        obs = yield from x.run_command(obs, ui, "delete_slide")
        obs = yield from x.select_slide(obs, params["front"])
        position = [t for t in titles_of(params["deck"]) if t != params["delete"]].index(params["front"])
        for _ in range(position):
            obs = yield from x.run_command(obs, ui, "move_slide_up")
        obs = yield from x.select_slide(obs, params["copy"])
        obs = yield from x.run_command(obs, ui, "duplicate_slide")
        obs = yield from x.run_command(obs, ui, "theme")
        yield from x.fill_dialog(obs, {"Theme": params["theme"]}, submit="Apply")


@register
class AnnotateDeck(SlideTask):
    template: ClassVar[str] = "annotate_deck"
    difficulty: ClassVar[int] = LONG
    max_steps: ClassVar[int] = 40

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d = deck(rng, rng.randint(3, 4))
        return {"deck": d, "notes": rng.sample(NOTES, len(d["slides"]))}

    def goal(self, params: dict[str, Any]) -> str:
        pairs = "; ".join(f"“{t}”: “{n}”" for t, n in zip(titles_of(params["deck"]), params["notes"], strict=True))
        return f"Give every slide its speaker notes and make every slide title italic. Notes per slide: {pairs}."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        problems: list[str | None] = []
        for title, notes in zip(titles_of(params["deck"]), params["notes"], strict=True):
            slide = slide_titled(state, title)
            problems += [
                same(slide and slide.get("notes"), notes, f"the notes of {title!r}"),
                same((box_of(slide, "title") or {}).get("italic"), True, f"italic title of {title!r}"),
            ]
        return outcome(problems, "deck annotated")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        for title, notes in zip(titles_of(params["deck"]), params["notes"], strict=True):
            obs = yield from x.select_slide(obs, title)
            obs = yield from x.type_into(obs, "Speaker notes", notes)
            obs = yield from x.click(obs, "Title", "textbox")
            obs = yield from x.run_command(obs, ui, "italic")


@register
class DesignTitleSlide(SlideTask):
    template: ClassVar[str] = "design_title_slide"
    difficulty: ClassVar[int] = LONG
    max_steps: ClassVar[int] = 40

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d = deck(rng, rng.randint(2, 3))
        d["slides"][0] = {
            "layout": "title_content",
            "texts": {"title": titles_of(d)[0], "body": rng.choice(POINTS)},
            "notes": "",
        }
        return {
            "deck": d,
            "title": rng.choice([t for t in TOPICS if t not in titles_of(d)]),
            "subtitle": rng.choice(POINTS),
            "size": rng.randrange(40, 65, 4),
            "color": rng.choice(list(COLORS)),
            "tag": rng.choice(("Draft", "Confidential", "Internal", "v2")),
            "x": rng.randrange(5, 60, 5),
            "y": rng.randrange(70, 86, 2),
            "stem": rng.choice(FILE_STEMS),
            "format": rng.choice(list(FORMATS)),
        }

    def goal(self, params: dict[str, Any]) -> str:
        name = params["stem"] + FORMATS[params["format"]]
        return (
            f"Turn the first slide into a “Title Slide” titled “{params['title']}” with the subtitle "
            f"“{params['subtitle']}”; make the title {params['size']} pt and {params['color'].lower()} "
            f"({COLORS[params['color']]}). Add a text box reading “{params['tag']}” whose top-left corner is "
            f"at {params['x']} % across and {params['y']} % down the slide. Save the presentation as a "
            f"{params['format']} file named “{name}”."
        )

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        slides = state.get("slides", [])
        first = slides[0] if slides else {}
        title = box_of(first, "title") or {}
        tags = [b for b in text_boxes(first) if b.get("text", "").strip() == params["tag"]]
        placed = bool(tags) and abs(tags[0]["x"] - params["x"]) <= 2 and abs(tags[0]["y"] - params["y"]) <= 2
        name = params["stem"] + FORMATS[params["format"]]
        saved = next(
            (f for f in state.get("files", []) if f.get("name") == name and f.get("format") == params["format"]), None
        )
        return outcome(
            [
                same(first.get("layout"), "title", "the first slide's layout"),
                same(title.get("text"), params["title"], "the title"),
                same((box_of(first, "subtitle") or {}).get("text"), params["subtitle"], "the subtitle"),
                same(title.get("size"), params["size"], "the title size"),
                same(title.get("color"), COLORS[params["color"]], "the title color"),
                None if placed else f"no text box {params['tag']!r} at ({params['x']}, {params['y']})",
                None if saved else f"no {params['format']} file named {name!r}",
                None
                if saved is None or saved.get("titles", [None])[0] == params["title"]
                else "the file was saved before the title was set",
            ],
            "title slide designed",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.run_command(obs, ui, "slide_layout")
        obs = yield from x.fill_dialog(obs, {"Layout": "Title Slide"}, submit="Apply")
        obs = yield from x.type_into(obs, "Title", params["title"])
        obs = yield from x.type_into(obs, "Subtitle", params["subtitle"])
        obs = yield from x.click(obs, "Title", "textbox")
        obs = yield from x.run_command(obs, ui, "format_text")
        obs = yield from x.fill_dialog(obs, {"Font size": params["size"], "Font color": params["color"]})
        obs = yield from x.run_command(obs, ui, "insert_text_box")
        box = next(b for b in ("Text box 1", "Text box 2") if f'textbox "{b}"' in obs)
        obs = yield from x.type_into(obs, box, params["tag"])
        obs = yield from x.run_command(obs, ui, "position_size")
        obs = yield from x.fill_dialog(obs, {"X (%)": params["x"], "Y (%)": params["y"]})
        obs = yield from x.run_command(obs, ui, "save_as")
        yield from x.fill_dialog(obs, {"File name": params["stem"], "Format": params["format"]}, submit="Save")
