"""FactGuard tasks: the trainer's task function (`env.tasks`) over the world's item generator."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Annotated

import numpy as np
from pydantic import AfterValidator, Field

from raygent.environments.factguard.world import (
    DEFAULT_FRAMES,
    DEFAULT_MIX,
    ENV_ID,
    KINDS,
    LABELS,
    SPLITS,
    generate_item,
    split_of,
)
from raygent.platform.config import Flag, Seed
from raygent.platform.contracts import Task

_MAX_DRAWS = 10_000


def check_mix(mix: Mapping[str, float]) -> dict[str, float]:
    """The item-kind shares, normalised; a clear error for unknown kinds or shares that are not >= 0 with sum > 0."""
    unknown = sorted(set(mix) - set(KINDS))
    if unknown:
        raise ValueError(f"mix: unknown kind(s) {unknown}; expected some of {KINDS}")
    if any(not np.isfinite(share) or share < 0 for share in mix.values()) or sum(mix.values()) <= 0:
        raise ValueError(f"mix: shares must be finite, >= 0 and not all 0, got {dict(mix)}")
    total = float(sum(mix.values()))
    return {kind: float(mix.get(kind, 0.0)) / total for kind in KINDS}


Mix = Annotated[Mapping[str, float], AfterValidator(check_mix)]
"""Each item kind's share (`claim`, `clip`, `kb`), >= 0 and not all 0; normalised by `check_mix`."""
Frames = Annotated[int, Field(ge=1, le=60, strict=True)]
"""A clip's frame count."""


def make_task(params: dict, tools: bool = True) -> Task:
    """The Task of one item: the instruction is the claim, the parameters carry the video and its label."""
    digest = zlib.crc32(repr(sorted((k, str(v)) for k, v in params.items())).encode())
    return Task(
        id=f"factguard/{params['kind']}/{digest:08x}",
        env=ENV_ID,
        instruction=f"claim: {params['claim']}",
        difficulty={"claim": 0, "clip": 1, "kb": 1}[params["kind"]],
        params={**params, "template": params["kind"], "tools": tools},
    )


def factguard_tasks(
    split: str,
    seed: int,
    n: int,
    mix: Mix | None = None,
    frames: Frames = DEFAULT_FRAMES,
    world_seed: Seed = 0,
    tools: Flag = True,
) -> list[Task]:
    """`n` FactGuard items of `split` drawn from `seed` (the trainer's task-function signature).

    `mix` gives each kind's share (`claim`, `clip`, `kb`; default 0.4/0.3/0.3), labels are balanced in
    expectation; `tools: false` marks the items of the no-tools ablation (the environment, the agent loop and the
    expert then refuse or skip every tool)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if frames < 1:
        raise ValueError(f"frames must be >= 1, got {frames}")
    shares = check_mix(mix if mix is not None else DEFAULT_MIX)
    kinds = [kind for kind in KINDS if shares[kind] > 0]
    probabilities = np.array([shares[kind] for kind in kinds])
    rng = np.random.default_rng([seed, zlib.crc32(split.encode())])
    tasks: list[Task] = []
    for _ in range(n):
        kind = kinds[int(rng.choice(len(kinds), p=probabilities))]
        label = LABELS[int(rng.integers(2))]
        for _ in range(_MAX_DRAWS):
            params = generate_item(rng, kind, label, n_frames=frames, world_seed=world_seed)
            if split_of(params["key"]) == split:
                break
        else:  # pragma: no cover - every kind has items in both splits
            raise RuntimeError(f"no {kind} item of split {split!r} in {_MAX_DRAWS} draws")
        tasks.append(make_task(params, tools=tools))
    return tasks
