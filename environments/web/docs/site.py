"""The documentation site as a pure function of (path, query, seed), and its mount on the app server.

`render("/docs/...", query, seed)` returns `(status, content type, body)`: 200 with the page, 404 with a
"not found" page (that still has the search box) for a path under `/docs/` that names no page, and None for a
path outside `/docs`, which is not the site's to answer. `route(subpath, query)` adapts it to
`AppServer.add_route`'s handler signature (the path below the prefix; the seed read from `?seed=N`, 0 when
absent, 400 when not a non-negative integer), and `mount(server)` adds that route at `/docs/`.

Paths: `/docs/` (index), `/docs/search?q=...&seed=N[&app=...]`, `/docs/<app>/` (overview),
`/docs/<app>/commands/<command id>`, `/docs/<app>/howto/<slug>`, `/docs/style.css`.
"""

from __future__ import annotations

from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from raygent.environments.web.docs.layout import bullets, document, esc, link, section
from raygent.environments.web.docs.pages import Page, Site, site
from raygent.environments.web.docs.urls import INDEX, PREFIX, SEARCH, STYLESHEET, app_path
from raygent.environments.web.registry import app_guides

Response = tuple[int, str, bytes]
HTML = "text/html; charset=utf-8"
CSS = "text/css; charset=utf-8"
MAX_RESULTS = 10
MAX_QUERY_CHARS = 200
_STYLE = (Path(__file__).resolve().parent / "style.css").read_bytes()


def _first(query: dict[str, list[str]], key: str) -> str:
    values = query.get(key) or [""]
    return values[0].strip()


def _html(status: int, body: str) -> Response:
    return int(status), HTML, body.encode("utf-8")


def _page(current: Site, page: Page, query: str = "") -> Response:
    body = document(page.title, current.seed, page.main, current.nav, query=query, breadcrumb=page.breadcrumb)
    return _html(HTTPStatus.OK, body)


def _search(current: Site, query: dict[str, list[str]]) -> Response:
    text = _first(query, "q")[:MAX_QUERY_CHARS]
    app = _first(query, "app")
    seed = current.seed
    if not text:
        main = "<h1>Search</h1><p>Type what you want to do into the search box, e.g. “export an image”.</p>"
        return _html(HTTPStatus.OK, document("Search", seed, main, current.nav))
    hits = [
        current.pages[key]
        for key, _ in current.index.search(text, limit=len(current.pages))
        if not app or current.pages[key].app == app
    ][:MAX_RESULTS]
    guides = app_guides()
    scope = f" in {guides[app].product}" if app in guides else ""
    if hits:
        rows = (f'{link(p.path, seed, p.title)}<p class="summary">{esc(p.summary)}</p>' for p in hits)
        results = f"<p>{len(hits)} best matching pages{esc(scope)}:</p>" + bullets(rows, ordered=True, css="results")
    else:
        results = f"<p>No page matches{esc(scope)}. Try other words, or browse an application's page.</p>"
    main = f"<h1>Search results for “{esc(text)}”</h1>{results}"
    return _html(HTTPStatus.OK, document(f"Search: {text}", seed, main, current.nav, query=text))


def _not_found(current: Site, path: str) -> Response:
    guides = app_guides()
    main = (
        "<h1>Page not found</h1>"
        f"<p>There is no page at {esc(path)}. Search for it with the box above, or start from an application.</p>"
        + section("Applications", bullets(link(app_path(g.app), current.seed, g.product) for g in guides.values()))
    )
    return _html(HTTPStatus.NOT_FOUND, document("Page not found", current.seed, main, current.nav))


def render(path: str, query: dict[str, list[str]], seed: int) -> Response | None:
    """The response for `path` (the URL's path, starting `/docs`) under UI seed `seed` (see the module docstring)."""
    path = unquote(path)
    if path != PREFIX.rstrip("/") and not path.startswith(PREFIX):
        return None
    if path == STYLESHEET:
        return int(HTTPStatus.OK), CSS, _STYLE
    current = site(seed)
    if path in (PREFIX.rstrip("/"), INDEX, INDEX + "index.html"):
        return _page(current, current.pages[INDEX])
    if path.rstrip("/") == SEARCH:
        return _search(current, query)
    page = current.pages.get(path) or current.pages.get(path + "/")
    if page is None:
        return _not_found(current, path)
    return _page(current, page)


def route(subpath: str, query: dict[str, list[str]]) -> Response:
    """`AppServer.add_route` handler for the prefix `/docs/`: `subpath` is the path below it."""
    raw = _first(query, "seed") or "0"
    if not (raw.isascii() and raw.isdigit()):
        return int(HTTPStatus.BAD_REQUEST), "text/plain; charset=utf-8", b"seed must be a non-negative integer"
    response = render(PREFIX + subpath.lstrip("/"), query, int(raw))
    assert response is not None  # every path below the prefix is the site's
    return response


def mount(server: Any) -> None:
    """Serve the site at `/docs/` on an `AppServer` (anything with `add_route(prefix, handler)`)."""
    server.add_route(PREFIX, route)
