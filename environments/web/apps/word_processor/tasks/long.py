"""The word processor's long task templates: several edits, checked on the file they were saved to."""

from __future__ import annotations

import random

from raygent.environments.web.apps.word_processor import content
from raygent.environments.web.apps.word_processor.expert import (
    LOOK,
    apply_to,
    command,
    insert_table,
    page_setup,
    replace_all,
    save_as,
    to_end,
    type_cells,
    typed,
)
from raygent.environments.web.apps.word_processor.tasks.atomic import Params, Verdict, WordTask, word_formatted
from raygent.environments.web.task import LONG, Solver, register
from raygent.environments.web.ui import UISpec


def draw_target(rng: random.Random) -> dict[str, str]:
    return {"name": rng.choice(content.FILE_NAMES), "format": rng.choice(sorted(content.FORMATS))}


def file_label(params: Params) -> str:
    return f"\"{params['name']}\" in the {content.FORMATS[params['format']]} format"


def saved_or_fail(state: Params, params: Params) -> list[dict] | None:
    return content.saved_blocks(state, f"{params['name']}.{params['format']}")


@register
class StructuredReport(WordTask):
    template = "structured_report"
    difficulty = LONG
    max_steps = 40

    def sample(self, rng: random.Random) -> Params:
        doc = content.draw_document(rng, paragraphs=4, sections=True)
        sections = [doc["paragraphs"][0], doc["paragraphs"][3]]
        body = [line for line in doc["paragraphs"] if line not in sections]
        word = rng.choice(content.unique_words(doc, body))
        return {"doc": doc, "sections": sections, "word": word, **draw_target(rng)}

    def goal(self, params: Params) -> str:
        first, second = params["sections"]
        return (f"Format the document: the title \"{params['doc']['title']}\" as a centered level-1 heading, "
                f"\"{first}\" and \"{second}\" as level-2 headings, and the word \"{params['word']}\" in bold. "
                f"Then save it as {file_label(params)}.")

    def validate(self, state: Params, params: Params) -> Verdict:
        blocks = saved_or_fail(state, params)
        if blocks is None:
            return 0.0, False, f"not saved as {params['name']}.{params['format']}"
        wanted = {params["doc"]["title"]: ("heading1", "center")}
        wanted.update({section: ("heading2", None) for section in params["sections"]})
        for block in content.paragraphs(blocks):
            style, align = wanted.get(block["text"].strip(), ("normal", None))
            if block["style"] != style or (align is not None and block["align"] != align):
                return 0.0, False, f"{block['text'][:30]!r} is {block['style']}, {block['align']}"
        return word_formatted(blocks, params["word"], "bold")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from apply_to(obs, ui, content.prefix_of(params["doc"]["title"], params["doc"]), "style_h1")
        obs = yield from command(obs, ui, "align_center")
        for section in params["sections"]:
            obs = yield from apply_to(obs, ui, section, "style_h2")
        obs = yield from apply_to(obs, ui, params["word"], "bold")
        yield from save_as(obs, ui, params["name"], params["format"])
        yield "finished()"


@register
class ChecklistNotes(WordTask):
    template = "checklist_notes"
    difficulty = LONG
    max_steps = 30

    def sample(self, rng: random.Random) -> Params:
        return {"doc": content.draw_document(rng, paragraphs=3), "items": rng.sample(content.LIST_ITEMS, 3),
                **draw_target(rng)}

    def goal(self, params: Params) -> str:
        items = ", ".join(f'"{item}"' for item in params["items"])
        return (f"At the end of the document add a bulleted list with the items {items} in this order, then save "
                f"the document as {file_label(params)}.")

    def validate(self, state: Params, params: Params) -> Verdict:
        blocks = saved_or_fail(state, params)
        if blocks is None:
            return 0.0, False, f"not saved as {params['name']}.{params['format']}"
        found = [(b["text"].strip(), b["list"]) for b in content.paragraphs(blocks)]
        lines = (params["doc"]["title"], *params["doc"]["paragraphs"])
        expected: list[tuple[str, str | None]] = [(line, None) for line in lines]
        expected += [(item, "bullet") for item in params["items"]]
        return (1.0, True, "list added and saved") if found == expected else (0.0, False, f"saved: {found}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from to_end(obs)
        obs = yield typed("\n" + params["items"][0])
        obs = yield from command(obs, ui, "bullet_list")
        for item in params["items"][1:]:
            obs = yield typed("\n" + item)
        yield from save_as(obs, ui, params["name"], params["format"])
        yield "finished()"


@register
class TableSection(WordTask):
    template = "table_section"
    difficulty = LONG
    max_steps = 36

    def sample(self, rng: random.Random) -> Params:
        doc = content.draw_document(rng, paragraphs=3)
        headers = rng.sample(content.HEADERS, rng.randint(2, 3))
        heading = rng.choice(["Budget", "Schedule", "Tasks"])
        return {"doc": doc, "heading": heading, "rows": rng.randint(2, 4), "headers": headers, **draw_target(rng)}

    def goal(self, params: Params) -> str:
        return (f"At the end of the document add a level-2 heading \"{params['heading']}\" followed by a table with "
                f"{params['rows']} rows and {len(params['headers'])} columns whose first row reads "
                f"{', '.join(params['headers'])}. Then save the document as {file_label(params)}.")

    def validate(self, state: Params, params: Params) -> Verdict:
        blocks = saved_or_fail(state, params)
        if blocks is None:
            return 0.0, False, f"not saved as {params['name']}.{params['format']}"
        heading = next((i for i, b in enumerate(blocks) if b.get("type") == "paragraph"
                        and b["text"].strip() == params["heading"] and b["style"] == "heading2"), None)
        if heading is None:
            return 0.0, False, f"no level-2 heading {params['heading']!r}"
        after = [b for b in blocks[heading + 1 :] if b.get("type") != "paragraph" or b["text"].strip()]
        ok = bool(after) and after[0].get("type") == "table"
        ok = ok and content.shape(after[0]) == (params["rows"], len(params["headers"]))
        ok = ok and after[0]["rows"][0] == params["headers"]
        return (1.0, True, "section added and saved") if ok else (0.0, False, f"after the heading: {after[:1]}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from to_end(obs)
        obs = yield typed("\n" + params["heading"])
        obs = yield from command(obs, ui, "style_h2")
        obs = yield from insert_table(obs, ui, params["rows"], len(params["headers"]))
        obs = yield from type_cells(obs, params["headers"])
        yield from save_as(obs, ui, params["name"], params["format"])
        yield "finished()"


@register
class EditingPass(WordTask):
    template = "editing_pass"
    difficulty = LONG
    max_steps = 40

    def sample(self, rng: random.Random) -> Params:
        doc = content.draw_document(rng, paragraphs=4)
        target = rng.choice(doc["paragraphs"])
        start = content.prefix_of(target, doc)
        old, word = rng.sample([w for w in content.unique_words(doc) if w not in start], 2)
        return {"doc": doc, "old": old, "new": rng.choice(content.REPLACEMENTS), "word": word, "start": start,
                "margins": rng.choice([1, 1.5, 2.5, 3]), **draw_target(rng)}

    def goal(self, params: Params) -> str:
        return (f"Edit the document: replace \"{params['old']}\" with \"{params['new']}\", "
                f"underline \"{params['word']}\", "
                f"justify the paragraph beginning with \"{params['start']}\", and set {params['margins']:g} cm page "
                f"margins. Then save it as {file_label(params)}.")

    def validate(self, state: Params, params: Params) -> Verdict:
        entry = state.get("saved", {}).get(f"{params['name']}.{params['format']}")
        if not isinstance(entry, dict):
            return 0.0, False, f"not saved as {params['name']}.{params['format']}"
        blocks = entry["blocks"]
        text = "\n".join(b["text"] for b in content.paragraphs(blocks))
        if text != content.replace_word(content.document_text(params["doc"]), params["old"], params["new"]):
            return 0.0, False, "the saved text is not the original with the word replaced"
        block = content.paragraph_starting(blocks, params["start"])
        if block is None or block["align"] != "justify":
            return 0.0, False, f"paragraph {params['start']!r} is not justified"
        if entry.get("pageSetup", {}).get("margins") != params["margins"]:
            return 0.0, False, f"saved with margins {entry.get('pageSetup', {}).get('margins')}"
        return word_formatted(blocks, params["word"], "underline")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from replace_all(obs, ui, params["old"], params["new"])
        obs = yield from apply_to(obs, ui, params["word"], "underline")
        obs = yield from apply_to(obs, ui, params["start"], "justify")
        obs = yield from page_setup(obs, ui, margins=params["margins"])
        yield from save_as(obs, ui, params["name"], params["format"])
        yield "finished()"
