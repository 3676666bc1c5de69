"""Text spaces for environments whose observations and actions are text.

A gymnasium `Text` space checks every character against a finite charset (by default letters and digits only, so
a sentence with a space in it is outside the space). `CHARSET` covers what the project's worlds write: printable
ASCII, Latin, Greek, Cyrillic, punctuation, arrows, symbols and box drawing, newline and tab.
"""

from __future__ import annotations

from gymnasium import spaces

_RANGES = (
    (0x20, 0x7E), (0xA0, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x2000, 0x206F), (0x20A0, 0x20CF),
    (0x2100, 0x214F), (0x2190, 0x23FF), (0x2460, 0x27BF), (0x2B00, 0x2BFF), (0xFFFD, 0xFFFD),
)  # fmt: skip
CHARSET = "\n\t" + "".join(chr(c) for low, high in _RANGES for c in range(low, high + 1))
"""Characters a text observation or action may hold."""


def text_space(max_length: int, min_length: int = 0) -> spaces.Text:
    """A `Text` space of at most `max_length` characters of `CHARSET`."""
    return spaces.Text(max_length, min_length=min_length, charset=CHARSET)
