"""The documentation site (DocOS): pages follow the UI seed, search ranks, links resolve, and a browser reads it.

Most tests call `site.render` directly (no server, no browser). The last group mounts the site on an
`AppServer` of its own and drives it through `BrowserEnv` in headless Chromium: the search form, a result link,
the observation budget and the visited URLs that DocOS's TUI metric reads.
"""

from __future__ import annotations

import doctest
import re
from html import escape
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import pytest

from raygent.environments.web.docs import markup, search, urls
from raygent.environments.web.docs.markup import expand
from raygent.environments.web.docs.model import PLACEHOLDER
from raygent.environments.web.docs.pages import commands_of, site
from raygent.environments.web.docs.search import Document, SearchIndex
from raygent.environments.web.docs.site import render, route
from raygent.environments.web.docs.urls import (
    SEARCH,
    app_path,
    command_path,
    procedure_path,
    target_url_inclusion,
    visited_docs,
)
from raygent.environments.web.registry import app_guides
from raygent.environments.web.ui import randomize

pytestmark = pytest.mark.browser

SEEDS = (0, 3, 11)
GUIDES = app_guides()
"""app -> its guide, as the site finds them (each app's `WebApp.guide`)."""
NAV_LINKS = 1 + len(GUIDES)
"""Links in every page's header (all applications, then one per app) before the page's own."""
MAX_LINE = 230
"""A little under the 240 characters `observe.js` keeps of one text line."""


class _Links(HTMLParser):
    """Collects what a page points at: `<a href>`, `<link href>`, `<form action>` and the visible text."""

    def __init__(self) -> None:
        super().__init__()
        self.anchors: list[str] = []
        self.resources: list[str] = []
        self.forms: list[str] = []
        self.h1: list[str] = []
        self.text: list[str] = []
        self._in_h1 = False
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a":
            self.anchors.append(values["href"] or "")
        elif tag == "link":
            self.resources.append(values["href"] or "")
        elif tag == "form":
            self.forms.append(values["action"] or "")
        elif tag == "h1":
            self._in_h1 = True
        elif tag in ("head", "title"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "h1":
            self._in_h1 = False
        elif tag in ("head", "title"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if self._in_h1:
            self.h1.append(data)
        if not self._skip:
            self.text.append(data)


def _get(url: str, seed: int | None = None) -> tuple[int, str, str]:
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    if seed is None:
        seed = int(query.get("seed", ["0"])[0])
    response = render(parts.path, query, seed)
    assert response is not None, url
    status, content_type, body = response
    return status, content_type, body.decode("utf-8")


def _parse(body: str) -> _Links:
    parser = _Links()
    parser.feed(body)
    return parser


def _top(query: str, seed: int, n: int = 1, app: str | None = None) -> list[str]:
    return [key for key, _ in site(seed).index.search(query, limit=400) if not app or key.startswith(app_path(app))][:n]


# ---------------------------------------------------------------- pages follow the seed


@pytest.mark.parametrize("seed", SEEDS)
def test_every_command_page_names_the_seeds_menu_label_and_shortcut(seed: int) -> None:
    for app in GUIDES:
        spec = randomize(app, commands_of(app), seed)
        for command_id, placed in spec.commands.items():
            status, _, body = _get(command_path(app, command_id), seed)
            assert status == 200
            parsed = _parse(body)
            assert "".join(parsed.h1) == placed.label
            assert f"open the “<b>{escape(placed.menu)}</b>” menu" in body
            assert f"Choose “<b>{escape(placed.label)}</b>”" in body
            if placed.shortcut:
                assert "<kbd>" in body and "None: use the menu" not in body
            else:
                assert "None: use the menu" in body


def test_a_how_to_page_changes_with_the_seed_and_names_no_other_layout() -> None:
    commands = commands_of("image_editor")
    labels = {seed: randomize("image_editor", commands, seed).label("export") for seed in range(12)}
    assert len(set(labels.values())) > 1, "the randomizer never changed the export label"
    export = next(c for c in commands if c.id == "export")
    every_label = {export.label, *export.alternatives}
    for seed, label in labels.items():
        _, _, body = _get(procedure_path("image_editor", "export-an-image"), seed)
        assert f"“<b>{escape(label)}</b>”" in body
        for other in every_label - {label}:
            assert escape(other) not in body, f"seed {seed}: the page names {other!r}, a label of another layout"


def test_guides_refer_only_to_real_commands_and_shortcuts() -> None:
    for app, guide in GUIDES.items():
        ids = {c.id: c for c in commands_of(app)}
        assert set(guide.commands) <= set(ids), f"{app}: help for unknown commands"
        for text in guide.texts():
            for match in PLACEHOLDER.finditer(text):
                assert match[2] in ids, f"{app}: {match[0]} names no command"
                if match[1] == "key":
                    assert ids[match[2]].shortcut, f"{app}: {match[0]} has no shortcut"
        assert len(guide.procedures) >= 3, f"{app}: fewer than three procedures"
        slugs = [p.slug for p in guide.procedures]
        assert len(set(slugs)) == len(slugs), f"{app}: two procedures share a slug"


def test_no_guide_sentence_is_cut_in_the_observation() -> None:
    """`observe.js` clips one text line at 240 characters: no guide sentence may get there under any seed."""
    for app, guide in GUIDES.items():
        commands = commands_of(app)
        for seed in range(40):
            spec = randomize(app, commands, seed)
            for text in guide.texts():
                assert len(expand(text, spec).plain) <= MAX_LINE, f"{app}, seed {seed}: {text[:60]}…"


# ---------------------------------------------------------------- search


@pytest.mark.parametrize("seed", (0, 7))
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("export an image as png", procedure_path("image_editor", "export-an-image")),
        ("replace text in a file", procedure_path("code_editor", "replace-text-in-a-file")),
        ("reorder slides", procedure_path("slide_editor", "reorder-slides")),
        ("subtitle delay earlier", command_path("media_player", "subtitle_delay")),
        ("page orientation landscape margins", procedure_path("word_processor", "set-up-the-page")),
        ("go to a time and pause", procedure_path("media_player", "pause-at-a-time")),
        ("layer opacity percent", command_path("image_editor", "layer_opacity")),
    ],
)
def test_search_ranks_the_right_page_first(query: str, expected: str, seed: int) -> None:
    assert _top(query, seed) == [expected]
    status, _, body = _get(f"{SEARCH}?q={query.replace(' ', '+')}&seed={seed}")
    assert status == 200
    first = _parse(body).anchors[NAV_LINKS]
    assert urlsplit(first).path == expected


def test_bm25_prefers_rare_terms_and_titles() -> None:
    index = SearchIndex(
        [
            Document("a", "Export an image", "Write the image to a file."),
            Document("b", "Rename a layer", "Give the layer a new name; the image keeps its pixels."),
            Document("c", "Image size", "Change the canvas of the image."),
        ]
    )
    assert [key for key, _ in index.search("export image")] == ["a", "c", "b"]
    assert index.search("rename")[0][0] == "b" and len(index.search("rename")) == 1
    assert index.search("zebra") == [] and index.search("the of a") == []


def test_doctests_of_the_docs_modules() -> None:
    for module in (markup, search, urls):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_search_finds_a_command_by_the_label_this_seed_shows() -> None:
    commands = commands_of("code_editor")
    found = 0
    for seed in range(1, 9):
        label = randomize("code_editor", commands, seed).label("replace")
        found += command_path("code_editor", "replace") in _top(label, seed, n=3, app="code_editor")
    assert found == 8


def test_search_page_without_query_without_hits_and_per_app() -> None:
    status, _, body = _get(f"{SEARCH}?seed=2")
    assert status == 200 and "Type what you want to do" in body
    status, _, body = _get(f"{SEARCH}?q=zzyzx+qwv&seed=2")
    assert status == 200 and "No page matches" in body
    status, _, body = _get(f"{SEARCH}?q=save&app=slide_editor&seed=2")
    results = _parse(body).anchors[NAV_LINKS:]
    assert results and all(urlsplit(a).path.startswith(app_path("slide_editor")) for a in results)


# ---------------------------------------------------------------- routes, 404s, links


@pytest.mark.parametrize(
    "path",
    [
        "/docs/nope",
        "/docs/code_editor/commands/nope",
        "/docs/nope/commands/save",
        "/docs/code_editor/howto/x",
        "/docs/media_player/commands/",
        "/docs/style.css/x",
    ],
)
def test_unknown_pages_are_404_with_a_way_back(path: str) -> None:
    status, content_type, body = _get(path, seed=0)
    assert status == 404 and content_type.startswith("text/html")
    assert 'role="search"' in body and "Page not found" in body


def test_paths_outside_the_site_are_not_answered_and_route_reads_the_seed() -> None:
    assert render("/code_editor/index.html", {}, 0) is None
    assert render("/docsearch", {}, 0) is None
    assert route("", {})[0] == 200
    status, _, body = route("code_editor/", {"seed": ["4"]})
    assert status == 200 and 'href="/docs/code_editor/commands/save?seed=4"' in body.decode()
    assert route("code_editor/", {"seed": ["-1"]})[0] == 400
    assert route("code_editor/", {"seed": ["x"]})[0] == 400
    status, content_type, _ = route("style.css", {})
    assert status == 200 and content_type.startswith("text/css")


@pytest.mark.parametrize("seed", (0, 5))
def test_every_link_on_every_page_resolves_and_keeps_the_seed(seed: int) -> None:
    pages = [*site(seed).pages, f"{SEARCH}?q=layer&seed={seed}", f"{SEARCH}?seed={seed}", "/docs/nope"]
    checked: set[str] = set()
    for path in pages:
        url = path if "?" in path else f"{path}?seed={seed}"
        parsed = _parse(_get(url)[2])
        assert len(parsed.h1) >= 1, url
        assert parsed.forms == [SEARCH], url
        for target in parsed.anchors + parsed.resources:
            assert not re.match(r"^(?:[a-z]+:)?//", target), f"{url}: external link {target}"
            if target.startswith("data:"):
                continue
            if not target.endswith(".css"):
                assert parse_qs(urlsplit(target).query)["seed"] == [str(seed)], f"{url}: {target} loses the seed"
            if target not in checked:
                checked.add(target)
                assert _get(target, seed)[0] == 200, f"{url} links to {target}, which does not resolve"
    assert len(checked) > len(site(seed).pages) - 1


def test_pages_fit_the_observation_budget() -> None:
    """The observation keeps 6,000 characters of text (`observe.js`): no page may lose its end to the cut."""
    for path in site(0).pages:
        text = " ".join(" ".join(_parse(_get(f"{path}?seed=0")[2]).text).split())
        assert len(text) < 5000, f"{path}: {len(text)} characters of text"


def test_target_url_inclusion_reads_visited_urls() -> None:
    visited = [
        "http://127.0.0.1:5000/code_editor/index.html?seed=2",
        "http://127.0.0.1:5000/docs/search?seed=2&q=replace",
        "http://127.0.0.1:5000/docs/code_editor/howto/replace-text-in-a-file?seed=2",
        "http://127.0.0.1:5000/docs/search?seed=2&q=save",
    ]
    assert visited_docs(visited) == ["/docs/search", "/docs/code_editor/howto/replace-text-in-a-file"]
    assert target_url_inclusion(visited, [procedure_path("code_editor", "replace-text-in-a-file")])
    assert not target_url_inclusion(visited, [command_path("code_editor", "replace")])


# ---------------------------------------------------------------- in the browser, through BrowserEnv


@pytest.fixture(scope="module")
def docs_env():
    """One `BrowserEnv` (the process's shared Chromium) on a private `AppServer` with the site mounted."""
    from raygent.environments.web.docs.site import mount
    from raygent.environments.web.env import BrowserEnv
    from raygent.environments.web.server import AppServer

    server = AppServer().start()
    mount(server)
    env = BrowserEnv(app="code_editor", server=server, step_timeout_s=90.0, reset_timeout_s=120.0)
    yield env, server
    env.close()
    server.stop()


def test_an_agent_searches_the_docs_and_reads_the_seeds_labels(docs_env) -> None:
    from raygent.environments.web.observe import find

    env, server = docs_env
    env.reset(options={"task": "code_editor/replace_save/1@3"})
    obs, _, _, _, _ = env.step(f'goto("{server.origin}/docs/?seed=3")')
    assert obs["last_action_error"] == "" and urlsplit(obs["url"]).path == "/docs/"
    box = find(obs["text"], "Search the documentation", "searchbox")
    obs, _, _, _, _ = env.step(f'type({box}, "replace text in a file\\n")')
    assert urlsplit(obs["url"]).path == SEARCH and parse_qs(urlsplit(obs["url"]).query)["seed"] == ["3"]
    result = find(obs["text"], "Replace text in a file — Codex Studio", "link")
    obs, _, _, _, info = env.step(f"click({result})")
    spec = randomize("code_editor", commands_of("code_editor"), 3)
    assert f"“{spec.label('replace')}”" in obs["text"] and f"“{spec.menu_of('replace')}”" in obs["text"]
    assert target_url_inclusion(info["visited_urls"], [procedure_path("code_editor", "replace-text-in-a-file")])
    assert not info["blocked_requests"]


def test_the_longest_pages_are_not_cut_in_the_observation(docs_env) -> None:
    env, server = docs_env
    env.reset(options={"task": "code_editor/open_file/2@5"})
    longest = sorted(site(5).pages.values(), key=lambda p: len(p.main), reverse=True)[:3]
    for page in [*longest, *(site(5).pages[app_path(app)] for app in GUIDES)]:
        obs, _, _, _, _ = env.step(f'goto("{server.origin}{page.path}?seed=5")')
        assert obs["last_action_error"] == "", page.path
        assert "not shown" not in obs["text"] and "observation truncated" not in obs["text"], page.path
        assert f'heading "{page.main[4 : page.main.index("</h1>")]}"'.replace("&amp;", "&") in obs["text"]
