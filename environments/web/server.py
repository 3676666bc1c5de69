"""The local HTTP server of the web suite: the apps' static files and each app's seeded `ui.json`.

`AppServer` is a `ThreadingHTTPServer` on 127.0.0.1 with an ephemeral port, running in a daemon thread. It
serves `environments/web/apps/<app>/...` (only web asset types: never the apps' Python, which holds the task
checkers and solvers) and renders `GET /<app>/ui.json?seed=N` from the app's commands (`registry.app_commands`)
with `randomize`. Other sites (the documentation site) mount themselves with `add_route(prefix, handler)`, and
`add_static(prefix, directory)` serves a directory (a registered app's `static_dir`, an external benchmark's
pages) with the same rule on file types. Web fonts (`.woff`, `.woff2`, `.ttf`, `.otf`, `.eot`) are web files too,
sent with their registered types (`CONTENT_TYPES`: `font/woff`, ...) whatever the host's `mimetypes` tables say.

`shared_server()` is the one server of this process, started on first use; every `BrowserEnv` in the process
points its pages at it.
"""

from __future__ import annotations

import json
import mimetypes
import sys
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from raygent.environments.web.registry import app_commands
from raygent.environments.web.ui import UISpec, randomize

APPS_DIR = Path(__file__).resolve().parent / "apps"
HOST = "127.0.0.1"
CONTENT_TYPES = {
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".eot": "application/vnd.ms-fontobject",
}
"""Types given explicitly (a host's `mimetypes` may lack them); any other served file's type is `mimetypes`'."""
SERVED_SUFFIXES = frozenset(
    {".html", ".js", ".mjs", ".css", ".json", ".svg", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".txt", ".vtt", ".ico"}
    | CONTENT_TYPES.keys()
)

Response = tuple[int, str, bytes]
"""`(status, content type, body)`."""
RouteHandler = Callable[[str, dict[str, list[str]]], Response]
"""Called with the path below the route's prefix and the parsed query string."""


def ui_spec(app: str, seed: int) -> UISpec:
    """The layout `seed` gives `app`: its commands dealt by `randomize` (raises `KeyError` for no such app; an
    app without commands has an empty layout)."""
    if not app.isidentifier():
        raise KeyError(app)
    return randomize(app, app_commands(app), seed)


def content_type(name: str) -> str:
    """The `Content-Type` of a served file: `CONTENT_TYPES`, else `mimetypes`' guess; text in UTF-8."""
    suffix = Path(name).suffix.lower()
    kind = CONTENT_TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
    if kind.startswith("text/") or kind.endswith(("javascript", "json")):
        kind += "; charset=utf-8"
    return kind


def static_handler(directory: Path) -> RouteHandler:
    """A route handler serving the files under `directory` whose type is in `SERVED_SUFFIXES` (an empty path or
    one ending in `/` is its `index.html`); nothing outside the directory, no hidden files."""
    root = directory.resolve()

    def handle(subpath: str, query: dict[str, list[str]]) -> Response:
        relative = unquote(subpath.lstrip("/"))
        if relative == "" or relative.endswith("/"):
            relative += "index.html"
        target = (root / relative).resolve()
        hidden = any(part.startswith((".", "__")) for part in Path(relative).parts)
        if hidden or not target.is_relative_to(root) or target.suffix.lower() not in SERVED_SUFFIXES:
            return HTTPStatus.NOT_FOUND, "text/plain", b"not found"
        if not target.is_file():
            return HTTPStatus.NOT_FOUND, "text/plain", b"not found"
        return HTTPStatus.OK, content_type(target.name), target.read_bytes()

    return handle


class _Handler(SimpleHTTPRequestHandler):
    server: AppServer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, directory=str(APPS_DIR), **kwargs)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def guess_type(self, path: Any) -> str:
        known = CONTENT_TYPES.get(Path(str(path)).suffix.lower())
        return known or str(super().guess_type(path))

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def do_GET(self) -> None:
        self._serve(head=False)

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def _serve(self, head: bool) -> None:
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qs(parts.query)
        segments = [segment for segment in path.split("/") if segment]
        if len(segments) == 2 and segments[1] == "ui.json" and f"/{segments[0]}/" not in self.server.sites:
            self._reply(*self._ui_json(segments[0], query), head=head)
            return
        for prefix, handler in self.server.routes.items():
            if path == prefix.rstrip("/") or path.startswith(prefix):
                self._reply(*handler(path[len(prefix) :], query), head=head)
                return
        if path.endswith("/") and len(segments) == 1:
            path += "index.html"
        if Path(path).suffix.lower() not in SERVED_SUFFIXES or "__pycache__" in segments:
            self._reply(HTTPStatus.NOT_FOUND, "text/plain", b"not found", head=head)
            return
        self.path = path
        super().do_HEAD() if head else super().do_GET()

    def _ui_json(self, app: str, query: dict[str, list[str]]) -> Response:
        try:
            seed = int(query.get("seed", ["0"])[0])
            spec = ui_spec(app, seed)
        except (KeyError, ValueError, ImportError):
            return HTTPStatus.NOT_FOUND, "text/plain", b"no such app or seed"
        return HTTPStatus.OK, "application/json", json.dumps(spec.to_json()).encode()

    def _reply(self, status: int, content_type: str, body: bytes, head: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)


class AppServer(ThreadingHTTPServer):
    """The suite's HTTP server on `127.0.0.1:<ephemeral port>`; `start()` runs it in a daemon thread."""

    daemon_threads = True

    def __init__(self, port: int = 0, docs: bool = True) -> None:
        super().__init__((HOST, port), _Handler)
        self.routes: dict[str, RouteHandler] = {}
        self.sites: set[str] = set()
        """Route prefixes that are sites of their own (`/docs/`): their `ui.json` is not an app's."""
        self._statics: dict[str, Path] = {}
        self._thread: threading.Thread | None = None
        if docs:  # the documentation site (DocOS) at /docs/, written for the seed in each link's ?seed=N
            from raygent.environments.web.docs.site import mount

            mount(self)
            self.sites.add("/docs/")

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-reply (a browser killed by its watchdog) is routine: not worth a traceback on
        stderr. Anything else is printed as `socketserver` does."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:<port>`: the only origin the browser sandbox lets pages reach."""
        return f"http://{HOST}:{self.port}"

    def app_url(self, app: str, ui_seed: int = 0) -> str:
        return f"{self.origin}/{app}/index.html?seed={ui_seed}"

    def add_route(self, prefix: str, handler: RouteHandler) -> None:
        """Serve every path under `prefix` (e.g. `/docs/`) with `handler`, before the static files."""
        if not prefix.startswith("/") or not prefix.endswith("/"):
            raise ValueError(f"a route prefix starts and ends with '/', got {prefix!r}")
        self.routes[prefix] = handler

    def add_static(self, prefix: str, directory: Path | str) -> str:
        """Serve `directory`'s web files under `prefix` (e.g. `/bench/`); returns the prefix's URL. Idempotent for
        the same directory; another directory under a taken prefix is an error."""
        root = Path(directory).resolve()
        if not root.is_dir():
            raise ValueError(f"add_static: {directory} is not a directory")
        known = self._statics.get(prefix)
        if known is None:
            self.add_route(prefix, static_handler(root))
            self._statics[prefix] = root
        elif known != root:
            raise ValueError(f"add_static: {prefix} already serves {known}")
        return self.origin + prefix

    def start(self) -> AppServer:
        if self._thread is None:
            self._thread = threading.Thread(target=self.serve_forever, name="raygent-web-server", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self.server_close()


_SHARED: AppServer | None = None
_SHARED_LOCK = threading.Lock()


def shared_server() -> AppServer:
    """The process's one `AppServer`, started on first call."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = AppServer().start()
        return _SHARED
