"""Documents for the word processor's tasks, and pure readers of the document state checkers share.

A document is a title and a few short paragraphs drawn from a small corpus (short enough that the whole text
fits in the observation's document value). `state["blocks"]` (see `docmodel.js`) lists paragraphs — `{type:
"paragraph", style, align, list, text, runs}` with runs `{text, bold, italic, underline, strike, size}` — and
tables `{type: "table", rows, header}`.
"""

from __future__ import annotations

import random
import re
from typing import Any

Block = dict[str, Any]

CORPUS: dict[str, tuple[str, ...]] = {
    "Quarterly Report": (
        "Sales grew strongly in the northern region this quarter.",
        "Costs fell because the warehouse moved closer to customers.",
        "Hiring slowed while engineers finished the platform migration.",
        "Complaints dropped after support hours were extended.",
        "Next quarter focuses on a product launch in three markets.",
    ),
    "Garden Club Newsletter": (
        "Spring planting starts once the frost has passed.",
        "Members may borrow tools from the shed behind the library.",
        "Our tomato contest returns with a prize for the heaviest fruit.",
        "Volunteers are needed to water the community beds in July.",
        "Compost workshops run every second Saturday morning.",
    ),
    "Trip to the Coast": (
        "We left early to avoid traffic on the mountain pass.",
        "The harbour town was quiet except for the fishing boats.",
        "Lunch was grilled sardines at a cafe near the lighthouse.",
        "Afternoon winds made the ferry crossing rather bumpy.",
        "Sunset from the cliffs was the highlight of the journey.",
    ),
    "Kitchen Renovation Plan": (
        "Cabinets will be replaced with oak units and soft hinges.",
        "Plumbers arrive first to move the sink under the window.",
        "Electricians add four sockets along the new counter.",
        "Flooring is ceramic tile in a pale grey pattern.",
        "Painting finishes the project during the final week.",
    ),
    "Team Offsite Agenda": (
        "Breakfast is served in the lobby from eight o'clock.",
        "Morning sessions review goals and the quarterly roadmap.",
        "Workshops after lunch cover planning and estimation.",
        "Dinner is booked at a riverside restaurant downtown.",
        "Buses return everyone to the office on Friday afternoon.",
    ),
    "Library Volunteer Guide": (
        "Shifts last three hours and begin at the front desk.",
        "Returned books are sorted by shelf before reshelving.",
        "Children's story time needs two helpers every Tuesday.",
        "Donations are checked for damage before cataloguing.",
        "Questions about membership go to the head librarian.",
    ),
    "Bicycle Maintenance Notes": (
        "Check tyre pressure before every longer ride.",
        "Clean the chain monthly and apply a light lubricant.",
        "Brake pads wear faster in wet weather conditions.",
        "Gears should shift smoothly without any rattling.",
        "Store the frame indoors during the winter months.",
    ),
    "Science Fair Summary": (
        "Thirty students presented projects in the gymnasium.",
        "Judges praised the experiment on plant growth and light.",
        "First prize went to a model of a wind turbine.",
        "Parents toured the exhibits during the evening session.",
        "Next year the fair moves to the new science building.",
    ),
}
SECTIONS = ("Background", "Findings", "Details", "Summary", "Outlook", "Overview")
FORMATS = {
    "odt": "ODF Text Document (.odt)",
    "docx": "Word Document (.docx)",
    "rtf": "Rich Text Format (.rtf)",
    "txt": "Plain Text (.txt)",
    "pdf": "PDF Document (.pdf)",
    "html": "HTML Page (.html)",
}
FILE_NAMES = ("report", "summary", "notes", "draft", "final_copy", "minutes", "letter", "overview")
REPLACEMENTS = ("quickly", "gladly", "shelter", "meadow", "harvest", "lantern", "compass", "voyage")
HEADERS = ("Item", "Owner", "Status", "Date", "Cost", "Notes", "Place", "Count")
LIST_ITEMS = ("Book the venue", "Send invitations", "Order supplies", "Confirm the budget", "Print the schedule",
              "Call the caterer", "Update the website", "Collect feedback")  # fmt: skip


def draw_document(rng: random.Random, paragraphs: int = 4, sections: bool = False) -> dict[str, Any]:
    """`{"title", "paragraphs": [...]}`; with `sections`, two section-heading lines sit between paragraphs."""
    title = rng.choice(sorted(CORPUS))
    body = rng.sample(CORPUS[title], paragraphs)
    if sections:
        text = " ".join((title, *body)).lower()
        first, second = rng.sample([s for s in SECTIONS if s.lower() not in text], 2)
        half = paragraphs // 2
        body = [first, *body[:half], second, *body[half:]]
    return {"title": title, "paragraphs": body}


def blocks_of(document: dict[str, Any]) -> list[Block]:
    """The `setState` blocks of a drawn document (every line a normal paragraph)."""
    return [{"type": "paragraph", "text": line} for line in (document["title"], *document["paragraphs"])]


def document_text(document: dict[str, Any]) -> str:
    return "\n".join((document["title"], *document["paragraphs"]))


def unique_words(document: dict[str, Any], lines: list[str] | None = None) -> list[str]:
    """Words (5+ letters) from `lines` (default: the paragraphs) that occur exactly once in the whole document
    even as parts of other words, so a plain case-insensitive search finds only them."""
    text = document_text(document).lower()
    words = []
    for line in lines if lines is not None else document["paragraphs"]:
        for word in re.findall(r"[A-Za-z]{5,}", line):
            if text.count(word.lower()) == 1 and word not in words:
                words.append(word)
    return words


def prefix_of(line: str, document: dict[str, Any]) -> str:
    """The shortest run of leading words of `line` that occurs once in the document (what a solver searches)."""
    text = document_text(document).lower()
    words = line.split()
    for n in range(1, len(words) + 1):
        prefix = " ".join(words[:n])
        if text.count(prefix.lower()) == 1:
            return prefix
    return line


def paragraphs(blocks: list[Block]) -> list[Block]:
    """The non-empty paragraph blocks."""
    return [b for b in blocks if b.get("type") == "paragraph" and b.get("text", "").strip()]


def paragraph_starting(blocks: list[Block], start: str) -> Block | None:
    for block in paragraphs(blocks):
        if block["text"].strip().startswith(start):
            return block
    return None


def char_formats(block: Block) -> list[dict[str, Any]]:
    """The run formatting of every character of a paragraph."""
    out = []
    for run in block.get("runs", []):
        out.extend([run] * len(run["text"]))
    return out


def span_has(block: Block, word: str, flag: str, value: Any = True) -> bool:
    """Whether every character of the first `word` in the block has `flag == value`."""
    index = block["text"].find(word)
    formats = char_formats(block)
    if index < 0 or len(formats) != len(block["text"]):
        return False
    return all(f.get(flag) == value for f in formats[index : index + len(word)])


def others_lack(block: Block, word: str, flag: str, value: Any = True) -> bool:
    """Whether some letter of the block outside the first `word` does not have `flag == value`."""
    index = block["text"].find(word)
    formats = char_formats(block)
    outside = [f for i, f in enumerate(formats) if not index <= i < index + len(word) and block["text"][i].isalpha()]
    return any(f.get(flag) != value for f in outside)


def replace_word(text: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![A-Za-z]){re.escape(old)}(?![A-Za-z])", new, text)


def saved_blocks(state: dict[str, Any], name: str) -> list[Block] | None:
    entry = state.get("saved", {}).get(name)
    return entry.get("blocks") if isinstance(entry, dict) else None


def tables(blocks: list[Block]) -> list[Block]:
    return [b for b in blocks if b.get("type") == "table"]


def shape(table: Block) -> tuple[int, int]:
    """(rows, columns) of a table block."""
    rows = table.get("rows", [])
    return len(rows), len(rows[0]) if rows else 0


def trailing_tables(blocks: list[Block]) -> list[Block]:
    """The tables after the document's last non-empty paragraph."""
    last = max((i for i, b in enumerate(blocks) if b.get("type") == "paragraph" and b["text"].strip()), default=-1)
    return [b for b in blocks[last + 1 :] if b.get("type") == "table"]
