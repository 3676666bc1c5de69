"""Executing parsed web actions (`grammar.py`) on a Playwright page.

Element ids resolve through the `data-rg-id` marks the last observation left on the page (`observe.js`);
grid coordinates (0–1000) scale to the viewport. A failure the agent caused — no such id, a hidden, covered or
disabled element, an unknown option, a refused URL — raises `ActionError`, which the environment shows as the
next observation's `last_action_error`. Anything else (the browser died) propagates as Playwright's error.

Clicks on an element (`click(12)`, `left_double(12)`, `right_single(12)`) first hit-test it as a person would
see it: a disabled element is refused at once; one covered by another element at its centre and four inner
points waits, as a person's click would, while it or its cover is moving or animating (items sliding out from a
button, an overlay fading away), up to the action timeout, and is then refused with an `ActionError` naming what
covers it ("still covered ... after N ms"); a cover that stands still (`ActionSettings.cover_still_ms`, 100 ms)
is refused then, not after the timeout (Playwright would wait it out). When only the centre is covered, the
click goes to an uncovered point.

Element forms: `type(12, "x")` replaces the value of an input or textarea (a range input is set), picks the
option of a select, and otherwise focuses the element and types at its caret; clicking an `option` of a
select selects it. A trailing newline in typed text presses Enter (UI-TARS's convention).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from raygent.environments.web.grammar import (
    GRID,
    ClickPoint,
    DoubleClickElement,
    DoubleClickPoint,
    DragAction,
    GoBackAction,
    GotoAction,
    HotkeyAction,
    RightClickElement,
    RightClickPoint,
    ScrollElement,
    ScrollPoint,
    SelectAction,
    TypeText,
    WaitAction,
)
from raygent.environments.web.sandbox import Sandbox
from raygent.policies.actions import Action, ClickAction, FinishedAction, TypeAction


class ActionError(Exception):
    """The action could not be carried out; the message is shown to the agent."""


HIT_TEST = """async (e, o) => {
  const disabled = e.matches(":disabled") || e.getAttribute("aria-disabled") === "true";
  if (disabled) return {state: "disabled"};
  // As Playwright does before a click: scroll the element (and any scrolled container) into view if needed.
  if (typeof e.scrollIntoViewIfNeeded === "function") e.scrollIntoViewIfNeeded(true);
  else e.scrollIntoView({block: "nearest", inline: "nearest"});
  const within = (hit) => {
    for (let node = hit; node; node = node.parentElement || (node.getRootNode && node.getRootNode().host)) {
      if (node === e || (node.tagName === "LABEL" && node.control === e)) return true;
    }
    return false;
  };
  const deepest = (x, y) => {
    let hit = document.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  };
  const probe = () => {
    const r = e.getBoundingClientRect();
    const at = [r.left, r.top, r.width, r.height].join();
    if (r.width === 0 || r.height === 0) return {state: "unknown", at};
    let cover = null, tried = 0;
    for (const [fx, fy] of [[0.5, 0.5], [0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]]) {
      const x = r.left + r.width * fx, y = r.top + r.height * fy;
      if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
      tried += 1;
      const hit = deepest(x, y);
      if (!within(hit)) { cover = cover || hit; continue; }
      return fx === 0.5 && fy === 0.5 ? {state: "ok", at} : {state: "ok", at, x: x - r.left, y: y - r.top};
    }
    if (!tried || !cover) return {state: "unknown", at};
    const c = cover.getBoundingClientRect();
    return {state: "covered", at: at + "|" + [c.left, c.top, c.width, c.height].join(), cover};
  };
  // Something about the target or its cover is animating (a CSS transition or animation, Web Animations) and
  // will end: a finite running animation on either, or on an element holding either or inside either.
  let cover = null;
  const related = (t) => t && (t.contains(e) || e.contains(t) || (cover && (t.contains(cover) || cover.contains(t))));
  const animating = () => document.getAnimations().some((a) => a.playState === "running" && a.effect
    && a.effect.getComputedTiming().endTime !== Infinity && related(a.effect.target));
  const frame = () => new Promise((done) => { requestAnimationFrame(() => done()); setTimeout(done, 50); });
  const timeout = (o && o.timeoutMs) || 0, quiet = (o && o.quietMs) || 0, began = performance.now();
  let found = probe(), still = began, previous = null;
  for (;;) {
    const now = performance.now(), waited = Math.round(now - began);
    cover = found.cover || null;
    if (found.state !== "covered") {
      // A point off the centre is only worth keeping once the element has stopped moving.
      if (!("x" in found) || found.at === previous || now - began >= timeout) {
        delete found.at;
        return Object.assign(found, {waited});
      }
    } else {
      if (found.at !== previous || animating()) still = now;
      if (now - still >= quiet || now - began >= timeout) {
        const name = (cover.getAttribute("aria-label") || cover.textContent || "").replace(/\\s+/g, " ").trim();
        const classes = typeof cover.className === "string" ? cover.className.trim().split(/\\s+/).filter(Boolean) : [];
        const by = "<" + cover.tagName.toLowerCase() + (cover.id ? "#" + cover.id : "")
          + classes.map((c) => "." + c).join("") + ">" + (name ? " \\"" + name.slice(0, 60) + "\\"" : "");
        return {state: "covered", by, waited, settled: now - still >= quiet};
      }
    }
    previous = found.at;
    await frame();
    found = probe();
  }
}"""
"""Evaluated on an element before a click, with `{timeoutMs, quietMs}`: `ok` (with a point inside the element
when its centre is covered, kept once the element stands still), `disabled`, `covered` (`by`: what covers it;
`settled`: the cover stood still for `quietMs`, else it was still moving at `timeoutMs`) or `unknown` (not laid
out or off-screen: Playwright decides); `waited`: the milliseconds it took. A covered element is probed again
every animation frame while it, its cover or an element holding either moves or runs a finite animation (items
sliding out, an overlay fading away), up to `timeoutMs`."""


@dataclass(frozen=True)
class ActionSettings:
    action_timeout_ms: float = 3000
    """How long an element action waits for its element to become actionable (a click: for a moving cover too)."""
    cover_still_ms: float = 100
    """How long what covers a click's element must stand still (neither it nor the element moving or animating)
    for the click to be refused before `action_timeout_ms`; 0 refuses a covered element at once."""
    navigation_timeout_ms: float = 15000
    wait_s: float = 1.0
    """What `wait()` waits."""
    scroll_px: int = 300
    drag_steps: int = 12


_KEY_NAMES = {
    "ctrl": "Control", "control": "Control", "cmd": "Meta", "command": "Meta", "meta": "Meta", "win": "Meta",
    "super": "Meta", "alt": "Alt", "option": "Alt", "shift": "Shift", "enter": "Enter", "return": "Enter",
    "esc": "Escape", "escape": "Escape", "del": "Delete", "delete": "Delete", "backspace": "Backspace",
    "tab": "Tab", "space": "Space", "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft",
    "right": "ArrowRight", "arrowup": "ArrowUp", "arrowdown": "ArrowDown", "arrowleft": "ArrowLeft",
    "arrowright": "ArrowRight", "pageup": "PageUp", "pagedown": "PageDown", "home": "Home", "end": "End",
    "insert": "Insert", "plus": "+", "minus": "-",
}  # fmt: skip
_MODIFIERS = ("Control", "Alt", "Shift", "Meta")


def normalize_hotkey(key: str) -> str:
    """Playwright's chord for `key`: `ctrl s`, `Ctrl+S`, `control+s` all give `Control+s`.

    A letter is lower case unless Shift is held, as a real keyboard reports it, so apps should compare
    `event.key.toLowerCase()`.

    >>> normalize_hotkey("ctrl shift z"), normalize_hotkey("Control+S"), normalize_hotkey("esc")
    ('Control+Shift+Z', 'Control+s', 'Escape')
    """
    text = key.strip()
    plus_key = text.endswith("++") or text == "+"
    tokens = [t for t in re.split(r"[+\s]+", text[:-1] if plus_key else text) if t] + (["+"] if plus_key else [])
    names = []
    for token in tokens:
        lowered = token.lower()
        if lowered in _KEY_NAMES:
            names.append(_KEY_NAMES[lowered])
        elif re.fullmatch(r"f\d{1,2}", lowered):
            names.append(lowered.upper())
        else:
            names.append(token)
    shift = "Shift" in names
    names = [(n.upper() if shift else n.lower()) if len(n) == 1 and n.isalpha() else n for n in names]
    modifiers = [m for m in _MODIFIERS if m in names]
    keys = [n for n in names if n not in _MODIFIERS]
    return "+".join(modifiers + keys)


class ActionExecutor:
    """Runs actions on the active page. `run` returns the page the episode continues on."""

    def __init__(self, sandbox: Sandbox, settings: ActionSettings | None = None) -> None:
        self.sandbox = sandbox
        self.settings = settings or ActionSettings()
        self._handlers: dict[type[Action], Callable[[Any, Any], None]] = {
            ClickAction: self._click_element,
            ClickPoint: lambda page, a: page.mouse.click(*self._point(page, a.x, a.y)),
            DoubleClickElement: lambda page, a: self._clickable(page, a).dblclick(),
            DoubleClickPoint: lambda page, a: page.mouse.dblclick(*self._point(page, a.x, a.y)),
            RightClickElement: lambda page, a: self._clickable(page, a).click(button="right"),
            RightClickPoint: lambda page, a: page.mouse.click(*self._point(page, a.x, a.y), button="right"),
            DragAction: self._drag,
            TypeAction: self._type_element,
            TypeText: lambda page, a: page.keyboard.type(a.content),
            SelectAction: self._select,
            HotkeyAction: lambda page, a: page.keyboard.press(normalize_hotkey(a.key)),
            ScrollElement: self._scroll_element,
            ScrollPoint: self._scroll_point,
            GotoAction: self._goto,
            GoBackAction: self._go_back,
            WaitAction: lambda page, a: page.wait_for_timeout(self.settings.wait_s * 1000),
            FinishedAction: lambda page, a: None,
        }

    @property
    def _timeout(self) -> float:
        return self.settings.action_timeout_ms

    def run(self, page: Any, action: Action) -> None:
        """Carry out `action` on `page`; `ActionError` for the agent's mistakes (see the module docstring)."""
        handler = self._handlers.get(type(action))
        if handler is None:
            raise ActionError(f"{action.kind}: not supported by the browser environment")
        try:
            handler(page, action)
        except PlaywrightTimeout as error:
            raise ActionError(f"{action.render()}: {_first_line(error)} ({_why_not_actionable(error)})") from None
        except PlaywrightError as error:
            if page.is_closed() or not page.context.browser or not page.context.browser.is_connected():
                raise
            raise ActionError(f"{action.render()}: {_first_line(error)}") from None
        settle(page, self.settings.navigation_timeout_ms)

    def _element(self, page: Any, element: int) -> Any:
        locator = page.locator(f'[data-rg-id="{element}"]')
        if locator.count() == 0:
            raise ActionError(f"no element [{element}] on the page (ids come from the latest observation)")
        return locator.first

    def _point(self, page: Any, x: int, y: int) -> tuple[float, float]:
        size = page.viewport_size or {"width": 1280, "height": 720}
        return min(x, GRID - 1) / GRID * size["width"], min(y, GRID - 1) / GRID * size["height"]

    def _click_element(self, page: Any, action: ClickAction) -> None:
        locator = self._element(page, action.element)
        option = locator.evaluate("e => e.tagName === 'OPTION' && e.parentElement.closest('select') ? e.value : null")
        if option is not None:
            select = locator.locator("xpath=ancestor::select[1]")
            select.select_option(value=option, timeout=self._timeout)
            return
        self._clickable(page, action, locator).click()

    def _clickable(self, page: Any, action: Any, locator: Any = None) -> _Clickable:
        """The element of a click action, hit-tested (`HIT_TEST`): `ActionError` at once when it is disabled; while
        it is covered and it or its cover moves, the hit test waits (up to the action timeout) for the cover to go;
        `ActionError` when a cover stands still or outlasts the timeout. Clicks on the returned object go to an
        uncovered point when the centre is covered and have what is left of the action timeout."""
        locator = locator if locator is not None else self._element(page, action.element)
        found = locator.evaluate(HIT_TEST, {"timeoutMs": self._timeout, "quietMs": self.settings.cover_still_ms})
        state = found.get("state") if isinstance(found, dict) else "unknown"
        waited = float(found.get("waited") or 0) if isinstance(found, dict) else 0.0
        if state == "disabled":
            raise ActionError(f"{action.render()}: element [{action.element}] is disabled")
        if state == "covered":
            by = found.get("by", "another element")
            if found.get("settled", True):
                raise ActionError(
                    f"{action.render()}: element [{action.element}] is covered by {by}"
                    " (it cannot be clicked now; close or move what covers it)"
                )
            raise ActionError(
                f"{action.render()}: element [{action.element}] is still covered by {by} after {waited:.0f} ms"
                " (the page was still moving; wait() for it to settle, or close what covers it)"
            )
        position = {"x": float(found["x"]), "y": float(found["y"])} if state == "ok" and "x" in found else None
        return _Clickable(locator, position, max(self._timeout - waited, min(self._timeout, 500.0)))

    def _drag(self, page: Any, action: DragAction) -> None:
        start, end = self._point(page, action.x1, action.y1), self._point(page, action.x2, action.y2)
        page.mouse.move(*start)
        page.mouse.down()
        page.mouse.move(*end, steps=self.settings.drag_steps)
        page.mouse.up()

    def _type_element(self, page: Any, action: TypeAction) -> None:
        locator = self._element(page, action.element)
        text, enter = (action.text[:-1], True) if action.text.endswith("\n") else (action.text, False)
        kind = locator.evaluate(
            "e => e.tagName === 'SELECT' ? 'select' : e.tagName === 'TEXTAREA' ? 'fill' : e.tagName !== 'INPUT' ? "
            "'keys' : e.type === 'range' ? 'set' : ['checkbox','radio','button','submit','reset','file','image',"
            "'color'].includes(e.type) ? 'none' : 'fill'"
        )
        if kind == "none":
            raise ActionError(f"{action.render()}: cannot type into this {action.element} (not a text field)")
        if kind == "select":
            self._select(page, SelectAction(element=action.element, option=text))
        elif kind == "fill":
            locator.fill(text, timeout=self._timeout)
        elif kind == "set":
            locator.evaluate(
                "(e, v) => { e.value = v; e.dispatchEvent(new Event('input', {bubbles: true}));"
                " e.dispatchEvent(new Event('change', {bubbles: true})); }",
                text,
            )
        else:
            locator.focus(timeout=self._timeout)
            page.keyboard.type(text)
        if enter:  # the locator's press waits for a navigation it starts (a form submitted), the keyboard's does not
            locator.press("Enter", timeout=self._timeout)

    def _select(self, page: Any, action: SelectAction) -> None:
        locator = self._element(page, action.element)
        if locator.evaluate("e => e.tagName") == "SELECT":
            options = locator.evaluate("e => Array.from(e.options).map(o => [o.label || o.text, o.value])")
            for label, value in options:
                if action.option in (label.strip(), value):
                    locator.select_option(value=value, timeout=self._timeout)
                    return
            names = ", ".join(label.strip() for label, _ in options)
            raise ActionError(f"{action.render()}: no option {action.option!r}; options: {names}")
        choice = locator.get_by_role("option", name=action.option, exact=True)
        if choice.count() == 0:
            raise ActionError(f"{action.render()}: element [{action.element}] has no option {action.option!r}")
        choice.first.click(timeout=self._timeout)

    def _wheel(self, direction: str) -> tuple[int, int]:
        step = self.settings.scroll_px
        return {"up": (0, -step), "down": (0, step), "left": (-step, 0), "right": (step, 0)}[direction]

    def _scroll_element(self, page: Any, action: ScrollElement) -> None:
        locator = self._element(page, action.element)
        locator.scroll_into_view_if_needed(timeout=self._timeout)
        box = locator.bounding_box(timeout=self._timeout)
        if box is None:
            raise ActionError(f"{action.render()}: element [{action.element}] is not visible")
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(*self._wheel(action.direction))

    def _scroll_point(self, page: Any, action: ScrollPoint) -> None:
        page.mouse.move(*self._point(page, action.x, action.y))
        page.mouse.wheel(*self._wheel(action.direction))

    def _goto(self, page: Any, action: GotoAction) -> None:
        url = urljoin(page.url, action.url.strip())
        refusal = self.sandbox.check_url(url)
        if refusal:
            raise ActionError(f"{action.render()}: {refusal}")
        page.goto(url, timeout=self.settings.navigation_timeout_ms)

    def _go_back(self, page: Any, action: GoBackAction) -> None:
        if page.go_back(timeout=self.settings.navigation_timeout_ms) is None:
            raise ActionError("go_back(): there is no previous page")


class _Clickable:
    """A click action's hit-tested element: its clicks land at `position` (relative to the element's box; None:
    its centre) within `timeout_ms`."""

    def __init__(self, locator: Any, position: dict[str, float] | None, timeout_ms: float) -> None:
        self.locator, self.position, self.timeout_ms = locator, position, timeout_ms

    def _options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        options = {"timeout": self.timeout_ms, **kwargs}
        return {**options, "position": self.position} if self.position is not None else options

    def click(self, **kwargs: Any) -> None:
        self.locator.click(**self._options(kwargs))

    def dblclick(self, **kwargs: Any) -> None:
        self.locator.dblclick(**self._options(kwargs))


def settle(page: Any, timeout_ms: float) -> None:
    """Let the page finish what the action started: a navigation's load, then two animation frames."""
    for _ in range(3):
        try:
            page.wait_for_load_state("load", timeout=timeout_ms)
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            return
        except PlaywrightError as error:
            if "context was destroyed" not in str(error) and "navigat" not in str(error):
                raise


def _why_not_actionable(error: Exception) -> str:
    """The last reason in Playwright's call log (`... intercepts pointer events`, `element is not visible`)."""
    reasons = re.findall(
        r"^\s*-\s*(.*(?:intercepts pointer events|not visible|not enabled|not stable).*)$", str(error), re.M
    )
    if not reasons:
        return "the element was hidden, covered or disabled"
    return reasons[-1].strip()[:200]


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0][:300] if str(error).strip() else type(error).__name__
