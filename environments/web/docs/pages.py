"""Every page of the documentation for one UI seed, and the search index over them.

`site(seed)` builds (and caches) the index page, and per app with a guide (the suite's five and any registered
app's, `registry.app_guides`) an overview, one how-to page per menu command and one per procedure of its guide,
all written against `randomize(app, commands, seed)`: the menu, label and shortcut a page names are the ones the
app shows under that seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from raygent.environments.web.docs.layout import bullets, esc, link, section
from raygent.environments.web.docs.markup import expand, shortcut_text
from raygent.environments.web.docs.model import Guide, Procedure
from raygent.environments.web.docs.search import Document, SearchIndex
from raygent.environments.web.docs.urls import INDEX, app_path, command_path, procedure_path
from raygent.environments.web.registry import app_commands, app_guides
from raygent.environments.web.ui import Command, UISpec, randomize


@dataclass(frozen=True)
class Page:
    """One page: `main` is the HTML inside `<main>`; `text` the plain text the search index reads."""

    path: str
    title: str
    app: str | None
    summary: str
    main: str
    text: str
    breadcrumb: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Site:
    seed: int
    pages: dict[str, Page]
    index: SearchIndex
    nav: tuple[tuple[str, str], ...]


def commands_of(app: str) -> list[Command]:
    """The app's commands (`registry.app_commands`, as the app server reads them)."""
    return app_commands(app)


def _steps(texts: list[str], spec: UISpec) -> tuple[str, str]:
    rendered = [expand(text, spec) for text in texts]
    return bullets((r.html for r in rendered), ordered=True, css="steps"), " ".join(r.plain for r in rendered)


def _notes(texts: tuple[str, ...], spec: UISpec) -> tuple[str, str]:
    rendered = [expand(text, spec) for text in texts]
    return bullets(r.html for r in rendered), " ".join(r.plain for r in rendered)


def _command_link(guide: Guide, spec: UISpec, command_id: str, seed: int) -> str:
    placed = spec.commands[command_id]
    return f"{link(command_path(guide.app, command_id), seed, placed.label)} ({esc(placed.menu)} menu)"


def command_page(guide: Guide, spec: UISpec, command_id: str, seed: int) -> Page:
    placed = spec.commands[command_id]
    help_ = guide.commands.get(command_id)
    before, after, remarks = (help_.before, help_.after, help_.remarks) if help_ else ((), (), ())
    menu_steps = [f"In the menu bar, open the **{placed.menu}** menu.", f"Choose **{placed.label}**."]
    steps_html, steps_text = _steps([*before, *menu_steps, *after], spec)
    if placed.shortcut:
        key = shortcut_text(placed.shortcut)
        shortcut_html, shortcut_plain = f"<p>Press <kbd>{esc(key)}</kbd> instead of using the menu.</p>", key
    else:
        shortcut_html, shortcut_plain = "<p>None: use the menu.</p>", ""
    notes_html, notes_text = _notes(remarks, spec)
    used_in = [p for p in guide.procedures if command_id in p.commands()]
    related = [link(procedure_path(guide.app, p.slug), seed, p.title) for p in used_in]
    related.append(link(app_path(guide.app), seed, f"All {guide.product} commands and menus"))
    main = (
        f"<h1>{esc(placed.label)}</h1>"
        f'<p class="lead">{esc(guide.product)} · {esc(placed.menu)} menu</p><p>{esc(placed.doc)}</p>'
        + section("Steps", steps_html, "steps")
        + section("Keyboard shortcut", shortcut_html)
        + section("Notes", notes_html)
        + section("Related", bullets(related))
    )
    # The id's words are stable keywords whatever label the seed deals ("rename layer" for "Edit Layer Name…").
    keywords = command_id.replace("_", " ")
    words = (guide.product, guide.kind, keywords, placed.menu, placed.doc, steps_text, shortcut_plain, notes_text)
    text = " ".join(words)
    return Page(
        path=command_path(guide.app, command_id),
        title=f"{placed.label} — {guide.product}",
        app=guide.app,
        summary=f"{placed.menu} ▸ {placed.label}: {placed.doc}",
        main=main,
        text=text,
        breadcrumb=((app_path(guide.app), guide.product),),
    )


def procedure_page(guide: Guide, spec: UISpec, procedure: Procedure, seed: int) -> Page:
    steps_html, steps_text = _steps(list(procedure.steps), spec)
    notes_html, notes_text = _notes(procedure.remarks, spec)
    used = bullets(_command_link(guide, spec, cid, seed) for cid in procedure.commands())
    main = (
        f"<h1>{esc(procedure.title)}</h1>"
        f'<p class="lead">{esc(guide.product)} · how-to</p><p>{esc(procedure.summary)}</p>'
        + section("Steps", steps_html, "steps")
        + section("Notes", notes_html)
        + section("Commands used", used)
    )
    return Page(
        path=procedure_path(guide.app, procedure.slug),
        title=f"{procedure.title} — {guide.product}",
        app=guide.app,
        summary=procedure.summary,
        main=main,
        text=f"{guide.product} {guide.kind} {procedure.summary} {steps_text} {notes_text}",
        breadcrumb=((app_path(guide.app), guide.product),),
    )


def overview_page(guide: Guide, spec: UISpec, seed: int) -> Page:
    parts, plain = [], [guide.summary]
    for part in guide.overview:
        rendered = [expand(p, spec) for p in part.paragraphs]
        parts.append(section(part.heading, "".join(f"<p>{r.html}</p>" for r in rendered)))
        plain += [part.heading, *(r.plain for r in rendered)]
    howtos = bullets(link(procedure_path(guide.app, p.slug), seed, p.title) for p in guide.procedures)
    menus = []
    for menu in spec.menus:
        ids = [cid for cid, placed in spec.commands.items() if placed.menu == menu]
        if ids:
            items = (link(command_path(guide.app, cid), seed, spec.commands[cid].label) for cid in ids)
            menus.append(f"<h3>{esc(menu)} menu</h3>{bullets(items, css='menu')}")
    keys = [
        f"<kbd>{esc(shortcut_text(p.shortcut))}</kbd>: {esc(p.label)}" for p in spec.commands.values() if p.shortcut
    ]
    main = (
        f"<h1>{esc(guide.product)}</h1><p class=\"lead\">The {esc(guide.kind)}</p><p>{esc(guide.summary)}</p>"
        + "".join(parts)
        + section("How-to guides", howtos, "howto")
        + section("Menus", "".join(menus), "menus")
        + section("Keyboard shortcuts", bullets(keys), "shortcuts")
    )
    return Page(
        path=app_path(guide.app),
        title=f"{guide.product} ({guide.kind})",
        app=guide.app,
        summary=guide.summary,
        main=main,
        text=" ".join([guide.kind, *plain]),
    )


def index_page(seed: int) -> Page:
    apps = bullets(
        f"{link(app_path(g.app), seed, g.product)} — the {esc(g.kind)}: {esc(g.summary)}" for g in app_guides().values()
    )
    main = (
        "<h1>Software documentation</h1>"
        "<p>How-to guides for the applications: where each command is in the menus, its keyboard shortcut, "
        "and step-by-step procedures. Search with the box above, or start from an application.</p>"
        + section("Applications", apps)
    )
    return Page(path=INDEX, title="All applications", app=None, summary="", main=main, text="")


@lru_cache(maxsize=16)
def site(seed: int) -> Site:
    """All pages for `seed`, keyed by path, with their search index (the index page is not searchable)."""
    pages: dict[str, Page] = {INDEX: index_page(seed)}
    for guide in app_guides().values():
        spec = randomize(guide.app, commands_of(guide.app), seed)
        pages[app_path(guide.app)] = overview_page(guide, spec, seed)
        for procedure in guide.procedures:
            page = procedure_page(guide, spec, procedure, seed)
            pages[page.path] = page
        for command_id in spec.commands:
            page = command_page(guide, spec, command_id, seed)
            pages[page.path] = page
    index = SearchIndex([Document(p.path, p.title, p.text) for p in pages.values() if p.path != INDEX])
    nav = tuple((app_path(g.app), g.product) for g in app_guides().values())
    return Site(seed=seed, pages=pages, index=index, nav=nav)
