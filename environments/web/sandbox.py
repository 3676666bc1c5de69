"""The browser sandbox: pages reach the suite's own server and nothing else; every refusal is logged.

Per browser context (one episode), `Sandbox.install(context)`:

- routes every http(s) request (navigations, links, `fetch`/XHR from page script, subresources, service
  workers are blocked at context creation) through `_on_route`: a request to an allowed origin (the suite's
  server, `http://127.0.0.1:<port>`) continues, anything else — another host, another loopback port (a
  Ray dashboard listens there), another scheme — is aborted and logged;
- refuses WebSockets to anything but the allowed origins;
- logs `file://` and other local-scheme requests: Chromium itself refuses them from an http page (a link,
  `location.href`, `fetch`, a frame); `watch(page)` reads its "Not allowed to load local resource" console
  reports and the request events, so the log records each attempt.

`check_url(url)` is what the environment asks before a `goto` action: `file://` and every non-allowed origin
are refused there (a browser-initiated `goto` to `file://` would otherwise load the file). `enforce(page)` is
the backstop after each action: a page that ended up anywhere else is sent back and the visit logged.
Chromium's launch flags add a dead proxy and a resolver that knows only loopback (`browser.py`).
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

_LOCAL_RESOURCE = re.compile(r"Not allowed to load local resource: (\S+)")
LOCAL_SCHEMES = frozenset({"data", "blob", "about", "javascript"})
"""Schemes that never leave the page and are always allowed."""


@dataclass(frozen=True)
class BlockedRequest:
    url: str
    kind: str
    """`request` (routed), `websocket`, `navigation` (a goto or a page that left the sandbox), `local-scheme`."""
    reason: str
    time: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def origin_of(url: str) -> str:
    """`scheme://host:port` of an http(s) URL (explicit default ports), or `""` for other URLs."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return ""
    host = parts.hostname.lower()
    return f"{parts.scheme}://{'[' + host + ']' if ':' in host else host}:{port}"


class Sandbox:
    """The allow-list and the log of blocked requests for one browser context."""

    def __init__(self, allowed_origins: tuple[str, ...]) -> None:
        self.allowed = frozenset(origin_of(origin) for origin in allowed_origins)
        if "" in self.allowed:
            raise ValueError(f"allowed origins must be http(s) URLs, got {allowed_origins!r}")
        self.blocked: list[BlockedRequest] = []

    def allows(self, url: str) -> bool:
        scheme = urlsplit(url).scheme.lower()
        return scheme in LOCAL_SCHEMES or origin_of(url) in self.allowed

    def check_url(self, url: str) -> str | None:
        """None if a page may navigate to `url`; else the refusal, which is also logged."""
        if self.allows(url):
            return None
        return self._log(url, "navigation", _reason(url))

    def install(self, context: Any) -> None:
        """Hook the sandbox into a Playwright `BrowserContext` (and, with `watch`, each of its pages).

        The route's URL matcher is a regex of everything outside the allowed origins: Playwright's driver
        evaluates a regex itself, so the app's own requests (a page load fetches a dozen scripts and styles)
        never make the round trip to this process; `_on_route` still decides for whatever is routed."""
        context.route(self.outside_pattern(), self._on_route)
        context.route_web_socket("**/*", self._on_websocket)
        context.on("request", self._on_request)

    def outside_pattern(self) -> re.Pattern[str]:
        """A regex matching every URL that is not on an allowed origin (as `origin_of` spells them, with the
        port explicit: the suite's server always has one)."""
        origins = "|".join(re.escape(origin) for origin in sorted(self.allowed))
        return re.compile(rf"^(?!(?:{origins})(?:[/?#]|$))")

    def watch(self, page: Any) -> None:
        """Log what Chromium refuses on its own: a page's links, redirects or frames to `file://` URLs."""
        page.on("console", self._on_console)

    def enforce(self, page: Any, fallback_url: str) -> str | None:
        """If `page` left the sandbox (or shows Chromium's error page for a blocked navigation), send it back
        to `fallback_url`; the refusal, if any."""
        url = page.url
        if self.allows(url):
            return None
        if url.startswith("chrome-error://"):
            blocked = [b for b in self.blocked if b.kind == "request"]
            reason = blocked[-1].reason if blocked else "blocked: the page could not be loaded"
        else:
            reason = self._log(url, "navigation", _reason(url))
        with contextlib.suppress(Exception):
            page.goto(fallback_url)
        return reason

    def _on_route(self, route: Any) -> None:
        url = route.request.url
        if origin_of(url) in self.allowed:
            route.continue_()
            return
        self._log(url, "request", _reason(url))
        route.abort("blockedbyclient")

    def _on_websocket(self, websocket: Any) -> None:
        url = websocket.url
        http_url = "http" + url[2:] if url.startswith("ws") else url
        if origin_of(http_url) in self.allowed:
            websocket.connect_to_server()
            return
        self._log(url, "websocket", _reason(url))
        websocket.close(code=1008, reason="blocked by the raygent sandbox")

    def _on_request(self, request: Any) -> None:
        scheme = urlsplit(request.url).scheme.lower()
        if scheme not in ("http", "https") and scheme not in LOCAL_SCHEMES and scheme != "chrome-error":
            self._log(request.url, "local-scheme", _reason(request.url))

    def _on_console(self, message: Any) -> None:
        match = _LOCAL_RESOURCE.search(message.text)
        if match:
            self._log(match.group(1), "local-scheme", _reason(match.group(1)))

    def _log(self, url: str, kind: str, reason: str) -> str:
        self.blocked.append(BlockedRequest(url=url[:500], kind=kind, reason=reason, time=time.time()))
        return reason


def _reason(url: str) -> str:
    scheme = urlsplit(url).scheme.lower()
    if scheme == "file":
        return f"blocked: file URLs are not reachable ({url[:200]})"
    if scheme not in ("http", "https"):
        return f"blocked: the {scheme or 'empty'} scheme is not reachable ({url[:200]})"
    return f"blocked: only the local suite server is reachable, not {origin_of(url) or url[:200]}"
