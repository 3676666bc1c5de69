"""The word processor's composed task templates: a few commands combined (lists, styled headings, tables, saving)."""

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
from raygent.environments.web.apps.word_processor.tasks.atomic import (
    FLAGS,
    Params,
    Verdict,
    WordTask,
    verdict,
    word_formatted,
)
from raygent.environments.web.task import COMPOSED, Solver, register
from raygent.environments.web.ui import UISpec

LISTS = {"bullet": ("bullet_list", "a bulleted list"), "number": ("numbered_list", "a numbered list")}


@register
class MakeList(WordTask):
    template = "make_list"
    difficulty = COMPOSED
    max_steps = 20

    def sample(self, rng: random.Random) -> Params:
        doc = content.draw_document(rng, paragraphs=4)
        count = rng.randint(2, 3)
        first = rng.randint(0, 4 - count)
        lines = doc["paragraphs"][first : first + count]
        return {"doc": doc, "kind": rng.choice(sorted(LISTS)), "starts": [content.prefix_of(x, doc) for x in lines]}

    def goal(self, params: Params) -> str:
        quoted = ", ".join(f'"{s}…"' for s in params["starts"])
        return f"Turn the paragraphs beginning with {quoted} into {LISTS[params['kind']][1]}; leave the rest as it is."

    def validate(self, state: Params, params: Params) -> Verdict:
        blocks = content.paragraphs(state.get("blocks", []))
        wanted = [content.paragraph_starting(blocks, s) for s in params["starts"]]
        listed = [b for b in blocks if b.get("list")]
        ok = all(b is not None and b["list"] == params["kind"] for b in wanted) and len(listed) == len(wanted)
        return verdict(ok, "list made", f"list items: {[b['text'][:20] for b in listed]}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        for start in params["starts"]:
            obs = yield from apply_to(obs, ui, start, LISTS[params["kind"]][0])
        yield "finished()"


@register
class CenteredTitle(WordTask):
    template = "centered_title"
    difficulty = COMPOSED
    max_steps = 16

    def sample(self, rng: random.Random) -> Params:
        doc = content.draw_document(rng)
        return {"doc": doc, "start": content.prefix_of(doc["title"], doc)}

    def goal(self, params: Params) -> str:
        return f"Turn the first line, \"{params['doc']['title']}\", into a centered level-1 heading."

    def validate(self, state: Params, params: Params) -> Verdict:
        block = content.paragraph_starting(state.get("blocks", []), params["doc"]["title"])
        ok = block is not None and block["style"] == "heading1" and block["align"] == "center"
        return verdict(ok, "title styled", f"title is {block and (block['style'], block['align'])}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from apply_to(obs, ui, params["start"], "style_h1")
        yield from command(obs, ui, "align_center")
        yield "finished()"


@register
class ReplaceAndFormat(WordTask):
    template = "replace_and_format"
    difficulty = COMPOSED
    max_steps = 18

    def sample(self, rng: random.Random) -> Params:
        doc = content.draw_document(rng)
        return {"doc": doc, "old": rng.choice(content.unique_words(doc)), "new": rng.choice(content.REPLACEMENTS),
                "flag": rng.choice(sorted(FLAGS))}

    def goal(self, params: Params) -> str:
        return (f"Replace \"{params['old']}\" with \"{params['new']}\", then make \"{params['new']}\" "
                f"{FLAGS[params['flag']][1]}.")

    def validate(self, state: Params, params: Params) -> Verdict:
        blocks = state.get("blocks", [])
        text = "\n".join(b["text"] for b in content.paragraphs(blocks))
        expected = content.replace_word(content.document_text(params["doc"]), params["old"], params["new"])
        if text != expected:
            return 0.0, False, "the text is not the original with the word replaced"
        return word_formatted(blocks, params["new"], params["flag"])

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from replace_all(obs, ui, params["old"], params["new"])
        yield from apply_to(obs, ui, params["new"], FLAGS[params["flag"]][0])
        yield "finished()"


@register
class HeaderTable(WordTask):
    template = "header_table"
    difficulty = COMPOSED
    max_steps = 22

    def sample(self, rng: random.Random) -> Params:
        headers = rng.sample(content.HEADERS, rng.randint(2, 4))
        return {"doc": content.draw_document(rng), "rows": rng.randint(2, 4), "headers": headers}

    def goal(self, params: Params) -> str:
        names = ", ".join(params["headers"])
        return (f"At the end of the document, add a table with {params['rows']} rows and {len(params['headers'])} "
                f"columns whose first row reads {names}.")

    def validate(self, state: Params, params: Params) -> Verdict:
        found = content.trailing_tables(state.get("blocks", []))
        ok = len(found) == 1 and content.shape(found[0]) == (params["rows"], len(params["headers"]))
        ok = ok and found[0]["rows"][0] == params["headers"]
        return verdict(ok, "table filled", f"tables at the end: {[t['rows'] for t in found]}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from to_end(obs)
        obs = yield from insert_table(obs, ui, params["rows"], len(params["headers"]))
        yield from type_cells(obs, params["headers"])
        yield "finished()"


@register
class AppendAndSave(WordTask):
    template = "append_and_save"
    difficulty = COMPOSED
    max_steps = 18

    def sample(self, rng: random.Random) -> Params:
        doc = content.draw_document(rng, paragraphs=3)
        title = rng.choice([t for t in sorted(content.CORPUS) if t != doc["title"]])
        extra = rng.choice(content.CORPUS[title])
        return {"doc": doc, "sentence": extra, "name": rng.choice(content.FILE_NAMES),
                "format": rng.choice(sorted(content.FORMATS))}

    def goal(self, params: Params) -> str:
        return (f"Add the sentence \"{params['sentence']}\" as a new last paragraph, then save the document as "
                f"\"{params['name']}\" in the {content.FORMATS[params['format']]} format.")

    def validate(self, state: Params, params: Params) -> Verdict:
        blocks = content.saved_blocks(state, f"{params['name']}.{params['format']}")
        if blocks is None:
            return 0.0, False, f"no saved file {params['name']}.{params['format']}"
        texts = [b["text"].strip() for b in content.paragraphs(blocks)]
        expected = [params["doc"]["title"], *params["doc"]["paragraphs"], params["sentence"]]
        return verdict(texts == expected, "appended and saved", f"saved paragraphs: {texts}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from to_end(obs)
        obs = yield typed("\n" + params["sentence"])
        yield from save_as(obs, ui, params["name"], params["format"])
        yield "finished()"


@register
class PageLayout(WordTask):
    template = "page_layout"
    difficulty = COMPOSED
    max_steps = 14

    def sample(self, rng: random.Random) -> Params:
        return {"doc": content.draw_document(rng), "paper": rng.choice(["A5", "Letter", "Legal"]),
                "orientation": rng.choice(["portrait", "landscape"]), "margins": rng.choice([1, 1.5, 2.5, 3, 3.5])}

    def goal(self, params: Params) -> str:
        return (f"Lay out the page as {params['paper']} paper in {params['orientation']} orientation with "
                f"{params['margins']:g} cm margins.")

    def validate(self, state: Params, params: Params) -> Verdict:
        page = state.get("pageSetup", {})
        wrong = {k: page.get(k) for k in ("paper", "orientation", "margins") if page.get(k) != params[k]}
        return verdict(not wrong, "page laid out", f"still different: {wrong}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        yield from page_setup(obs, ui, params["paper"], params["orientation"], params["margins"])
        yield "finished()"
