"""The web agent's task source and expert (`env.tasks` and `env.demonstrations` in `jobs/configs/web_agent.yaml`).

Tasks are the suite's templates (`<app>/<template>`) at parameter seeds chosen by split:

- `train`: seeds `0 … pool-1` of each template (`pool` small for SFT, so the recorded demonstrations are reused
  across steps, seeds and runs; larger for GRPO);
- `heldout`: seeds from `HELDOUT_START` on whose drawn parameters differ from those of every seed below
  `TRAIN_POOL` (the largest train pool allowed), so held-out tasks are parameters never seen in training.

`train` batches draw templates and seeds uniformly; `heldout` sets cycle through the templates, so every
template has the same weight in an evaluation. The UI layout (the menus and labels a UI seed deals, DocOS's
randomization) is one of `ui_seeds`: UI seed 0 (the default labels) unless given; a `train` task draws one,
`heldout` sets cycle through them, and the SFT pool holds every task at every one. `grounding: label` makes the
tasks' demonstrations click by name (`click_label`, `observation.grounded`) instead of by id.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Annotated, Any

from pydantic import AfterValidator

from raygent.environments.web.agent.demos import demonstrations
from raygent.environments.web.agent.observation import Grounding, grounded, with_grounding
from raygent.environments.web.agent.splits import HELDOUT_START, TRAIN_POOL
from raygent.environments.web.registry import available_apps, list_tasks, make_task
from raygent.platform.config import Seed
from raygent.platform.contracts import Task


def template_ids(
    apps: Iterable[str] | None = None,
    templates: Iterable[str] | None = None,
    difficulties: Iterable[int] = (1,),
    exclude: Iterable[str] = (),
) -> list[str]:
    """Template ids `<app>/<template>` of `apps` (default: every app) at `difficulties`, restricted to
    `templates` when given (ids `<app>/<template>`), without `exclude`."""
    wanted = set(templates) if templates is not None else None
    dropped = set(exclude)
    found = [
        tid
        for app in (apps if apps is not None else available_apps())
        for tid in list_tasks(app, list(difficulties))
        if (wanted is None or tid in wanted) and tid not in dropped
    ]
    missing = sorted((wanted or set()) - set(found))
    if missing:
        raise ValueError(f"templates {missing} are not among the apps' templates at difficulties {list(difficulties)}")
    return found


@lru_cache(maxsize=64)
def _train_params(template_id: str) -> frozenset[str]:
    return frozenset(_params_key(template_id, seed) for seed in range(TRAIN_POOL))


def _params_key(template_id: str, seed: int) -> str:
    return json.dumps(make_task(f"{template_id}/{seed}").params, sort_keys=True)


def heldout_seeds(template_id: str, n: int, start: int) -> list[int]:
    """The first `n` seeds from `HELDOUT_START + start` whose parameters no train seed draws."""
    seen, seed = _train_params(template_id), HELDOUT_START + start
    seeds: list[int] = []
    while len(seeds) < n:
        if _params_key(template_id, seed) not in seen:
            seeds.append(seed)
        seed += 1
    return seeds


def check_ui_seeds(ui_seeds: Sequence[int]) -> list[int]:
    """The UI seeds as a list (not empty, each an int >= 0)."""
    layouts = list(ui_seeds)
    if not layouts or any(isinstance(u, bool) or not isinstance(u, int) or u < 0 for u in layouts):
        raise ValueError(f"ui_seeds: expected a non-empty list of ints >= 0, got {ui_seeds!r}")
    return layouts


UISeeds = Annotated[Sequence[Seed], AfterValidator(check_ui_seeds)]
"""UI layout seeds (not empty; 0 is the default layout)."""


def web_tasks(
    split: str,
    seed: int,
    n: int,
    apps: Sequence[str] | None = ("media_player",),
    templates: Sequence[str] | None = None,
    difficulties: Sequence[int] = (1,),
    exclude: Sequence[str] = (),
    pool: int = TRAIN_POOL,
    grounding: Grounding = "id",
    ui_seeds: UISeeds = (0,),
) -> list[Task]:
    """`n` tasks of `split` drawn from `seed` (the trainer's task-source signature; see the module docstring)."""
    ids = template_ids(apps, templates, difficulties, exclude)
    if not ids:
        raise ValueError(f"no templates for apps {apps}, templates {templates}, difficulties {difficulties}")
    layouts = check_ui_seeds(ui_seeds)
    rng = random.Random(f"{split}/{seed}")
    if split == "train":
        if not 1 <= pool <= TRAIN_POOL:
            raise ValueError(f"pool must be in [1, {TRAIN_POOL}], got {pool}")
        chosen = [f"{rng.choice(ids)}/{rng.randrange(pool)}" for _ in range(n)]
        # one layout: no draw, so the tasks of a one-layout config stay those it drew before layouts existed
        drawn = [rng.choice(layouts) if len(layouts) > 1 else layouts[0] for _ in chosen]
    elif split == "heldout":
        per_template = -(-n // len(ids))
        offset = rng.randrange(HELDOUT_START)
        seeds = {tid: heldout_seeds(tid, per_template, offset) for tid in ids}
        chosen = [f"{ids[i % len(ids)]}/{seeds[ids[i % len(ids)]][i // len(ids)]}" for i in range(n)]
        drawn = [layouts[(i // len(ids)) % len(layouts)] for i in range(n)]
    else:
        raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
    tasks = [make_task(task_id, ui_seed=ui).to_platform() for task_id, ui in zip(chosen, drawn, strict=True)]
    return with_grounding(tasks, grounding)


def sft_pool(
    apps: Sequence[str] | None,
    templates: Sequence[str] | None,
    difficulties: Sequence[int],
    pool: int,
    exclude: Sequence[str] = (),
    ui_seeds: Sequence[int] = (0,),
) -> list[Task]:
    """Every task the `train` split can draw with these arguments (seeds below `pool`, each UI seed): what SFT
    records."""
    layouts = check_ui_seeds(ui_seeds)
    return [
        make_task(f"{tid}/{s}", ui_seed=ui).to_platform()
        for tid in template_ids(apps, templates, difficulties, exclude)
        for s in range(pool)
        for ui in layouts
    ]


def sft_pool_for(task_kwargs: Mapping[str, Any]) -> list[Task]:
    """`sft_pool` of a config's task kwargs (`env.task_kwargs` with `sft.task_kwargs` over it)."""
    return sft_pool(
        task_kwargs.get("apps"),
        task_kwargs.get("templates"),
        task_kwargs.get("difficulties", (1,)),
        int(task_kwargs.get("pool", 1)),
        task_kwargs.get("exclude", ()),
        task_kwargs.get("ui_seeds", (0,)),
    )


def web_demonstrations(tasks: Sequence[Task]) -> list[list[tuple[str, str]]]:
    """The scripted experts' (compact observation, action) turns for each task, from the on-disk cache or
    recorded in the browser (`demos.demonstrations`); clicks by name for a task that asks (`grounded`)."""
    return [grounded(task, turns) for task, turns in zip(tasks, demonstrations(tasks), strict=True)]


def tokenizer_corpus(
    demos: list[list[tuple[str, str]]], screen_texts: Sequence[str] = (), instruction_seeds: int = 20, repeats: int = 3
) -> list[str]:
    """Text to train the tokenizer on: the demonstrations' observations and actions, the instructions of every
    template of every app, and unlabelled first screens (`repeats` times, so their words become tokens)."""
    text = [part for turns in demos for turn in turns for part in turn if part]
    for tid in list_tasks():
        text += [make_task(f"{tid}/{seed}").goal for seed in range(instruction_seeds)]
    return text + list(screen_texts) * repeats
