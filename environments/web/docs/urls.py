"""The documentation site's URLs, and DocOS's Target URL Inclusion (TUI) over an episode's visited URLs.

Page paths do not depend on the UI seed (`/docs/code_editor/commands/replace` documents the replace command
whatever its label); the seed travels in the query string (`?seed=N`) and decides what the page says. So a task
names its target pages by path, and TUI asks whether any visited URL has one of those paths.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlencode, urlsplit

PREFIX = "/docs/"
"""Where the site is mounted on the app server."""
INDEX = PREFIX
SEARCH = PREFIX + "search"
STYLESHEET = PREFIX + "style.css"


def app_path(app: str) -> str:
    return f"{PREFIX}{app}/"


def command_path(app: str, command_id: str) -> str:
    """The how-to page of one menu command, e.g. `/docs/code_editor/commands/replace`."""
    return f"{PREFIX}{app}/commands/{command_id}"


def procedure_path(app: str, slug: str) -> str:
    """The how-to page of a multi-step procedure, e.g. `/docs/image_editor/howto/export-an-image`."""
    return f"{PREFIX}{app}/howto/{slug}"


def href(path: str, seed: int, **query: str) -> str:
    """A link to `path` that keeps the seed (and any other query values, empty ones left out).

    >>> href("/docs/search", 3, q="export png")
    '/docs/search?seed=3&q=export+png'
    """
    values = {"seed": str(seed), **{k: v for k, v in query.items() if v}}
    return f"{path}?{urlencode(values)}"


def docs_path(url: str) -> str | None:
    """The page path of a documentation URL (query and fragment dropped, `/docs` read as `/docs/`), else None.

    >>> docs_path("http://127.0.0.1:8123/docs/code_editor/commands/save?seed=4#steps")
    '/docs/code_editor/commands/save'
    >>> docs_path("http://127.0.0.1:8123/code_editor/index.html?seed=4") is None
    True
    """
    path = urlsplit(url).path
    if path == PREFIX.rstrip("/"):
        return PREFIX
    return path if path.startswith(PREFIX) else None


def visited_docs(visited_urls: Iterable[str]) -> list[str]:
    """The documentation pages an episode visited (`info["visited_urls"]`), in order, without repeats."""
    return list(dict.fromkeys(p for p in map(docs_path, visited_urls) if p is not None))


def target_url_inclusion(visited_urls: Iterable[str], target_paths: Iterable[str]) -> bool:
    """DocOS's TUI for one episode: did it visit at least one of the target pages?

    >>> target_url_inclusion(["http://127.0.0.1:1/docs/search?q=x&seed=0",
    ...                       "http://127.0.0.1:1/docs/media_player/commands/speed?seed=0"],
    ...                      [command_path("media_player", "speed")])
    True
    """
    return not set(visited_docs(visited_urls)).isdisjoint(target_paths)
