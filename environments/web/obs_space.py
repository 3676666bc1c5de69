"""The spaces of `BrowserEnv` and the helpers that keep its observations inside them.

Observation text is Unicode from web pages, but a gymnasium `Text` space checks every character against a
finite charset. `CHARSET` covers what the suite's pages use (Latin, Greek, Cyrillic, punctuation, arrows,
symbols and box drawing); `clean` turns anything else into `?` and cuts the text to the space's length.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from gymnasium import spaces

from raygent.environments.text import CHARSET

MAX_TEXT_CHARS = 16000
MAX_SHORT_CHARS = 2048
MAX_ACTION_CHARS = 4096
_ALLOWED = frozenset(CHARSET)


def clean(text: str, limit: int = MAX_SHORT_CHARS) -> str:
    """`text` cut to `limit` characters, with characters outside `CHARSET` replaced by '?'."""
    return "".join(c if c in _ALLOWED else "?" for c in text[:limit])


def observation_space(screenshot: tuple[int, int] | None) -> spaces.Dict:
    """`text`, `goal`, `url`, `last_action_error` (text) and, when asked, a `(height, width, 3)` uint8 screenshot."""
    text = spaces.Text(MAX_TEXT_CHARS, min_length=0, charset=CHARSET)
    short = spaces.Text(MAX_SHORT_CHARS, min_length=0, charset=CHARSET)
    fields: dict[str, spaces.Space[Any]] = {"text": text, "goal": short, "url": short, "last_action_error": short}
    if screenshot is not None:
        fields["screenshot"] = spaces.Box(0, 255, (screenshot[1], screenshot[0], 3), np.uint8)
    return spaces.Dict(fields)


def action_space() -> spaces.Text:
    return spaces.Text(MAX_ACTION_CHARS, min_length=1, charset=CHARSET)


def png_to_array(png: bytes, size: tuple[int, int] | None) -> np.ndarray:
    """A PNG as an `(H, W, 3)` uint8 array, resized to `size = (width, height)` when given."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    if size is not None:
        image = image.resize(size, Image.Resampling.BILINEAR)
    return np.asarray(image, dtype=np.uint8)
