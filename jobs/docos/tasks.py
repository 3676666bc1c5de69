"""DocOS's tasks: the suite's templates on randomized UI layouts, each tagged with its documentation variant.

A task is a web-suite task (`<app>/<template>/<seed>@<ui_seed>`) whose `params` also carry

- `docs`: the variant the agent loop runs (`none`: no documentation; `tools`: `search_docs`/`open_doc`; `oracle`:
  the target pages placed in the prompt);
- `doc_commands`: the commands the task needs (what its scripted expert runs for the task's parameters, read off
  the expert's recorded episode on the default layout by `commands_run`) and `doc_targets`: their command pages.

Layouts (`ui_seed`): `train` draws parameter seeds below `pool` and layouts `1 … layouts` (small: each (task, layout) a
demonstration records once) and the default (0) with probability
`default_share`; the evaluation splits are `heldout` (layouts from `HELDOUT_LAYOUT` on: never trained) and
`default` (layout 0), both on parameter seeds no train task draws (`web_agent.tasks.heldout_seeds`). In `train`,
a share `none_share` of tasks are `none` on the default layout: the agent's knowledge of the app as it ships, which
the `none` variant measures.

`grounding: label` goes into every task's params: its demonstration clicks by name (`click_label`, written by
`web_agent.observation.grounded`) instead of by id; the environment takes both forms from any agent.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal, get_args

from raygent.environments.web.agent.demos import demonstrations, ensure_recorded
from raygent.environments.web.agent.observation import Grounding, with_grounding
from raygent.environments.web.agent.splits import HELDOUT_START
from raygent.environments.web.agent.tasks import heldout_seeds, template_ids
from raygent.environments.web.doc_tools import commands_run, target_pages
from raygent.environments.web.registry import make_task
from raygent.environments.web.server import ui_spec
from raygent.platform.config import Count, Share
from raygent.platform.contracts import Task

Variant = Literal["none", "tools", "oracle"]
VARIANTS: tuple[str, ...] = get_args(Variant)
TRAIN_LAYOUTS = 8
HELDOUT_LAYOUT = 100_000
TRAIN_PARAM_POOL = 2


@lru_cache(maxsize=4096)
def task_commands(template_id: str, param_seed: int) -> tuple[str, ...]:
    """The commands the expert runs for these parameters (its recorded episode on the default layout: which
    commands a task needs does not depend on where the layout puts them)."""
    task = make_task(f"{template_id}/{param_seed}", ui_seed=0).to_platform()
    turns = demonstrations([task])[0]
    app = template_id.split("/")[0]
    return tuple(dict.fromkeys(commands_run(turns, ui_spec(app, 0))))


def prefetch_commands(keys: Sequence[tuple[str, int]], workers: int = 2) -> None:
    """Record the default-layout expert episodes of `(template id, parameter seed)` pairs in one batch (a browser
    per thread), so that `task_commands` reads them from the cache."""
    ensure_recorded([make_task(f"{tid}/{seed}", ui_seed=0).to_platform() for tid, seed in set(keys)], workers)


def template_commands(template_id: str) -> tuple[str, ...]:
    """The commands of the template's parameter seed 0 (whether the template needs a menu command at all)."""
    return task_commands(template_id, 0)


def with_docs(task: Task, docs: str) -> Task:
    """`task` tagged with a documentation variant, its commands and their pages."""
    if docs not in VARIANTS:
        raise ValueError(f"docs must be one of {VARIANTS}, got {docs!r}")
    app, template = task.params["app"], task.params["template"]
    commands = list(task_commands(f"{app}/{template}", int(task.params["seed"])))
    params = {**task.params, "docs": docs, "doc_commands": commands, "doc_targets": target_pages(app, commands)}
    return task.model_copy(update={"params": params})


def docos_templates(
    apps: Sequence[str] | None, templates: Sequence[str] | None, difficulties: Sequence[int], exclude: Sequence[str]
) -> list[str]:
    """Template ids whose expert runs at least one menu command (a task the docs can help with)."""
    return [tid for tid in template_ids(apps, templates, difficulties, exclude) if template_commands(tid)]


def docos_tasks(
    split: str,
    seed: int,
    n: int,
    apps: Sequence[str] | None = ("media_player",),
    templates: Sequence[str] | None = None,
    difficulties: Sequence[int] = (1,),
    exclude: Sequence[str] = (),
    docs: Variant = "tools",
    default_share: Share = 0.2,
    none_share: Share = 0.2,
    pool: Count = TRAIN_PARAM_POOL,
    layouts: Count = TRAIN_LAYOUTS,
    grounding: Grounding = "id",
) -> list[Task]:
    """`n` tasks of `split` (`train`, `heldout`: unseen layouts, `default`: layout 0) from `seed`, tagged `docs`
    (in `train`, `none_share` of them `none` on the default layout instead; see the module docstring)."""
    ids = docos_templates(apps, templates, difficulties, exclude)
    if not ids:
        raise ValueError(f"no template of apps {apps} at difficulties {list(difficulties)} runs a menu command")
    rng = random.Random(f"docos/{split}/{seed}")
    chosen: list[tuple[Task, str]] = []
    if split == "train":
        for _ in range(n):
            tid, param_seed = rng.choice(ids), rng.randrange(pool)
            variant = docs
            if rng.random() < none_share:
                variant, layout = "none", 0
            else:
                layout = 0 if rng.random() < default_share else rng.randint(1, layouts)
            chosen.append((make_task(f"{tid}/{param_seed}", ui_seed=layout).to_platform(), variant))
        return _tagged(chosen, grounding)
    if split not in ("heldout", "default"):
        raise ValueError(f"split must be 'train', 'heldout' or 'default', got {split!r}")
    per_template = -(-n // len(ids))
    offset = rng.randrange(HELDOUT_START)
    seeds = {tid: heldout_seeds(tid, per_template, offset) for tid in ids}
    for i in range(n):
        tid = ids[i % len(ids)]
        layout = 0 if split == "default" else HELDOUT_LAYOUT + rng.randrange(HELDOUT_LAYOUT)
        chosen.append((make_task(f"{tid}/{seeds[tid][i // len(ids)]}", ui_seed=layout).to_platform(), docs))
    return _tagged(chosen, grounding)


def _tagged(chosen: list[tuple[Task, str]], grounding: Grounding) -> list[Task]:
    prefetch_commands([(f"{t.params['app']}/{t.params['template']}", int(t.params["seed"])) for t, _ in chosen])
    return with_grounding([with_docs(task, docs) for task, docs in chosen], grounding)
