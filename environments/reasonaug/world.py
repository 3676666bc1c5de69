"""The procedural re-identification world: identities, nuisances, the instruction grammar and the frozen generator.

An *identity* is six attributes. Three are ID-critical and editable by an instruction (`top`, `bottom` colour and the
carried `item`); three are fine details no instruction touches (`hair`, `shoes`, `build`), so identities that share
their clothes still differ. A *view* of an identity adds four nuisances: `bg` (background), `light` (brightness),
`occ` (an occluder) and `shift` (horizontal pose shift). `render(identity, view, noise_seed)` draws it as a
3 x 32 x 16 image in [0, 1] (channels, height, width): that renderer is the frozen "generator" G.

An *instruction* is one clause per slot, `key value` joined by `; `, hierarchical as the method notes' schema:
global scene first, then the identity to preserve, then the nuisances to vary:

    bg street; light low; top red; bottom blue; item bag; occ left; shift none

`apply_instruction(identity, view, instruction)` is G(x, u): every slot is applied as written, the ID-critical ones
included, so "top green" on a person in red renders a different identity. That is the reward-hacking risk the gate
closes: such a sample is maximally "hard" for the ReID model, and wrong.

Long tail: the real training views draw their nuisances from `TRAIN_PRIOR` (mostly a plain background, mid
brightness, no occluder), while the held-out query and gallery views draw them uniformly (`TEST_PRIOR`): the rare
nuisances of training are common at test time, which is what an augmentation can teach.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

HEIGHT, WIDTH = 32, 16
IMAGE_SHAPE = (3, HEIGHT, WIDTH)

COLOURS: dict[str, tuple[float, float, float]] = {
    "red": (0.85, 0.1, 0.1),
    "blue": (0.1, 0.2, 0.85),
    "green": (0.1, 0.7, 0.2),
    "yellow": (0.9, 0.85, 0.1),
    "white": (0.95, 0.95, 0.95),
    "black": (0.08, 0.08, 0.08),
    "purple": (0.55, 0.15, 0.7),
    "orange": (0.95, 0.5, 0.05),
    "grey": (0.5, 0.5, 0.5),
    "brown": (0.45, 0.25, 0.1),
    "blond": (0.9, 0.8, 0.45),
}

# identity attributes: the editable ID-critical ones, then the fine details
ID_VALUES: dict[str, tuple[str, ...]] = {
    "top": ("red", "blue", "green", "yellow", "white", "black", "purple", "orange"),
    "bottom": ("black", "blue", "grey", "brown", "white", "green"),
    "item": ("none", "bag", "hat", "backpack"),
}
DETAIL_VALUES: dict[str, tuple[str, ...]] = {
    "hair": ("black", "brown", "blond"),
    "shoes": ("black", "white", "red"),
    "build": ("slim", "broad"),
}
# nuisances
NUISANCE_VALUES: dict[str, tuple[str, ...]] = {
    "bg": ("plain", "street", "park", "wall"),
    "light": ("low", "mid", "high"),
    "occ": ("none", "left", "right", "lower"),
    "shift": ("left", "none", "right"),
}

# the instruction's slots in order, with their class (the method notes' GLOBAL / ID-critical / NUISANCE)
SLOTS: tuple[str, ...] = ("bg", "light", "top", "bottom", "item", "occ", "shift")
GLOBAL, IDENTITY, NUISANCE = "global", "identity", "nuisance"
SLOT_CLASS: dict[str, str] = {
    "bg": GLOBAL,
    "light": GLOBAL,
    "top": IDENTITY,
    "bottom": IDENTITY,
    "item": IDENTITY,
    "occ": NUISANCE,
    "shift": NUISANCE,
}
SLOT_VALUES: dict[str, tuple[str, ...]] = {
    "bg": NUISANCE_VALUES["bg"],
    "light": NUISANCE_VALUES["light"],
    **ID_VALUES,
    "occ": NUISANCE_VALUES["occ"],
    "shift": NUISANCE_VALUES["shift"],
}
VIEW_KEYS = tuple(NUISANCE_VALUES)

TRAIN_PRIOR: dict[str, tuple[float, ...]] = {
    "bg": (0.7, 0.1, 0.1, 0.1),
    "light": (0.15, 0.7, 0.15),
    "occ": (0.85, 0.05, 0.05, 0.05),
    "shift": (0.2, 0.6, 0.2),
}
TEST_PRIOR: dict[str, tuple[float, ...]] = {key: tuple([1 / len(v)] * len(v)) for key, v in NUISANCE_VALUES.items()}

BRIGHTNESS = {"low": 0.45, "mid": 1.0, "high": 1.45}
SHIFT_PX = {"left": -3, "none": 0, "right": 3}
NOISE_SD = 0.03

Identity = dict[str, str]
View = dict[str, str]


class InstructionError(ValueError):
    """An instruction that does not follow the grammar (the message says what is wrong)."""


def parse_instruction(text: str) -> dict[str, str]:
    """The slot values of an instruction: every slot exactly once, each with one of its values (any order)."""
    slots: dict[str, str] = {}
    clauses = [c.strip() for c in text.strip().strip(".").split(";")]
    for clause in clauses:
        if not clause:
            continue
        parts = clause.split()
        if len(parts) != 2:
            raise InstructionError(f"clause {clause!r}: expected 'key value'")
        key, value = parts
        if key not in SLOT_VALUES:
            raise InstructionError(f"clause {clause!r}: unknown slot {key!r}; slots: {', '.join(SLOTS)}")
        if key in slots:
            raise InstructionError(f"slot {key!r} given twice")
        if value not in SLOT_VALUES[key]:
            raise InstructionError(f"slot {key!r}: {value!r} is not one of {', '.join(SLOT_VALUES[key])}")
        slots[key] = value
    missing = [key for key in SLOTS if key not in slots]
    if missing:
        raise InstructionError(f"missing slot(s): {', '.join(missing)}")
    return slots


def format_instruction(slots: Mapping[str, str]) -> str:
    """The canonical text of an instruction (slots in schema order)."""
    return "; ".join(f"{key} {slots[key]}" for key in SLOTS)


def describe(identity: Identity, view: View) -> str:
    """What the instruction policy sees of the anchor image (the observation text): its ID-critical attributes and
    its nuisances, in the grammar's words."""
    person = "; ".join(f"{key} {identity[key]}" for key in ID_VALUES)
    scene = "; ".join(f"{key} {view[key]}" for key in VIEW_KEYS)
    return f"person: {person}. scene: {scene}"


def apply_instruction(identity: Identity, view: View, slots: Mapping[str, str]) -> tuple[Identity, View]:
    """G's edit in attribute space: the identity and view the instruction asks for (ID-critical slots included)."""
    edited = dict(identity)
    for key in ID_VALUES:
        edited[key] = slots[key]
    return edited, {key: slots[key] for key in VIEW_KEYS}


def identity_changed(identity: Identity, slots: Mapping[str, str]) -> bool:
    """Whether the instruction edits an ID-critical attribute (ground truth, for diagnostics only: the reward
    measures identity with a frozen ReID model instead)."""
    return any(slots[key] != identity[key] for key in ID_VALUES)


def _background(name: str, rng: np.random.Generator) -> np.ndarray:
    image = np.zeros(IMAGE_SHAPE, dtype=np.float32)
    if name == "plain":
        image[:] = 0.55
    elif name == "street":
        image[:] = 0.35
        image[:, 24:, :] = 0.2  # road
        image[:, 26, ::3] = 0.9  # lane marks
        image[:, :, 1] = 0.15  # a lamp pole
        image[:, :, 14] = 0.15
    elif name == "park":
        image[0], image[1], image[2] = 0.2, 0.5, 0.2
        image += rng.normal(0.0, 0.08, IMAGE_SHAPE).astype(np.float32)
    elif name == "wall":
        image[0], image[1], image[2] = 0.6, 0.3, 0.2
        image[:, ::4, :] = 0.8  # mortar rows
        image[:, :, ::5] = 0.8
    else:
        raise ValueError(f"unknown background {name!r}")
    return image


def _fill(image: np.ndarray, rows: slice, cols: slice, colour: str) -> None:
    for channel, value in enumerate(COLOURS[colour]):
        image[channel, rows, cols] = value


def render(identity: Identity, view: View, noise_seed: int) -> np.ndarray:
    """The frozen generator: `identity` seen under `view`, a float32 3 x 32 x 16 image in [0, 1]."""
    rng = np.random.default_rng(noise_seed)
    image = _background(view["bg"], rng)
    half = 4 if identity["build"] == "broad" else 3
    centre = WIDTH // 2 + SHIFT_PX[view["shift"]]
    body = slice(max(centre - half, 0), min(centre + half, WIDTH))
    head = slice(max(centre - 2, 0), min(centre + 2, WIDTH))
    _fill(image, slice(3, 5), head, identity["hair"])
    image[0, 5:8, head], image[1, 5:8, head], image[2, 5:8, head] = 0.9, 0.7, 0.55  # face
    _fill(image, slice(8, 18), body, identity["top"])
    _fill(image, slice(18, 28), body, identity["bottom"])
    _fill(image, slice(28, 31), body, identity["shoes"])
    item = identity["item"]
    if item == "hat":
        _fill(image, slice(1, 3), slice(max(centre - 3, 0), min(centre + 3, WIDTH)), "black")
    elif item == "bag":
        side = slice(min(centre + half, WIDTH - 2), min(centre + half + 2, WIDTH))
        _fill(image, slice(14, 20), side, "brown")
    elif item == "backpack":  # the straps over the top
        for col in (centre - half + 1, centre + half - 2):
            if 0 <= col < WIDTH:
                _fill(image, slice(8, 16), slice(col, col + 1), "grey")
    occ = view["occ"]
    if occ == "left":
        image[:, 10:32, 0 : WIDTH // 2] = 0.3
    elif occ == "right":
        image[:, 10:32, WIDTH // 2 :] = 0.3
    elif occ == "lower":
        image[0, 20:32, :], image[1, 20:32, :], image[2, 20:32, :] = 0.15, 0.15, 0.4  # a car
    image = image * BRIGHTNESS[view["light"]]
    image = image + rng.normal(0.0, NOISE_SD, IMAGE_SHAPE).astype(np.float32)
    return np.clip(image, 0.0, 1.0).astype(np.float32)


def to_uint8(image: np.ndarray) -> np.ndarray:
    return np.round(np.clip(image, 0.0, 1.0) * 255.0).astype(np.uint8)


def _draw(rng: np.random.Generator, values: tuple[str, ...], prior: tuple[float, ...] | None = None) -> str:
    return values[int(rng.choice(len(values), p=np.asarray(prior) if prior is not None else None))]


def draw_view(rng: np.random.Generator, prior: Mapping[str, tuple[float, ...]]) -> View:
    return {key: _draw(rng, NUISANCE_VALUES[key], prior[key]) for key in VIEW_KEYS}


@dataclass(frozen=True)
class WorldSizes:
    """How many identities and views the world has (`env.task_kwargs`)."""

    train_ids: int = 48
    views_per_id: int = 4
    test_ids: int = 48
    queries_per_id: int = 2
    gallery_per_id: int = 5


@dataclass(frozen=True)
class Sample:
    """One real view: whose (`label`, an index into its split's identities), the identity, the view, the noise."""

    label: int
    identity: Identity
    view: View
    noise_seed: int

    def image(self) -> np.ndarray:
        return render(self.identity, self.view, self.noise_seed)


@dataclass(frozen=True)
class World:
    train: tuple[Sample, ...]
    query: tuple[Sample, ...]
    gallery: tuple[Sample, ...]
    train_identities: tuple[Identity, ...]


def _identities(rng: np.random.Generator, n: int) -> list[Identity]:
    space = [ID_VALUES[k] for k in ID_VALUES] + [DETAIL_VALUES[k] for k in DETAIL_VALUES]
    total = int(np.prod([len(v) for v in space]))
    if n > total:
        raise ValueError(f"asked for {n} identities, the attribute space has {total}")
    chosen = rng.choice(total, size=n, replace=False)
    keys = [*ID_VALUES, *DETAIL_VALUES]
    identities = []
    for code in chosen:
        identity, rest = {}, int(code)
        for key, values in zip(keys, space, strict=True):
            identity[key] = values[rest % len(values)]
            rest //= len(values)
        identities.append(identity)
    return identities


def build_world(world_seed: int = 0, sizes: WorldSizes = WorldSizes()) -> World:
    """The world of `world_seed`: disjoint train and test identities, train views from the long-tail prior, query
    and gallery views (of the test identities) from the uniform one. Deterministic in its arguments."""
    rng = np.random.default_rng([world_seed, zlib.crc32(b"reasonaug")])
    identities = _identities(rng, sizes.train_ids + sizes.test_ids)
    train_ids, test_ids = identities[: sizes.train_ids], identities[sizes.train_ids :]
    seeds = iter(rng.integers(0, 2**31, size=10**6).tolist())
    train = tuple(
        Sample(label, identity, draw_view(rng, TRAIN_PRIOR), next(seeds))
        for label, identity in enumerate(train_ids)
        for _ in range(sizes.views_per_id)
    )
    query, gallery = [], []
    for label, identity in enumerate(test_ids):
        query += [Sample(label, identity, draw_view(rng, TEST_PRIOR), next(seeds)) for _ in range(sizes.queries_per_id)]
        gallery += [
            Sample(label, identity, draw_view(rng, TEST_PRIOR), next(seeds)) for _ in range(sizes.gallery_per_id)
        ]
    return World(tuple(train), tuple(query), tuple(gallery), tuple(train_ids))


def render_all(samples: tuple[Sample, ...] | list[Sample]) -> tuple[np.ndarray, np.ndarray]:
    """uint8 images `[N, 3, 32, 16]` and int64 labels of `samples`."""
    images = np.stack([to_uint8(s.image()) for s in samples]) if samples else np.zeros((0, *IMAGE_SHAPE), np.uint8)
    return images, np.array([s.label for s in samples], dtype=np.int64)


def judge_views(world: World, per_id: int, seed: int) -> list[Sample]:
    """Identity-preserving renders of the train identities under uniformly drawn nuisances: the training data of
    the frozen reference ReID model that judges identity (a stand-in for a strong pretrained ReID judge)."""
    rng = np.random.default_rng([seed, zlib.crc32(b"judge")])
    return [
        Sample(label, identity, draw_view(rng, TEST_PRIOR), int(rng.integers(2**31)))
        for label, identity in enumerate(world.train_identities)
        for _ in range(per_id)
    ]
