"""ReasonAug tasks (one anchor image each), the heuristic instruction writer (SFT demonstrations and the open-loop
distribution), uniformly random instructions (the random-augmentation baseline) and the tokenizer's text."""

from __future__ import annotations

import zlib
from functools import lru_cache
from typing import Any

import numpy as np

from raygent.environments.reasonaug.world import (
    ID_VALUES,
    NUISANCE_VALUES,
    SLOTS,
    TEST_PRIOR,
    Sample,
    World,
    WorldSizes,
    build_world,
    describe,
    format_instruction,
)
from raygent.platform.config import Count, Seed, Share
from raygent.platform.contracts import Task

ENV_ID = "raygent/ReasonAug-v0"
SPLITS = ("train", "heldout")

# the heuristic writer's nuisance prior: backgrounds and lighting often, occluders rarely (a hand-written prompt
# distribution that never learns which edits help)
HEURISTIC_PRIOR: dict[str, tuple[float, ...]] = {
    "bg": (0.1, 0.3, 0.3, 0.3),
    "light": (0.3, 0.4, 0.3),
    "occ": (0.7, 0.1, 0.1, 0.1),
    "shift": (0.25, 0.5, 0.25),
}
DEFAULT_RECOLOUR = 0.1


def world_sizes(kwargs: dict[str, Any]) -> WorldSizes:
    return WorldSizes(**{k: int(v) for k, v in kwargs.items() if k in WorldSizes.__dataclass_fields__})


@lru_cache(maxsize=8)
def cached_world(world_seed: int, sizes: WorldSizes) -> World:
    return build_world(world_seed, sizes)


def make_task(sample: Sample, split: str, index: int, world_seed: int, recolour: float) -> Task:
    return Task(
        id=f"reasonaug/{split}/{world_seed}/{index}",
        env=ENV_ID,
        instruction="write an edit that keeps the person and varies the scene",
        params={
            "split": split,
            "index": index,
            "label": sample.label,
            "identity": dict(sample.identity),
            "view": dict(sample.view),
            "noise_seed": sample.noise_seed,
            "recolour": recolour,
            "template": split,
        },
    )


def reasonaug_tasks(
    split: str,
    seed: int,
    n: int,
    world_seed: Seed = 0,
    train_ids: Count = 48,
    views_per_id: Count = 4,
    test_ids: Count = 48,
    queries_per_id: Count = 2,
    gallery_per_id: Count = 5,
    recolour: Share = DEFAULT_RECOLOUR,
) -> list[Task]:
    """`n` anchors drawn from `seed` (the trainer's task function): `train` anchors are the real training views,
    `heldout` anchors the test identities' views (the policy's greedy evaluation only checks its grammar there)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    sizes = WorldSizes(train_ids, views_per_id, test_ids, queries_per_id, gallery_per_id)
    world = cached_world(world_seed, sizes)
    pool = world.train if split == "train" else world.query + world.gallery
    rng = np.random.default_rng([seed, zlib.crc32(split.encode())])
    picks = rng.integers(0, len(pool), size=n)
    return [make_task(pool[int(i)], split, int(i), world_seed, recolour) for i in picks]


def _draw(rng: np.random.Generator, values: tuple[str, ...], prior: tuple[float, ...] | None = None) -> str:
    return values[int(rng.choice(len(values), p=np.asarray(prior) if prior is not None else None))]


def heuristic_instruction(task: Task, rng: np.random.Generator) -> str:
    """The heuristic writer: nuisances from `HEURISTIC_PRIOR`, the identity copied from the anchor, except that
    each ID-critical slot is recoloured (another value) with probability `recolour` ("vary the clothes")."""
    identity, recolour = task.params["identity"], float(task.params.get("recolour", DEFAULT_RECOLOUR))
    slots = {key: _draw(rng, NUISANCE_VALUES[key], HEURISTIC_PRIOR[key]) for key in NUISANCE_VALUES}
    for key, values in ID_VALUES.items():
        keep = identity[key]
        if rng.random() < recolour:
            slots[key] = _draw(rng, tuple(v for v in values if v != keep))
        else:
            slots[key] = keep
    return format_instruction(slots)


def random_instruction(task: Task, rng: np.random.Generator) -> str:
    """Random augmentation: every nuisance uniform, the identity copied (identity-preserving random edits)."""
    slots = {key: _draw(rng, NUISANCE_VALUES[key], TEST_PRIOR[key]) for key in NUISANCE_VALUES}
    slots.update({key: task.params["identity"][key] for key in ID_VALUES})
    return format_instruction(slots)


def observation_text(task: Task) -> str:
    return describe(task.params["identity"], task.params["view"])


def reasonaug_demonstrations(tasks: list[Task]) -> list[list[tuple[str, str]]]:
    """The heuristic writer's one-turn episodes (`env.demonstrations`), seeded by each task's id."""
    turns = []
    for task in tasks:
        rng = np.random.default_rng(zlib.crc32(task.id.encode()))
        turns.append([(observation_text(task), heuristic_instruction(task, rng))])
    return turns


def corpus(n: int = 600, world_seed: int = 0) -> list[str]:
    """Tokenizer text: observations and instructions of train anchors, plus every slot value once."""
    rng = np.random.default_rng(world_seed)
    lines = []
    for task in reasonaug_tasks("train", world_seed, n, world_seed=world_seed, recolour=0.3):
        lines.append(observation_text(task) + "\n" + heuristic_instruction(task, rng))
    from raygent.environments.reasonaug.world import SLOT_VALUES

    lines += [f"{key} {value}" for key in SLOTS for value in SLOT_VALUES[key]]
    return lines
