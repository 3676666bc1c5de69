"""DocOS's documentation tools and metrics (`environments/web/doc_tools.py`): BM25, dense (WordLlama) and hybrid
retrieval over a layout's pages,
what `open_doc` returns, lookups that fail or time out, the TUI halves and the scripted reader's reading."""

from __future__ import annotations

import time

import pytest

from raygent.environments.web.doc_tools import (
    NO_CONTEXT,
    OPEN_TOOL,
    SEARCH_TOOL,
    DocCall,
    DocIndex,
    DocSession,
    commands_run,
    dense_index,
    doc_index,
    followed,
    hybrid_index,
    page_text,
    parse_doc_call,
    read_command,
    read_spec,
    reader_pages,
    target_pages,
    tui_followed,
    tui_found,
)
from raygent.environments.web.docs.urls import command_path
from raygent.environments.web.server import ui_spec

APP = "media_player"
CMD = "speed"  # a command the layouts relabel and move to other menus


def _moved_layout() -> int:
    default = ui_spec(APP, 0).commands[CMD]
    for seed in range(1, 200):
        placed = ui_spec(APP, seed).commands[CMD]
        if placed.label != default.label and placed.menu != default.menu:
            return seed
    raise AssertionError(f"no layout moves {CMD}")


def test_search_ranks_the_command_page_of_the_layout_and_open_reads_its_steps() -> None:
    seed = _moved_layout()
    placed = ui_spec(APP, seed).commands[CMD]
    hits = doc_index(seed).search("Set the playback speed to 1.5×.", APP, k=3)
    assert command_path(APP, CMD) in [h.path for h in hits]
    assert all(h.path.startswith(f"/docs/{APP}/") for h in hits)
    text = page_text(doc_index(seed).page(command_path(APP, CMD)))
    assert f"open the “{placed.menu}” menu" in text and f"Choose “{placed.label}”" in text
    assert read_command(text) == (placed.menu, placed.label)
    # another layout's page says something else: the docs follow the layout
    assert read_command(page_text(doc_index(0).page(command_path(APP, CMD)))) != (placed.menu, placed.label)


def test_parse_doc_call_reads_both_tools_and_leaves_app_actions() -> None:
    assert parse_doc_call('search_docs("set the speed")') == DocCall(SEARCH_TOOL, "set the speed")
    assert parse_doc_call(" open_doc( 2 ) ") == DocCall(OPEN_TOOL, "2")
    assert parse_doc_call('open_doc("/docs/media_player/commands/mute")') == DocCall(
        OPEN_TOOL, "/docs/media_player/commands/mute"
    )
    for action in ("click(3)", 'type(4, "x")', "search_docs", "finished()"):
        assert parse_doc_call(action) is None


def test_session_opens_hits_by_rank_and_records_the_pages_opened() -> None:
    session = DocSession(seed=3, app=APP)
    listing = session.call(DocCall(SEARCH_TOOL, "shuffle random order"))
    assert listing.startswith("[1] ") and session.searches == 1
    first = session.last_hits[0].path
    page = session.call(DocCall(OPEN_TOOL, "1"))
    assert session.opened == [first] and page.splitlines()[0]
    assert session.call(DocCall(OPEN_TOOL, "9")).startswith("no result [9]")
    assert session.failures == 0


class _Broken:
    def search(self, query: str, app: str | None, k: int) -> list[object]:
        raise ConnectionError("index down")

    def page(self, path: str) -> object:
        raise ConnectionError("index down")


class _Slow:
    def search(self, query: str, app: str | None, k: int) -> list[object]:
        time.sleep(0.5)
        return []

    def page(self, path: str) -> object:
        return None


def test_a_failed_or_slow_lookup_answers_no_context_and_is_counted() -> None:
    session = DocSession(seed=0, app=APP, backend=_Broken())
    assert session.call(DocCall(SEARCH_TOOL, "mute")) == NO_CONTEXT
    assert session.call(DocCall(OPEN_TOOL, "/docs/media_player/commands/mute")) == NO_CONTEXT
    assert session.failures == 2 and session.opened == []
    slow = DocSession(seed=0, app=APP, backend=_Slow(), timeout_s=0.05)
    assert slow.call(DocCall(SEARCH_TOOL, "mute")) == NO_CONTEXT and slow.failures == 1


def _screen_with_menu(spec_menu: str, label: str) -> tuple[str, str]:
    closed = '[1] button "Media"\n[2] button "' + spec_menu + '"\n[3] button "Other"'
    opened = closed + '\nmenu "' + spec_menu + '"\n[9] menuitem "Decoy"\n[10] menuitem "' + label + '"'
    return closed, opened


def test_tui_followed_needs_the_documented_menu_then_label_or_the_shortcut() -> None:
    seed = _moved_layout()
    spec = ui_spec(APP, seed)
    placed = spec.commands[CMD]
    closed, opened = _screen_with_menu(placed.menu, placed.label)
    documented = [(closed, "click(2)"), (opened, "click(10)")]
    assert followed(documented, spec, CMD) and commands_run(documented, spec) == [CMD]
    assert tui_followed(documented, spec, [CMD]) == 1.0
    wrong_item = [(closed, "click(2)"), (opened, "click(9)")]
    assert not followed(wrong_item, spec, CMD) and commands_run(wrong_item, spec) == []
    label_only = [(opened, "click(10)")]
    assert not followed(label_only, spec, CMD)
    assert tui_followed(label_only, spec, [CMD, "shuffle"]) == 0.0
    by_name = [(closed, f'click_label("{placed.menu}")'), (opened, f'click_label("{placed.label.lower()}")')]
    assert followed(by_name, spec, CMD) and commands_run(by_name, spec) == [CMD]
    assert not followed([(closed, f'click_label("{placed.menu}")'), (opened, 'click_label("Decoy")')], spec, CMD)
    assert commands_run([(opened, 'click_label("Nowhere")')], spec) == []
    mute_key = spec.commands["mute"].shortcut
    assert mute_key and followed([(closed, f'hotkey("{mute_key}")')], spec, "mute")
    assert commands_run([(closed, f'hotkey("{mute_key}")')], spec) == ["mute"]


def test_tui_found_reads_pages_opened_and_doc_urls_visited() -> None:
    targets = target_pages(APP, ["mute"])
    assert targets == ["/docs/media_player/commands/mute"]
    assert tui_found(targets, [], targets)
    assert tui_found([], ["http://127.0.0.1:9/docs/media_player/commands/mute?seed=4"], targets)
    assert not tui_found(["/docs/media_player/commands/shuffle"], ["http://127.0.0.1:9/media_player/"], targets)


def test_the_reader_believes_what_the_pages_say_and_defaults_elsewhere() -> None:
    seed = _moved_layout()
    pages = reader_pages(seed, target_pages(APP, [CMD]))
    read = read_spec(APP, pages)
    truth, default = ui_spec(APP, seed), ui_spec(APP, 0)
    assert (read.menu_of(CMD), read.label(CMD)) == (truth.menu_of(CMD), truth.label(CMD))
    assert read.label("shuffle") == default.label("shuffle")
    assert read.menu_of(CMD) in read.menus


@pytest.mark.parametrize(
    ("ranker", "query"), [("bm25", ""), ("bm25", "the of and"), ("dense", ""), ("hybrid", "")]
)  # stop words alone are empty to BM25 only: an embedding of them is still a vector
def test_an_empty_query_finds_nothing(query: str, ranker: str) -> None:
    assert doc_index(0, ranker).search(query, APP) == []


def test_dense_and_hybrid_backends_rank_by_meaning_and_serve_a_session() -> None:
    seed = _moved_layout()
    # a query that shares no search term with the mute command's page: BM25 has nothing, embeddings find it
    query = "make it silent"
    assert command_path(APP, "mute") not in [h.path for h in doc_index(seed).search(query, APP, k=3)]
    for backend in (dense_index(seed), hybrid_index(seed)):
        hits = backend.search(query, APP, k=3)
        assert command_path(APP, "mute") in [h.path for h in hits] and all(h.score > 0 for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    session = DocSession(seed=seed, app=APP, backend=dense_index(seed))
    assert session.call(DocCall(SEARCH_TOOL, query)).startswith("[1] ")
    assert session.last_hits[0].path == command_path(APP, "mute") and session.failures == 0
    assert dense_index(seed) is doc_index(seed, "dense")  # built once per process and layout
    with pytest.raises(ValueError, match="ranker must be one of"):
        DocIndex(seed, "tfidf")
