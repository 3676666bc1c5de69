"""Pure-Python twins of the image editor's pixel operations (`paint.js`, `document.js`), for checkers.

A checker computes the image a task should end with from the task's parameters (the initial scene plus the
requested edits) and compares its cell grid with the one `getState()` reports. The integer rules (round half
up, luma weights, box-blur windows) are the same as in the app, so grids agree exactly; comparisons still
allow a small per-channel tolerance for the compositing step, which the app does in floating point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

RGBA = tuple[int, int, int, int]
CELL = 4
TRANSPARENT: RGBA = (0, 0, 0, 0)


def parse_hex(color: str) -> RGBA:
    """`#rrggbb` (alpha 255) or `#rrggbbaa` -> RGBA.

    >>> parse_hex("#ff8000"), parse_hex("#00000080")
    ((255, 128, 0, 255), (0, 0, 0, 128))
    """
    text = color.strip().lstrip("#")
    if len(text) not in (6, 8):
        raise ValueError(f"not a hex color: {color!r}")
    values = [int(text[i : i + 2], 16) for i in range(0, len(text), 2)]
    return (values[0], values[1], values[2], values[3] if len(values) == 4 else 255)


def to_hex(rgba: Sequence[int]) -> str:
    return "#" + "".join(f"{v:02x}" for v in rgba)


def _round_half_up(total: int, count: int) -> int:
    return (2 * total + count) // (2 * count)


@dataclass
class Raster:
    """A W×H RGBA image, row-major, 4 bytes a pixel."""

    width: int
    height: int
    data: bytearray
    _grids: dict[tuple[int, int], list[list[str]]] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def blank(cls, width: int, height: int, color: str | None = None) -> Raster:
        pixel = bytes(parse_hex(color)) if color else bytes(4)
        return cls(width, height, bytearray(pixel * (width * height)))

    def copy(self) -> Raster:
        return Raster(self.width, self.height, bytearray(self.data))

    def pixel(self, x: int, y: int) -> RGBA:
        p = (y * self.width + x) * 4
        return (self.data[p], self.data[p + 1], self.data[p + 2], self.data[p + 3])

    def fill_rect(self, x: int, y: int, w: int, h: int, color: str) -> None:
        """Paint the rectangle with top-left (x, y) and size w×h (clipped to the image)."""
        pixel = bytes(parse_hex(color))
        for row in range(max(0, y), min(self.height, y + h)):
            for col in range(max(0, x), min(self.width, x + w)):
                p = (row * self.width + col) * 4
                self.data[p : p + 4] = pixel

    def flood_fill(self, x: int, y: int, color: str) -> None:
        """4-connected fill of the region of exactly the pixel at (x, y)'s color."""
        target, pixel = self.pixel(x, y), bytes(parse_hex(color))
        if target == tuple(pixel):
            return
        stack = [(x, y)]
        while stack:
            px, py = stack.pop()
            if 0 <= px < self.width and 0 <= py < self.height and self.pixel(px, py) == target:
                p = (py * self.width + px) * 4
                self.data[p : p + 4] = pixel
                stack += [(px + 1, py), (px - 1, py), (px, py + 1), (px, py - 1)]

    def invert(self) -> None:
        for p in range(0, len(self.data), 4):
            for c in range(3):
                self.data[p + c] = 255 - self.data[p + c]

    def grayscale(self) -> None:
        for p in range(0, len(self.data), 4):
            r, g, b = self.data[p : p + 3]
            luma = (299 * r + 587 * g + 114 * b + 500) // 1000
            self.data[p : p + 3] = bytes((luma, luma, luma))

    def brightness(self, amount: int) -> None:
        delta = (255 * amount * 2 + 100) // 200
        for p in range(0, len(self.data), 4):
            for c in range(3):
                self.data[p + c] = max(0, min(255, self.data[p + c] + delta))

    def _blur_pass(self, source: bytearray, radius: int, horizontal: bool) -> bytearray:
        out = bytearray(len(source))
        w, h = self.width, self.height
        for y in range(h):
            for x in range(w):
                lo, hi = (
                    (max(0, x - radius), min(w - 1, x + radius))
                    if horizontal
                    else (max(0, y - radius), min(h - 1, y + radius))
                )
                count = hi - lo + 1
                q = (y * w + x) * 4
                for c in range(4):
                    if horizontal:
                        total = sum(source[(y * w + k) * 4 + c] for k in range(lo, hi + 1))
                    else:
                        total = sum(source[(k * w + x) * 4 + c] for k in range(lo, hi + 1))
                    out[q + c] = _round_half_up(total, count)
        return out

    def blur(self, radius: int) -> None:
        self.data = self._blur_pass(self._blur_pass(self.data, radius, True), radius, False)

    def flip_horizontal(self) -> None:
        out = bytearray(len(self.data))
        for y in range(self.height):
            for x in range(self.width):
                p, q = (y * self.width + x) * 4, (y * self.width + self.width - 1 - x) * 4
                out[q : q + 4] = self.data[p : p + 4]
        self.data = out

    def crop(self, left: int, top: int, width: int, height: int) -> Raster:
        """The rectangle (left, top, width, height); parts outside the image are transparent."""
        out = Raster.blank(width, height)
        for y in range(height):
            for x in range(width):
                sx, sy = x + left, y + top
                if 0 <= sx < self.width and 0 <= sy < self.height:
                    q = (y * width + x) * 4
                    out.data[q : q + 4] = bytes(self.pixel(sx, sy))
        return out

    def grid(self, cell: int = CELL) -> list[list[str]]:
        """Cell averages as `#rrggbbaa`, rows top to bottom: the app's `summarize(...).grid` (memoized by content)."""
        key = (cell, hash(bytes(self.data)))
        if key not in self._grids:
            self._grids.clear()
            self._grids[key] = self._grid(cell)
        return self._grids[key]

    def _grid(self, cell: int) -> list[list[str]]:
        rows = []
        for cy in range(0, self.height, cell):
            row = []
            for cx in range(0, self.width, cell):
                sums, n = [0, 0, 0, 0], 0
                for y in range(cy, min(cy + cell, self.height)):
                    for x in range(cx, min(cx + cell, self.width)):
                        for c, v in enumerate(self.pixel(x, y)):
                            sums[c] += v
                        n += 1
                row.append(to_hex([_round_half_up(s, n) for s in sums]))
            rows.append(row)
        return rows


def render_layer(spec: dict[str, Any], width: int, height: int) -> Raster:
    """A layer of a task scene (`{"fill": hex | None, "rects": [{x, y, w, h, color}]}`), as the app loads it."""
    raster = Raster.blank(width, height, spec.get("fill"))
    for rect in spec.get("rects", []):
        raster.fill_rect(rect["x"], rect["y"], rect["w"], rect["h"], rect["color"])
    return raster


def composite(layers: Sequence[tuple[Raster, bool, int]]) -> Raster:
    """Source-over of (raster, visible, opacity %) from bottom to top onto transparency (`document.js`)."""
    first = layers[0][0]
    out = [[0.0, 0.0, 0.0, 0.0] for _ in range(first.width * first.height)]
    for raster, visible, opacity in layers:
        if not visible:
            continue
        for i, acc in enumerate(out):
            p = i * 4
            sa = raster.data[p + 3] / 255 * opacity / 100
            if sa == 0:
                continue
            da = acc[3]
            oa = sa + da * (1 - sa)
            for c in range(3):
                acc[c] = (raster.data[p + c] * sa + acc[c] * da * (1 - sa)) / oa
            acc[3] = oa
    data = bytearray()
    for acc in out:
        data += bytes((int(acc[0] + 0.5), int(acc[1] + 0.5), int(acc[2] + 0.5), int(acc[3] * 255 + 0.5)))
    return Raster(first.width, first.height, data)


def cell_distance(a: str, b: str) -> int:
    """Largest per-channel difference of two `#rrggbb[aa]` colors.

    >>> cell_distance("#102030ff", "#112030")
    1
    """
    return max(abs(x - y) for x, y in zip(parse_hex(a), parse_hex(b), strict=True))


def grid_mismatches(
    actual: Sequence[Sequence[str]],
    expected: Sequence[Sequence[str]],
    tolerance: int = 2,
    skip: Callable[[int, int], bool] | None = None,
) -> int:
    """Cells (row, col) that differ by more than `tolerance`; a shape mismatch counts every expected cell."""
    if len(actual) != len(expected) or any(len(a) != len(e) for a, e in zip(actual, expected, strict=True)):
        return sum(len(row) for row in expected)
    bad = 0
    for r, (row_a, row_e) in enumerate(zip(actual, expected, strict=True)):
        for c, (a, e) in enumerate(zip(row_a, row_e, strict=True)):
            if (skip is None or not skip(r, c)) and cell_distance(a, e) > tolerance:
                bad += 1
    return bad
