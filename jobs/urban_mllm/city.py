"""SynthCity: a grid city with latent cell attributes, rendered as satellite tiles and street views, with text.

A city is a G × G grid of cells. Land use (one of six classes) grows in spatial blobs (nearest of a few random
seeds), building height is 1–10 (parks and water are 0–1), greenery is 0–1. Roads run along every cell edge.

- Satellite view: a 16 × 16 RGB raster of a 4 × 4-cell tile; each cell is a 3 × 3 block (colour = land use,
  brightness = height, a green speck for greenery) framed by one road pixel.
- Street view: a 16 × 16 "façade" taken at a cell with a heading (N, E, S, W). It shows the three cells one step
  ahead (front-left, front, front-right) as bars over a ground strip: bar height = building height, colour = land
  use, greenery as green at the bar's foot; sky above. Seen from the street, the bars carry the tile's content.

A street view "inside a tile" stands on one of the tile's four inner cells, so its three cells ahead lie in the tile
for every heading. `Sample` holds the images of one example; `tokens.py` turns them into documents and tasks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LAND_USES = ("residential", "commercial", "industrial", "park", "water", "civic")
COLOURS = np.array([
    [0.85, 0.55, 0.35],  # residential
    [0.30, 0.45, 0.85],  # commercial
    [0.55, 0.55, 0.55],  # industrial
    [0.25, 0.70, 0.25],  # park
    [0.15, 0.35, 0.65],  # water
    [0.80, 0.30, 0.60],  # civic
])
PARK, WATER = 3, 4
HEADINGS = ("north", "east", "south", "west")
STEP = {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)}  # (row, col) step of each heading; row 0 is north
TILE = 4  # cells per tile side
CELL_PX = 4  # pixels per cell in the satellite view (3 block + 1 road)
IMAGE = TILE * CELL_PX  # 16
INNER = ((1, 1), (1, 2), (2, 1), (2, 2))  # tile cells a street view may stand on
HEIGHT_BINS = ("low", "mid", "high")  # heights 0-3, 4-6, 7-10


@dataclass(frozen=True)
class City:
    land_use: np.ndarray  # (G, G) int
    height: np.ndarray  # (G, G) int 0..10
    greenery: np.ndarray  # (G, G) float 0..1

    @property
    def size(self) -> int:
        return self.land_use.shape[0]


def make_city(rng: np.random.Generator, size: int) -> City:
    n_seeds = max(4, size * size // 10)
    seeds = rng.uniform(0, size, size=(n_seeds, 2))
    kinds = rng.integers(len(LAND_USES), size=n_seeds)
    rows, cols = np.meshgrid(np.arange(size) + 0.5, np.arange(size) + 0.5, indexing="ij")
    distance = (rows[..., None] - seeds[:, 0]) ** 2 + (cols[..., None] - seeds[:, 1]) ** 2
    land_use = kinds[distance.argmin(axis=-1)]
    flip = rng.random((size, size)) < 0.15  # single-cell variety inside blobs
    land_use = np.where(flip, rng.integers(len(LAND_USES), size=(size, size)), land_use)
    base = {0: (2, 5), 1: (5, 10), 2: (2, 6), 3: (0, 1), 4: (0, 0), 5: (3, 8)}
    lo = np.vectorize(lambda k: base[int(k)][0])(land_use)
    hi = np.vectorize(lambda k: base[int(k)][1])(land_use)
    height = rng.integers(lo, hi + 1)
    greenery = np.clip(np.where(land_use == PARK, 0.8, 0.2) + rng.normal(0, 0.2, size=(size, size)), 0, 1)
    return City(land_use.astype(np.int64), height.astype(np.int64), greenery)


def height_bin(height: int) -> int:
    return 0 if height <= 3 else (1 if height <= 6 else 2)


def satellite(city: City, row: int, col: int, rng: np.random.Generator) -> np.ndarray:
    """(3, 16, 16) the tile whose top-left cell is (row, col)."""
    image = np.full((IMAGE, IMAGE, 3), 0.15)  # roads
    for r in range(TILE):
        for c in range(TILE):
            k = city.land_use[row + r, col + c]
            shade = 0.55 + 0.045 * city.height[row + r, col + c]
            block = np.clip(COLOURS[k] * shade, 0, 1)
            y, x = r * CELL_PX + 1, c * CELL_PX + 1
            image[y:y + 3, x:x + 3] = block
            if city.greenery[row + r, col + c] > 0.5:
                image[y + 2, x + 2] = (0.1, 0.6, 0.1)
    image += rng.normal(0, 0.03, size=image.shape)
    return np.clip(image, 0, 1).transpose(2, 0, 1).astype(np.float32)


def ahead(row: int, col: int, heading: int) -> list[tuple[int, int]]:
    """The (row, col) of the front-left, front and front-right cells one step ahead."""
    dr, dc = STEP[heading]
    left_r, left_c = -dc, dr  # a quarter turn to the left of (dr, dc) with row pointing south
    front = (row + dr, col + dc)
    return [(front[0] + left_r, front[1] + left_c), front, (front[0] - left_r, front[1] - left_c)]


def street(city: City, row: int, col: int, heading: int, rng: np.random.Generator) -> np.ndarray:
    """(3, 16, 16) the façade view from cell (row, col) facing `heading`."""
    image = np.empty((IMAGE, IMAGE, 3))
    image[:] = (0.65, 0.8, 0.95)  # sky
    image[13:] = (0.35, 0.35, 0.35)  # street
    for slot, (r, c) in enumerate(ahead(row, col, heading)):
        left, right = ((0, 5), (5, 11), (11, 16))[slot]
        k, h = city.land_use[r, c], city.height[r, c]
        top = 13 - max(1, round(1.2 * float(h)))
        image[top:13, left + 1:right - 1] = COLOURS[k]
        if city.greenery[r, c] > 0.5:
            image[11:13, left:right] = (0.1, 0.6, 0.1)
    image += rng.normal(0, 0.03, size=image.shape)
    return np.clip(image, 0, 1).transpose(2, 0, 1).astype(np.float32)
