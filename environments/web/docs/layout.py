"""The HTML around every documentation page: head, navigation, the search form, and small element helpers.

Pages are plain HTML with one same-origin stylesheet and no script. The search form is a real GET form
(`/docs/search?q=...&seed=N`), so it works by typing into the search box and pressing Enter. Markup is kept
flat where the agent reads it: the observation builder turns an element without inner structure into one
text line, so a step is a list item of plain text with inline `<b>`/`<kbd>` only.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

from raygent.environments.web.docs.urls import INDEX, SEARCH, STYLESHEET, href

SITE_NAME = "Software documentation"


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def link(path: str, seed: int, text: str, **query: str) -> str:
    """An `<a>` to a documentation page that carries the seed."""
    return f'<a href="{esc(href(path, seed, **query))}">{esc(text)}</a>'


def bullets(items: Iterable[str], ordered: bool = False, css: str = "") -> str:
    """A list of already-rendered HTML items (empty string when there are none).

    An item without a link is wrapped in a `<span>`, so that the observation shows it as one text line rather
    than one line per inline `<b>` or `<kbd>`.
    """
    rows = "".join(f"<li>{item}</li>" if "<a " in item else f"<li><span>{item}</span></li>" for item in items)
    if not rows:
        return ""
    tag = "ol" if ordered else "ul"
    klass = f' class="{css}"' if css else ""
    return f"<{tag}{klass}>{rows}</{tag}>"


def section(heading: str, body: str, anchor: str = "") -> str:
    """An `<h2>` and its content (nothing when the content is empty)."""
    if not body:
        return ""
    ident = f' id="{esc(anchor)}"' if anchor else ""
    return f"<section{ident}><h2>{esc(heading)}</h2>{body}</section>"


def search_form(seed: int, query: str = "") -> str:
    return (
        f'<form role="search" action="{SEARCH}" method="get" class="search">'
        f'<input type="search" name="q" value="{esc(query)}" aria-label="Search the documentation" '
        f'placeholder="Search the documentation">'
        f'<input type="hidden" name="seed" value="{seed}">'
        f'<button type="submit">Search</button></form>'
    )


def document(
    title: str,
    seed: int,
    main: str,
    nav: Sequence[tuple[str, str]],
    query: str = "",
    breadcrumb: Sequence[tuple[str, str]] = (),
) -> str:
    """A whole page. `nav` and `breadcrumb` are `(path, text)` links; the breadcrumb ends at the page's parent."""
    nav_links = "".join(link(path, seed, text) for path, text in [(INDEX, "All applications"), *nav])
    trail = ""
    if breadcrumb:
        trail = f'<nav aria-label="Breadcrumb" class="crumbs">{"".join(link(p, seed, t) for p, t in breadcrumb)}</nav>'
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)} — {SITE_NAME}</title>"
        '<link rel="icon" href="data:,">'
        f'<link rel="stylesheet" href="{STYLESHEET}"></head><body>'
        f'<header><nav aria-label="Applications" class="apps">{nav_links}</nav>{search_form(seed, query)}</header>'
        f"<main>{trail}{main}</main>"
        f"<footer>These pages describe the menus of UI layout {seed}.</footer></body></html>"
    )
