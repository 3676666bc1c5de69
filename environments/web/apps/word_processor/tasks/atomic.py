"""The word processor's atomic task templates: one formatting, style, dialog or save command each."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from raygent.environments.web.apps.word_processor import content
from raygent.environments.web.apps.word_processor.expert import (
    LOOK,
    apply_to,
    click,
    fill,
    insert_table,
    page_setup,
    replace_all,
    save_as,
    to_end,
)
from raygent.environments.web.task import ATOMIC, Solver, WebTask, register
from raygent.environments.web.ui import UISpec

Params = dict[str, Any]
Verdict = tuple[float, bool, str]

FLAGS = {"bold": ("bold", "bold"), "italic": ("italic", "italic"), "underline": ("underline", "underlined")}
STYLE_COMMANDS = {"heading1": "style_h1", "heading2": "style_h2", "quote": "style_quote", "normal": "style_normal"}
STYLE_NAMES = {"heading1": "a level-1 heading", "heading2": "a level-2 heading", "quote": "a quotation"}
ALIGN_COMMANDS = {"center": "align_center", "right": "align_right", "justify": "justify", "left": "align_left"}
ALIGN_NAMES = {"center": "centered", "right": "aligned right", "justify": "justified"}


def verdict(ok: bool, success: str, failure: str) -> Verdict:
    return (1.0, True, success) if ok else (0.0, False, failure)


def word_formatted(blocks: list[dict], word: str, flag: str, value: Any = True) -> Verdict:
    """The first paragraph holding `word` has it formatted (`flag == value`) and not all of its other letters."""
    block = next((b for b in content.paragraphs(blocks) if word in b["text"]), None)
    if block is None:
        return 0.0, False, f"no paragraph contains {word!r} any more"
    if not content.span_has(block, word, flag, value):
        return 0.0, False, f"{word!r} does not have {flag} = {value}"
    if not content.others_lack(block, word, flag, value):
        return 0.0, False, f"the whole paragraph has {flag} = {value}, not just {word!r}"
    return 1.0, True, f"{word!r} has {flag} = {value}"


class WordTask(WebTask):
    """Shared setup: the drawn document in `params["doc"]` as normal paragraphs."""

    app = "word_processor"

    def initial_state(self, params: Params) -> Params:
        return {"blocks": content.blocks_of(params["doc"])}


@register
class FormatWord(WordTask):
    template = "format_word"
    difficulty = ATOMIC
    max_steps = 10

    def sample(self, rng: random.Random) -> Params:
        doc = content.draw_document(rng)
        return {"doc": doc, "word": rng.choice(content.unique_words(doc)), "flag": rng.choice(sorted(FLAGS))}

    def goal(self, params: Params) -> str:
        return f"Make the word \"{params['word']}\" {FLAGS[params['flag']][1]}."

    def validate(self, state: Params, params: Params) -> Verdict:
        return word_formatted(state.get("blocks", []), params["word"], params["flag"])

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        yield from apply_to(obs, ui, params["word"], FLAGS[params["flag"]][0])
        yield "finished()"


@register
class ParagraphStyle(WordTask):
    template = "paragraph_style"
    difficulty = ATOMIC
    max_steps = 10

    def sample(self, rng: random.Random) -> Params:
        doc = content.draw_document(rng)
        style = rng.choice(sorted(STYLE_NAMES))
        line = doc["title"] if style == "heading1" else rng.choice(doc["paragraphs"])
        return {"doc": doc, "style": style, "start": content.prefix_of(line, doc)}

    def goal(self, params: Params) -> str:
        return f"Make the paragraph that begins with \"{params['start']}\" {STYLE_NAMES[params['style']]}."

    def validate(self, state: Params, params: Params) -> Verdict:
        block = content.paragraph_starting(state.get("blocks", []), params["start"])
        style = block and block["style"]
        changed = [b for b in content.paragraphs(state.get("blocks", [])) if b["style"] != "normal"]
        return verdict(style == params["style"] and len(changed) == 1, "style set", f"paragraph style is {style}; "
                       f"{len(changed)} paragraphs are not normal")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        yield from apply_to(obs, ui, params["start"], STYLE_COMMANDS[params["style"]])
        yield "finished()"


@register
class AlignParagraph(WordTask):
    template = "align_paragraph"
    difficulty = ATOMIC
    max_steps = 10

    def sample(self, rng: random.Random) -> Params:
        doc = content.draw_document(rng)
        line = rng.choice([doc["title"], *doc["paragraphs"]])
        return {"doc": doc, "align": rng.choice(sorted(ALIGN_NAMES)), "start": content.prefix_of(line, doc)}

    def goal(self, params: Params) -> str:
        return f"Make the paragraph that begins with \"{params['start']}\" {ALIGN_NAMES[params['align']]}."

    def validate(self, state: Params, params: Params) -> Verdict:
        blocks = content.paragraphs(state.get("blocks", []))
        block = content.paragraph_starting(blocks, params["start"])
        others = [b for b in blocks if b is not block and b["align"] != "left"]
        ok = block is not None and block["align"] == params["align"] and not others
        return verdict(ok, "paragraph aligned", f"alignment is {block and block['align']}; {len(others)} others moved")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        yield from apply_to(obs, ui, params["start"], ALIGN_COMMANDS[params["align"]])
        yield "finished()"


@register
class ReplaceWord(WordTask):
    template = "replace_word"
    difficulty = ATOMIC
    max_steps = 10

    def sample(self, rng: random.Random) -> Params:
        doc = content.draw_document(rng)
        return {"doc": doc, "old": rng.choice(content.unique_words(doc)), "new": rng.choice(content.REPLACEMENTS)}

    def goal(self, params: Params) -> str:
        return f"Replace every \"{params['old']}\" in the document with \"{params['new']}\"."

    def validate(self, state: Params, params: Params) -> Verdict:
        expected = [content.replace_word(line, params["old"], params["new"])
                    for line in (params["doc"]["title"], *params["doc"]["paragraphs"])]
        texts = [b["text"] for b in content.paragraphs(state.get("blocks", []))]
        return verdict(texts == expected, "replaced", f"document text is {texts}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        yield from replace_all(obs, ui, params["old"], params["new"])
        yield "finished()"


@register
class SaveAs(WordTask):
    template = "save_as"
    difficulty = ATOMIC
    max_steps = 10

    def sample(self, rng: random.Random) -> Params:
        return {"doc": content.draw_document(rng), "name": rng.choice(content.FILE_NAMES),
                "format": rng.choice(sorted(content.FORMATS))}

    def goal(self, params: Params) -> str:
        return f"Save the document as \"{params['name']}\" in the {content.FORMATS[params['format']]} format."

    def validate(self, state: Params, params: Params) -> Verdict:
        name = f"{params['name']}.{params['format']}"
        entry = state.get("saved", {}).get(name)
        ok = isinstance(entry, dict) and entry.get("format") == params["format"]
        return verdict(ok, "saved", f"saved files: {sorted(state.get('saved', {}))}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        yield from save_as(obs, ui, params["name"], params["format"])
        yield "finished()"


@register
class PageSetting(WordTask):
    template = "page_setting"
    difficulty = ATOMIC
    max_steps = 10
    CHOICES: ClassVar[dict[str, tuple[Any, ...]]] = {
        "orientation": ("landscape",), "paper": ("A5", "Letter", "Legal"), "margins": (1, 1.5, 2.5, 3),
    }

    def sample(self, rng: random.Random) -> Params:
        setting = rng.choice(sorted(self.CHOICES))
        return {"doc": content.draw_document(rng), "setting": setting, "value": rng.choice(self.CHOICES[setting])}

    def goal(self, params: Params) -> str:
        setting, value = params["setting"], params["value"]
        if setting == "orientation":
            return "Change the page orientation to landscape."
        if setting == "paper":
            return f"Change the paper size to {value}."
        return f"Set the page margins to {value:g} cm."

    def validate(self, state: Params, params: Params) -> Verdict:
        value = state.get("pageSetup", {}).get(params["setting"])
        return verdict(value == params["value"], "page set up", f"{params['setting']} is {value}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        yield from page_setup(obs, ui, **{params["setting"]: params["value"]})
        yield "finished()"


@register
class FontSizeWord(WordTask):
    template = "font_size_word"
    difficulty = ATOMIC
    max_steps = 12

    def sample(self, rng: random.Random) -> Params:
        doc = content.draw_document(rng)
        return {"doc": doc, "word": rng.choice(content.unique_words(doc)), "size": rng.choice([9, 14, 18, 20, 24])}

    def goal(self, params: Params) -> str:
        return f"Set the font size of the word \"{params['word']}\" to {params['size']} pt."

    def validate(self, state: Params, params: Params) -> Verdict:
        return word_formatted(state.get("blocks", []), params["word"], "size", params["size"])

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from apply_to(obs, ui, params["word"], "font_size")
        obs = yield from fill(obs, "Size (pt)", str(params["size"]), "spinbutton")
        yield from click(obs, "Apply", "button")
        yield "finished()"


@register
class InsertTable(WordTask):
    template = "insert_table"
    difficulty = ATOMIC
    max_steps = 12

    def sample(self, rng: random.Random) -> Params:
        return {"doc": content.draw_document(rng), "rows": rng.randint(2, 5), "cols": rng.randint(2, 4)}

    def goal(self, params: Params) -> str:
        return f"Insert a table with {params['rows']} rows and {params['cols']} columns at the end of the document."

    def validate(self, state: Params, params: Params) -> Verdict:
        blocks = state.get("blocks", [])
        shapes = [content.shape(t) for t in content.tables(blocks)]
        at_end = [content.shape(t) for t in content.trailing_tables(blocks)]
        ok = shapes == at_end == [(params["rows"], params["cols"])]
        return verdict(ok, "table inserted", f"tables (rows, columns): {shapes}, at the end: {at_end}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from to_end(obs)
        yield from insert_table(obs, ui, params["rows"], params["cols"])
        yield "finished()"
