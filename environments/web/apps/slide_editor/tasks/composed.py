"""Slide editor task templates of the composed level: a few commands, a drag or a text box placed by hand."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from raygent.environments.web.apps.slide_editor import expert as x
from raygent.environments.web.apps.slide_editor.decks import (
    COLORS,
    LAYOUTS,
    POINTS,
    TOPICS,
    SlideTask,
    box_of,
    deck,
    outcome,
    pick_slide,
    same,
    slide_titled,
    state_titles,
    text_boxes,
    titles_of,
    titles_problem,
)
from raygent.environments.web.task import COMPOSED, Solver, register
from raygent.environments.web.ui import UISpec

QUADRANTS: dict[str, tuple[int, int]] = {
    "upper left": (25, 25),
    "upper right": (75, 25),
    "lower left": (25, 75),
    "lower right": (75, 75),
}
"""Quarter of the slide -> its centre (percent)."""
NEW_BOX = {"x": 30, "y": 40, "w": 40, "h": 12}
"""Where the app puts a new text box (its centre is on no quarter)."""


@register
class MoveSlide(SlideTask):
    template: ClassVar[str] = "move_slide"
    difficulty: ClassVar[int] = COMPOSED
    max_steps: ClassVar[int] = 20

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d = deck(rng, rng.randint(3, 6))
        start, to = rng.sample(range(len(d["slides"])), 2)
        return {"deck": d, "title": titles_of(d)[start], "position": to + 1}

    def goal(self, params: dict[str, Any]) -> str:
        return f"Reorder the slides so that the slide titled “{params['title']}” becomes slide {params['position']}."

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        want = [t for t in titles_of(params["deck"]) if t != params["title"]]
        want.insert(params["position"] - 1, params["title"])
        return outcome([titles_problem(state, want)], "slide moved")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        yield from x.drag_slide(titles_of(params["deck"]).index(params["title"]), params["position"] - 1)


@register
class PlaceTextBox(SlideTask):
    template: ClassVar[str] = "place_text_box"
    difficulty: ClassVar[int] = COMPOSED
    max_steps: ClassVar[int] = 20

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d, title = pick_slide(rng, (2, 4))
        return {"deck": d, "title": title, "text": rng.choice(POINTS), "quadrant": rng.choice(list(QUADRANTS))}

    def goal(self, params: dict[str, Any]) -> str:
        return (
            f"On the slide titled “{params['title']}”, add a text box that reads “{params['text']}” and move "
            f"it so that its centre lies in the {params['quadrant']} quarter of the slide."
        )

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        boxes = [
            b for b in text_boxes(slide_titled(state, params["title"])) if b.get("text", "").strip() == params["text"]
        ]
        if not boxes:
            return 0.0, False, f"no text box reading {params['text']!r} on the slide"
        qx, qy = QUADRANTS[params["quadrant"]]
        box = boxes[0]
        cx, cy = box["x"] + box["w"] / 2, box["y"] + box["h"] / 2
        inside = (cx < 50) == (qx < 50) and (cy < 50) == (qy < 50) and cx != 50 and cy != 50
        return outcome(
            [
                None
                if inside
                else f"the box's centre ({cx:.0f} %, {cy:.0f} %) is not in the {params['quadrant']} quarter"
            ],
            "text box placed",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.select_slide(obs, params["title"])
        obs = yield from x.run_command(obs, ui, "insert_text_box")
        obs = yield from x.type_into(obs, "Text box 1", params["text"])
        obs = yield 'hotkey("Escape")'
        start = x.slide_point(NEW_BOX["x"] + NEW_BOX["w"] / 2, NEW_BOX["y"] + NEW_BOX["h"] / 2)
        end = x.slide_point(*QUADRANTS[params["quadrant"]])
        yield f"drag({start[0]}, {start[1]}, {end[0]}, {end[1]})"


@register
class FormatTitle(SlideTask):
    template: ClassVar[str] = "format_title"
    difficulty: ClassVar[int] = COMPOSED
    max_steps: ClassVar[int] = 20

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d, title = pick_slide(rng, (2, 4))
        return {"deck": d, "title": title, "size": rng.randrange(24, 61, 4), "color": rng.choice(list(COLORS))}

    def goal(self, params: dict[str, Any]) -> str:
        return (
            f"Format the title of the slide titled “{params['title']}”: bold, {params['size']} pt, "
            f"{params['color'].lower()} ({COLORS[params['color']]})."
        )

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        box = box_of(slide_titled(state, params["title"]), "title") or {}
        return outcome(
            [
                same(box.get("bold"), True, "bold"),
                same(box.get("size"), params["size"], "the size"),
                same(box.get("color"), COLORS[params["color"]], "the color"),
            ],
            "title formatted",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        obs = yield from x.look()
        obs = yield from x.select_slide(obs, params["title"])
        obs = yield from x.click(obs, "Title", "textbox")
        obs = yield from x.run_command(obs, ui, "format_text")
        yield from x.fill_dialog(obs, {"Font size": params["size"], "Font color": params["color"], "Bold": True})


@register
class AppendSlide(SlideTask):
    template: ClassVar[str] = "append_slide"
    difficulty: ClassVar[int] = COMPOSED
    max_steps: ClassVar[int] = 20

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d = deck(rng, rng.randint(2, 4))
        title = rng.choice([t for t in TOPICS if t not in titles_of(d)])
        layout = rng.choice(("title", "title_content", "two_content"))
        return {"deck": d, "title": title, "layout": layout, "texts": rng.sample(POINTS, 2)}

    def body(self, params: dict[str, Any]) -> dict[str, str]:
        """Placeholder role -> text the new slide should hold (besides its title)."""
        first, second = params["texts"]
        return {
            "title": {"subtitle": first},
            "title_content": {"body": first},
            "two_content": {"left": first, "right": second},
        }[params["layout"]]

    def goal(self, params: dict[str, Any]) -> str:
        names = {"subtitle": "subtitle", "body": "content", "left": "left column", "right": "right column"}
        parts = ", ".join(f"the {names[role]} “{text}”" for role, text in self.body(params).items())
        return (
            f"Add a slide at the end with the “{LAYOUTS[params['layout']]}” layout, the title "
            f"“{params['title']}” and {parts}."
        )

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        slides = state.get("slides", [])
        last = slides[-1] if slides else {}
        problems = [
            titles_problem(state, [*titles_of(params["deck"]), params["title"]]),
            same(last.get("layout"), params["layout"], "the layout"),
        ]
        problems += [
            same((box_of(last, role) or {}).get("text"), text, role) for role, text in self.body(params).items()
        ]
        return outcome(problems, "slide added")

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        names = {
            "title": "Title",
            "subtitle": "Subtitle",
            "body": "Content",
            "left": "Left content",
            "right": "Right content",
        }
        obs = yield from x.look()
        obs = yield from x.select_slide(obs, titles_of(params["deck"])[-1])
        obs = yield from x.run_command(obs, ui, "new_slide")
        if params["layout"] != "title_content":
            obs = yield from x.run_command(obs, ui, "slide_layout")
            obs = yield from x.fill_dialog(obs, {"Layout": LAYOUTS[params["layout"]]}, submit="Apply")
        for role, text in {"title": params["title"], **self.body(params)}.items():
            obs = yield from x.type_into(obs, names[role], text)


@register
class PresentFrom(SlideTask):
    template: ClassVar[str] = "present_from"
    difficulty: ClassVar[int] = COMPOSED
    max_steps: ClassVar[int] = 20

    def sample(self, rng: random.Random) -> dict[str, Any]:
        d = deck(rng, rng.randint(4, 6))
        start = rng.randrange(1, len(d["slides"]) - 1)
        end = rng.randrange(start + 1, len(d["slides"]))
        return {"deck": d, "start": titles_of(d)[start], "end": titles_of(d)[end]}

    def goal(self, params: dict[str, Any]) -> str:
        return (
            f"Start the slide show from the slide titled “{params['start']}” (not from the beginning) and "
            f"advance until the slide titled “{params['end']}” is on screen."
        )

    def validate(self, state: dict[str, Any], params: dict[str, Any]) -> tuple[float, bool, str]:
        titles = state_titles(state)
        shown = state.get("showIndex")
        on_screen = titles[shown] if state.get("presenting") and shown is not None and shown < len(titles) else None
        started = state.get("showStart")
        return outcome(
            [
                None if state.get("presenting") else "the slide show is not running",
                same(
                    titles[started] if started is not None and started < len(titles) else None,
                    params["start"],
                    "the slide the show started from",
                ),
                same(on_screen, params["end"], "the slide on screen"),
                titles_problem(state, titles_of(params["deck"])),
            ],
            "presenting",
        )

    def solve(self, params: dict[str, Any], ui: UISpec) -> Solver:
        titles = titles_of(params["deck"])
        obs = yield from x.look()
        obs = yield from x.select_slide(obs, params["start"])
        obs = yield from x.run_command(obs, ui, "start_current")
        for _ in range(titles.index(params["end"]) - titles.index(params["start"])):
            obs = yield 'hotkey("ArrowRight")'
