"""The scripts the suite puts into pages: the observation builder (`observe.js`) and the click-handler marker.

`observe(page)` renumbers the page's actionable elements (`data-rg-id`) and returns the observation text whose
format `observe.py` documents. `INIT_SCRIPT` runs in every document before the page's own scripts: it marks
elements that get a click-like listener (`addEventListener` or an `on...` property) with `data-rg-click`, so
that `observe.js` gives such custom widgets an id even without an ARIA role.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

OBSERVE_JS = (Path(__file__).resolve().parent / "observe.js").read_text()

INIT_SCRIPT = """
(() => {
  const TYPES = new Set(["click", "dblclick", "mousedown", "mouseup", "pointerdown", "pointerup", "contextmenu"]);
  const mark = (target) => {
    if (target instanceof Element && target !== document.body && target !== document.documentElement) {
      try { target.setAttribute("data-rg-click", ""); } catch (error) { /* detached or read-only */ }
    }
  };
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    if (TYPES.has(type)) mark(this);
    return add.call(this, type, listener, options);
  };
  for (const proto of [HTMLElement.prototype, SVGElement.prototype]) {
    for (const type of TYPES) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, "on" + type);
      if (!descriptor || !descriptor.set) continue;
      Object.defineProperty(proto, "on" + type, {
        configurable: true,
        enumerable: descriptor.enumerable,
        get: descriptor.get,
        set(value) { if (value) mark(this); descriptor.set.call(this, value); },
      });
    }
  }
})();
"""

DEFAULT_LIMITS: dict[str, int] = {"maxChars": 12000, "maxTextChars": 240, "maxTextTotal": 6000, "maxShapes": 60}
"""Observation size limits: characters of the whole text, of one text line or value, of all plain text together;
lines of SVG shapes without handlers."""


def observe(page: Any, **limits: int) -> str:
    """The observation text of `page` (a Playwright `Page`); marks its actionable elements with `data-rg-id`."""
    return str(page.evaluate(OBSERVE_JS, {**DEFAULT_LIMITS, **limits}))
