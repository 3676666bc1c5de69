"""The word vocabulary, urban documents for pre-training, and the four evaluation tasks, as fixed-shape batches.

An example is a list of segments: images (satellite or street, each with the index of the satellite it may look
at) and text tokens. Every batch holds one kind of example, so all its sequences have the same layout.

Pre-training (next-token loss on text only):
- `pairs`: independent (image, caption) pairs: a satellite tile with a region caption (four cells: position and
  land use), or a street view with its façade caption (left/front/right: land use, height bin).
- `interleaved`: an urban document ordered by geography: the tile, its region caption, then two street views inside
  it, each followed by "at rR cC facing H" and its façade caption, i.e. text that relates the street view to the
  region and can only be predicted with both views in context.

Tasks (instruction tuning and evaluation; the loss and the score are on the one answer token):
- `sat_landuse` (satellite only): land use of the named cell of the tile;
- `street_height` (street only): height bin of the building straight ahead;
- `cross_match` (cross-view): which of four street views (A–D) was taken inside the tile;
- `cross_heading` (cross-view): the heading of a street view taken at the named cell of the tile.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from raygent.jobs.urban_mllm.city import (
    HEADINGS,
    HEIGHT_BINS,
    INNER,
    LAND_USES,
    TILE,
    City,
    ahead,
    height_bin,
    make_city,
    satellite,
    street,
)

SPECIAL = ("<pad>", "<bos>", "q_landuse", "q_height", "q_match", "q_heading", "at", "facing", "left", "front",
           "right", "A", "B", "C", "D")
WORDS = (*SPECIAL, *LAND_USES, *HEIGHT_BINS, *HEADINGS, *(f"r{i}" for i in range(TILE)),
         *(f"c{i}" for i in range(TILE)))
VOCAB = {word: i for i, word in enumerate(WORDS)}
TASKS = ("sat_landuse", "street_height", "cross_match", "cross_heading")
SINGLE_VIEW, CROSS_VIEW = ("sat_landuse", "street_height"), ("cross_match", "cross_heading")
CAPTION_CELLS = 4
SAT, STREET = 0, 1


def ids(*words: str) -> list[int]:
    return [VOCAB[w] for w in words]


@dataclass
class Batch:
    """One kind of example, B of them. `layout` is the segment list shared by all B: ("img", slot) or
    ("text", column); `images[slot]` is (B, 3, 16, 16), `kinds[slot]` SAT or STREET, `context[slot]` the slot of
    the satellite a street image may attend to (−1: none); `text[:, column]` the token ids; `loss_mask` marks the
    text columns that are predicted."""

    layout: list[tuple[str, int]]
    images: list[np.ndarray] = field(default_factory=list)
    kinds: list[int] = field(default_factory=list)
    context: list[int] = field(default_factory=list)
    text: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    loss_mask: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


class _Builder:
    def __init__(self, n: int) -> None:
        self.n = n
        self.layout: list[tuple[str, int]] = []
        self.images: list[np.ndarray] = []
        self.kinds: list[int] = []
        self.context: list[int] = []
        self.columns: list[np.ndarray] = []
        self.predicted: list[bool] = []

    def image(self, pixels: np.ndarray, kind: int, context: int = -1) -> int:
        self.layout.append(("img", len(self.images)))
        self.images.append(pixels)
        self.kinds.append(kind)
        self.context.append(context)
        return len(self.images) - 1

    def text(self, tokens: np.ndarray, predicted: bool) -> None:
        """`tokens`: (B, L) ids."""
        for column in tokens.T:
            self.layout.append(("text", len(self.columns)))
            self.columns.append(column)
            self.predicted.append(predicted)

    def build(self) -> Batch:
        return Batch(self.layout, self.images, self.kinds, self.context,
                     np.stack(self.columns, axis=1).astype(np.int64), np.array(self.predicted))


class Corpus:
    """Pre-rendered views of a few cities: every tile and every street view whose three cells ahead exist."""

    def __init__(self, seed: int, cities: int, size: int) -> None:
        rng = np.random.default_rng(seed)
        self.cities: list[City] = [make_city(rng, size) for _ in range(cities)]
        self.size = size
        self.sat = np.stack([[[satellite(city, r, c, rng) for c in range(size - TILE + 1)]
                              for r in range(size - TILE + 1)] for city in self.cities])
        self.street = np.stack([[[[street(city, r, c, h, rng) if 1 <= r < size - 1 and 1 <= c < size - 1
                                   else np.zeros((3, 16, 16), np.float32) for h in range(4)]
                                  for c in range(size)] for r in range(size)] for city in self.cities])

    def _tiles(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        city = rng.integers(len(self.cities), size=n)
        row = rng.integers(self.size - TILE + 1, size=n)
        col = rng.integers(self.size - TILE + 1, size=n)
        return city, row, col

    def _inner(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        choice = rng.integers(len(INNER), size=n)
        inner = np.array(INNER)[choice]
        return inner[:, 0], inner[:, 1], rng.integers(4, size=n)

    def _region_caption(self, rng: np.random.Generator, city: np.ndarray, row: np.ndarray,
                        col: np.ndarray) -> np.ndarray:
        words = []
        for b in range(len(city)):
            cells = rng.choice(TILE * TILE, size=CAPTION_CELLS, replace=False)
            tokens: list[int] = []
            for cell in cells:
                r, c = divmod(int(cell), TILE)
                use = self.cities[city[b]].land_use[row[b] + r, col[b] + c]
                tokens += ids(f"r{r}", f"c{c}", LAND_USES[use])
            words.append(tokens)
        return np.array(words)

    def _facade_caption(self, city: np.ndarray, row: np.ndarray, col: np.ndarray, heading: np.ndarray) -> np.ndarray:
        words = []
        for b in range(len(city)):
            tokens: list[int] = []
            for slot, (r, c) in zip(("left", "front", "right"), ahead(int(row[b]), int(col[b]), int(heading[b])),
                                    strict=True):
                town = self.cities[city[b]]
                tokens += ids(slot, LAND_USES[town.land_use[r, c]], HEIGHT_BINS[height_bin(int(town.height[r, c]))])
            words.append(tokens)
        return np.array(words)

    def pretrain_batch(self, mode: str, rng: np.random.Generator, n: int) -> Batch:
        """A batch of `pairs` (a satellite or a street pair, by coin) or of `interleaved` urban documents."""
        builder = _Builder(n)
        builder.text(np.full((n, 1), VOCAB["<bos>"]), predicted=False)
        city, row, col = self._tiles(rng, n)
        if mode == "pairs" and rng.random() < 0.5:
            ir, ic, heading = self._inner(rng, n)
            r, c = row + ir, col + ic
            builder.image(self.street[city, r, c, heading], STREET)
            builder.text(self._facade_caption(city, r, c, heading), predicted=True)
            return builder.build()
        sat = builder.image(self.sat[city, row, col], SAT)
        builder.text(self._region_caption(rng, city, row, col), predicted=True)
        if mode == "pairs":
            return builder.build()
        for _ in range(2):
            ir, ic, heading = self._inner(rng, n)
            r, c = row + ir, col + ic
            builder.image(self.street[city, r, c, heading], STREET, context=sat)
            relation = np.stack([np.full(n, VOCAB["at"]), ir + VOCAB["r0"], ic + VOCAB["c0"],
                                 np.full(n, VOCAB["facing"]), heading + VOCAB["north"]], axis=1)
            builder.text(relation, predicted=True)
            builder.text(self._facade_caption(city, r, c, heading), predicted=True)
        return builder.build()

    def task_batch(self, task: str, rng: np.random.Generator, n: int) -> tuple[Batch, np.ndarray]:
        """A batch of `task` questions and the (n,) answer token ids (the batch's last text column)."""
        builder = _Builder(n)
        builder.text(np.full((n, 1), VOCAB["<bos>"]), predicted=False)
        city, row, col = self._tiles(rng, n)
        ir, ic, heading = self._inner(rng, n)
        r, c = row + ir, col + ic
        position = np.stack([ir + VOCAB["r0"], ic + VOCAB["c0"]], axis=1)
        if task == "sat_landuse":
            builder.image(self.sat[city, row, col], SAT)
            cell_r, cell_c = rng.integers(TILE, size=n), rng.integers(TILE, size=n)
            question = np.stack([np.full(n, VOCAB["q_landuse"]), cell_r + VOCAB["r0"], cell_c + VOCAB["c0"]], axis=1)
            answer = np.array([VOCAB[LAND_USES[self.cities[city[b]].land_use[row[b] + cell_r[b],
                                                                           col[b] + cell_c[b]]]] for b in range(n)])
        elif task == "street_height":
            builder.image(self.street[city, r, c, heading], STREET)
            question = np.full((n, 1), VOCAB["q_height"])
            fronts = [ahead(int(r[b]), int(c[b]), int(heading[b]))[1] for b in range(n)]
            answer = np.array([VOCAB[HEIGHT_BINS[height_bin(int(self.cities[city[b]].height[fronts[b]]))]]
                               for b in range(n)])
        elif task == "cross_match":
            sat = builder.image(self.sat[city, row, col], SAT)
            truth = rng.integers(4, size=n)
            for slot in range(4):
                builder.text(np.full((n, 1), VOCAB["ABCD"[slot]]), predicted=False)
                views = self.street[city, r, c, heading].copy()
                wrong = truth != slot
                d_r, d_c, d_h = self._distractors(rng, city, row, col)
                views[wrong] = self.street[city, d_r, d_c, d_h][wrong]
                builder.image(views, STREET, context=sat)
            question = np.full((n, 1), VOCAB["q_match"])
            answer = truth + VOCAB["A"]
        elif task == "cross_heading":
            sat = builder.image(self.sat[city, row, col], SAT)
            builder.image(self.street[city, r, c, heading], STREET, context=sat)
            question = np.concatenate([np.full((n, 1), VOCAB["q_heading"]), position], axis=1)
            answer = heading + VOCAB["north"]
        else:
            raise ValueError(f"unknown task {task!r}; expected one of {TASKS}")
        builder.text(question, predicted=False)
        builder.text(answer[:, None], predicted=True)
        return builder.build(), answer

    def _distractors(self, rng: np.random.Generator, city: np.ndarray, row: np.ndarray,
                     col: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Street views of the same city whose three cells ahead are not all inside the tile."""
        n = len(city)
        d_r = rng.integers(1, self.size - 1, size=n)
        d_c = rng.integers(1, self.size - 1, size=n)
        d_h = rng.integers(4, size=n)
        for b in range(n):
            while all(row[b] <= rr < row[b] + TILE and col[b] <= cc < col[b] + TILE
                      for rr, cc in ahead(int(d_r[b]), int(d_c[b]), int(d_h[b]))):
                d_r[b], d_c[b] = rng.integers(1, self.size - 1, size=2)
        return d_r, d_c, d_h
