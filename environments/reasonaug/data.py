"""The arrays a ReasonAug run trains and evaluates its ReID models on, written once to an `.npz` file that the
reward model's actor reads (rewards never import environments: the file is the interface).

Keys: `train_x`/`train_y` (the real training views, long-tail nuisances), `query_x`/`query_y` and
`gallery_x`/`gallery_y` (held-out identities, uniform nuisances), `judge_x`/`judge_y` (identity-preserving renders
of the train identities under uniform nuisances: the frozen reference model's training data). Images are uint8
`[N, 3, 32, 16]`, labels int64 (train and judge labels index the train identities, query/gallery the test ones).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from raygent.environments.reasonaug.world import WorldSizes, build_world, judge_views, render_all


def build_arrays(world_seed: int, sizes: WorldSizes, judge_per_id: int = 8) -> dict[str, np.ndarray]:
    world = build_world(world_seed, sizes)
    arrays: dict[str, np.ndarray] = {}
    for name, samples in (
        ("train", world.train),
        ("query", world.query),
        ("gallery", world.gallery),
        ("judge", judge_views(world, judge_per_id, world_seed)),
    ):
        arrays[f"{name}_x"], arrays[f"{name}_y"] = render_all(list(samples))
    return arrays


def write_arrays(path: Path, arrays: dict[str, np.ndarray]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **arrays)  # type: ignore[arg-type]
    tmp.replace(path)
    return path
