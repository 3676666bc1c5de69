"""Quill Writer (the word processor app): every template's scripted solve succeeds through `BrowserEnv` under seeded
UI layouts, a random agent rarely succeeds, validates judge hand-built states, and the page's document model
(blocks in and out, find & replace, undo, the seeded menus) behaves."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from raygent.environments.web.actions import ActionSettings
from raygent.environments.web.apps.word_processor import content
from raygent.environments.web.apps.word_processor.commands import COMMANDS
from raygent.environments.web.browser import shared_browser
from raygent.environments.web.env import BrowserEnv, run_solver
from raygent.environments.web.observe import parse
from raygent.environments.web.registry import load_app, make_task
from raygent.environments.web.server import shared_server, ui_spec
from raygent.environments.web.task import ATOMIC, COMPOSED, LONG

pytestmark = pytest.mark.browser

APP = "word_processor"
TEMPLATES = sorted(load_app(APP))
CASES = [(t, 13 + 5 * i, 0 if i % 4 == 1 else 2 + 7 * i) for i, t in enumerate(TEMPLATES)]
"""One (template, task seed, UI seed) per template; three in four under a randomized layout."""
SETTINGS = ActionSettings(action_timeout_ms=3000, wait_s=0.2)
PLAIN = {"bold": False, "italic": False, "underline": False, "strike": False, "size": 12}


@pytest.fixture(scope="module")
def env() -> Iterator[BrowserEnv]:
    environment = BrowserEnv(app=APP, action_settings=SETTINGS)
    yield environment
    environment.close()


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    context = shared_browser().browser.new_context()
    app_page = context.new_page()
    app_page.goto(shared_server().app_url(APP, 0))
    app_page.evaluate("() => window.raygent.ready")
    yield app_page
    context.close()


def task(template: str, seed: int = 1) -> tuple[Any, dict[str, Any]]:
    instance = make_task(f"{APP}/{template}/{seed}")
    return instance.task, instance.params


def paragraph(text: str, marked: str = "", style: str = "normal", **flags: Any) -> dict[str, Any]:
    """A paragraph block whose first `marked` substring carries `flags` (the rest plain)."""
    if not marked:
        runs = [{"text": text, **PLAIN}]
    else:
        i = text.index(marked)
        pieces = ((text[:i], {}), (marked, flags), (text[i + len(marked) :], {}))
        runs = [{"text": t, **PLAIN, **f} for t, f in pieces if t]
    return {"type": "paragraph", "style": style, "align": "left", "list": None, "text": text, "runs": runs}


def document_blocks(params: dict[str, Any]) -> list[dict[str, Any]]:
    return [paragraph(line) for line in (params["doc"]["title"], *params["doc"]["paragraphs"])]


# ---------------------------------------------------------------- templates (no browser)


def test_templates_span_three_levels_with_varied_parameters() -> None:
    levels = [load_app(APP)[t].difficulty for t in TEMPLATES]
    assert len(TEMPLATES) >= 15
    assert levels.count(ATOMIC) >= 5 and levels.count(COMPOSED) >= 5 and levels.count(LONG) >= 4
    for template in TEMPLATES:
        drawn = {repr(sorted(task(template, seed)[1].items())) for seed in range(12)}
        assert len(drawn) >= 4, f"{template} draws too few distinct tasks"


def test_documents_fit_the_observation_and_words_are_findable() -> None:
    for seed in range(30):
        doc = content.draw_document(random.Random(seed), sections=seed % 2 == 0)
        assert len(content.document_text(doc)) < 450  # the observation shows a document value of 480 characters
        text = content.document_text(doc).lower()
        assert all(text.count(w.lower()) == 1 for w in content.unique_words(doc))
        assert all(text.count(content.prefix_of(line, doc).lower()) == 1 for line in doc["paragraphs"])


# ---------------------------------------------------------------- validates on hand-built states


def test_format_word_wants_the_word_and_not_the_whole_paragraph() -> None:
    template, params = task("format_word")
    word, flag = params["word"], params["flag"]
    blocks = document_blocks(params)
    index = next(i for i, b in enumerate(blocks) if word in b["text"])
    text = blocks[index]["text"]
    blocks[index] = paragraph(text, word, **{flag: True})
    assert template.validate({"blocks": blocks}, params)[:2] == (1.0, True)
    blocks[index] = paragraph(text, text, **{flag: True})
    assert "whole paragraph" in template.validate({"blocks": blocks}, params)[2]
    blocks[index] = paragraph(text, word[:-1], **{flag: True})
    assert template.validate({"blocks": blocks}, params)[0] == 0.0


def test_list_and_style_validates() -> None:
    template, params = task("make_list")
    blocks = document_blocks(params)
    for block in blocks:
        if any(block["text"].startswith(s) for s in params["starts"]):
            block["list"] = params["kind"]
    assert template.validate({"blocks": blocks}, params)[0] == 1.0
    blocks[0]["list"] = params["kind"]
    assert template.validate({"blocks": blocks}, params)[0] == 0.0
    template, params = task("centered_title")
    blocks = document_blocks(params)
    blocks[0].update(style="heading1", align="center")
    assert template.validate({"blocks": blocks}, params)[0] == 1.0
    blocks[0]["align"] = "left"
    assert template.validate({"blocks": blocks}, params)[0] == 0.0


def test_table_must_trail_the_text() -> None:
    template, params = task("insert_table")
    grid = {"type": "table", "rows": [[""] * params["cols"] for _ in range(params["rows"])], "header": False}
    blocks = document_blocks(params)
    assert template.validate({"blocks": [*blocks, grid, paragraph("")]}, params)[0] == 1.0
    assert template.validate({"blocks": [blocks[0], grid, *blocks[1:]]}, params)[0] == 0.0
    assert template.validate({"blocks": blocks}, params)[0] == 0.0


def test_long_tasks_are_checked_on_the_saved_file() -> None:
    template, params = task("structured_report")
    blocks = document_blocks(params)
    blocks[0].update(style="heading1", align="center")
    for block in blocks:
        if block["text"] in params["sections"]:
            block["style"] = "heading2"
        if params["word"] in block["text"]:
            block.update(paragraph(block["text"], params["word"], bold=True))
    name = f"{params['name']}.{params['format']}"
    assert template.validate({"blocks": blocks, "saved": {name: {"blocks": blocks}}}, params)[0] == 1.0
    assert "not saved" in template.validate({"blocks": blocks, "saved": {}}, params)[2]
    stale = {name: {"blocks": document_blocks(params)}}
    assert template.validate({"blocks": blocks, "saved": stale}, params)[0] == 0.0
    template, params = task("checklist_notes")
    items = [{**paragraph(item), "list": "bullet"} for item in params["items"]]
    saved = {f"{params['name']}.{params['format']}": {"blocks": [*document_blocks(params), *items]}}
    assert template.validate({"saved": saved}, params)[0] == 1.0
    items.reverse()
    saved = {f"{params['name']}.{params['format']}": {"blocks": [*document_blocks(params), *items]}}
    assert template.validate({"saved": saved}, params)[0] == 0.0


def test_page_and_replace_validates() -> None:
    template, params = task("page_layout")
    page = {k: params[k] for k in ("paper", "orientation", "margins")}
    assert template.validate({"pageSetup": page}, params)[0] == 1.0
    assert template.validate({"pageSetup": {**page, "paper": "A4"}}, params)[0] == 0.0
    template, params = task("replace_word")
    lines = [
        content.replace_word(line, params["old"], params["new"])
        for line in content.document_text(params["doc"]).split("\n")
    ]
    assert template.validate({"blocks": [paragraph(line) for line in lines]}, params)[0] == 1.0
    assert template.validate({"blocks": document_blocks(params)}, params)[0] == 0.0


# ---------------------------------------------------------------- the page's document model


def test_blocks_round_trip_through_the_page(page: Any) -> None:
    blocks = [
        {"type": "paragraph", "style": "heading1", "align": "center", "text": "Title"},
        {
            "type": "paragraph",
            "text": "x",
            "runs": [
                {"text": "plain "},
                {"text": "bold", "bold": True},
                {"text": " big", "size": 18, "underline": True},
            ],
        },
        {"type": "paragraph", "list": "bullet", "text": "one"},
        {"type": "paragraph", "list": "bullet", "text": "two"},
        {"type": "paragraph", "list": "number", "text": "three", "align": "justify"},
        {"type": "table", "rows": [["a", "b"], ["c", ""]], "header": True},
    ]
    page.evaluate("(blocks) => window.raygent.setState({blocks})", blocks)
    state = page.evaluate("() => window.raygent.getState()")
    got = state["blocks"]
    assert [(b.get("style"), b.get("align"), b.get("list"), b.get("text")) for b in got[:5]] == [
        ("heading1", "center", None, "Title"), ("normal", "left", None, "plain bold big"),
        ("normal", "left", "bullet", "one"), ("normal", "left", "bullet", "two"),
        ("normal", "justify", "number", "three")]  # fmt: skip
    assert [(r["text"], r["bold"], r["underline"], r["size"]) for r in got[1]["runs"]] == [
        ("plain ", False, False, 12),
        ("bold", True, False, 12),
        (" big", False, True, 18),
    ]
    assert got[5] == {"type": "table", "rows": [["a", "b"], ["c", ""]], "header": True}
    assert got[6]["text"] == "" and state["stats"]["words"] == 10 and state["modified"] is False


def test_find_replace_and_undo_in_the_page(page: Any) -> None:
    page.evaluate(
        "(blocks) => window.raygent.setState({blocks})",
        [{"type": "paragraph", "text": "cat and dog"}, {"type": "paragraph", "text": "Catalog cat"}],
    )
    page.evaluate("""() => {
        document.getElementById('find-text').value = 'cat';
        document.getElementById('replace-text').value = 'emu';
        document.getElementById('find-words').checked = true;
        document.getElementById('replace-all').click();
    }""")
    state = page.evaluate("() => window.raygent.getState()")
    assert [b["text"] for b in state["blocks"]] == ["emu and dog", "Catalog emu"]
    assert state["findReplace"]["status"] == "2 replacements made" and state["modified"] is True
    page.keyboard.press("Control+z")  # the spec's Undo shortcut, handled by the page
    assert [b["text"] for b in page.evaluate("() => window.raygent.getState()")["blocks"]] == [
        "cat and dog",
        "Catalog cat",
    ]


@pytest.mark.parametrize("ui_seed", [0, 5, 23])
def test_menus_and_toolbar_follow_the_seeded_spec(page: Any, ui_seed: int) -> None:
    page.goto(shared_server().app_url(APP, ui_seed))
    page.evaluate("() => window.raygent.ready")
    spec = ui_spec(APP, ui_seed)
    items = page.evaluate(
        "() => [...document.querySelectorAll('#menubar .menu')].flatMap((m) => "
        "[...m.querySelectorAll('[data-command]')]"
        ".map((b) => [m.querySelector('button').textContent, b.dataset.command, b.getAttribute('aria-label')]))"
    )
    assert sorted(map(tuple, items)) == sorted((c.menu, c.id, c.label) for c in spec.commands.values())
    assert {c.id for c in COMMANDS} == {item[1] for item in items}
    toolbar = page.evaluate(
        "() => [...document.querySelectorAll('#toolbar [data-command]')]"
        ".map((b) => [b.dataset.command, b.getAttribute('aria-label')])"
    )
    assert toolbar and all(spec.label(cid) == label for cid, label in toolbar)


# ---------------------------------------------------------------- episodes in the browser


@pytest.mark.parametrize(("template", "seed", "ui_seed"), CASES)
def test_scripted_solver_succeeds(env: BrowserEnv, template: str, seed: int, ui_seed: int) -> None:
    success, steps = run_solver(env, f"{APP}/{template}/{seed}", ui_seed=ui_seed)
    assert success, f"{template}/{seed}@{ui_seed}: {env.task.goal if env.task else ''} ({steps} steps)"
    assert steps <= load_app(APP)[template].max_steps


WORDS = ("report", "hello", "12", "Heading", "x")
KEYS = ("Enter", "Escape", "Tab", "Control+b", "Control+s", "Control+e", "Control+1", "Control+z")


def random_action(rng: random.Random, text: str) -> str:
    """A uniformly silly agent: clicks, right-clicks, typing and keys on what it sees, or a random point."""
    elements = [e for e in parse(text) if e.id is not None]
    roll = rng.random()
    if not elements or roll < 0.1:
        return f"click({rng.randint(0, 1000)}, {rng.randint(0, 1000)})"
    if roll < 0.2:
        return f'hotkey("{rng.choice(KEYS)}")'
    element = rng.choice(elements)
    if element.role in ("textbox", "spinbutton") and roll < 0.5:
        return f'type({element.id}, "{rng.choice(WORDS)}")'
    if roll < 0.25:
        return f"right_single({element.id})"
    return f"click({element.id})"


def test_random_agent_rarely_succeeds() -> None:
    environment = BrowserEnv(app=APP, action_settings=SETTINGS, max_steps=10)
    rng = random.Random(0)
    successes = []
    try:
        for episode, template in enumerate(TEMPLATES[::2]):
            obs, _ = environment.reset(options={"task": f"{APP}/{template}/{episode}", "ui_seed": episode})
            while True:
                obs, _, terminated, truncated, info = environment.step(random_action(rng, obs["text"]))
                if terminated or truncated:
                    successes.append(bool(info["success"]))
                    break
    finally:
        environment.close()
    rate = sum(successes) / len(successes)
    print(f"random agent success on {APP}: {sum(successes)}/{len(successes)} = {rate:.2f}")
    assert len(successes) == len(TEMPLATES[::2]) and rate <= 0.25
