"""DocOS's search, measured apart from any agent: does `search_docs(<the task's instruction>)` find the page the
task needs, ranked by BM25, by sentence embeddings (WordLlama) or by both fused (RRF)?

    python bench/doc_retrieval.py [--tasks 120] [--seeds 0 1 2] [--apps media_player code_editor ...]

Per seed, DocOS's held-out tasks (`docos_tasks`: unseen randomized layouts) and default-layout tasks of every app
(difficulties 1 and 2; the first run records the experts' episodes that say which commands a task needs, with a
browser, and caches them). The query is the task's instruction verbatim, as a pretrained agent was seen to search
(docs/docos.md), restricted to the task's app as `DocLoop` does. Per ranker and split: `hit1` (the first result is
one of the task's target pages), `hit3` (one of the three results `DocLoop` shows is), `mrr` (mean reciprocal rank
of the first target page, 0 when none is ranked). Last line: `<ranker>_hit1=… <ranker>_hit3=… <ranker>_mrr=…`
over all tasks and seeds, then `tasks=…`.
"""

from __future__ import annotations

import argparse
from statistics import mean

from raygent.environments.web.doc_tools import RANKERS, doc_index
from raygent.environments.web.registry import BUILTIN_APPS
from raygent.jobs.docos.tasks import docos_tasks
from raygent.platform.contracts import Task


def ranks(task: Task, ranker: str) -> int | None:
    """The 1-based rank of the first target page among the app's pages, None when no target is ranked."""
    index = doc_index(int(task.params["ui_seed"]), ranker)
    hits = index.search(task.instruction, str(task.params["app"]), k=len(index.paths))
    targets = set(task.params["doc_targets"])
    return next((rank for rank, hit in enumerate(hits, 1) if hit.path in targets), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=120, help="tasks per split and seed")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--apps", nargs="+", default=list(BUILTIN_APPS))
    args = parser.parse_args()
    found: dict[str, list[int | None]] = {r: [] for r in RANKERS}
    for split in ("heldout", "default"):
        per_split: dict[str, list[int | None]] = {r: [] for r in RANKERS}
        for seed in args.seeds:
            tasks = docos_tasks(split, seed, args.tasks, apps=args.apps, difficulties=(1, 2))
            for ranker in RANKERS:
                per_split[ranker] += [ranks(task, ranker) for task in tasks]
        for ranker, got in per_split.items():
            found[ranker] += got
            print(f"{split:8s} {ranker:7s} {summary(got)} (n={len(got)})", flush=True)
    print(" ".join(f"{ranker}_{key}={value:.3f}" for ranker in RANKERS for key, value in scores(found[ranker]).items())
          + f" tasks={len(found[RANKERS[0]])}")  # fmt: skip


def scores(got: list[int | None]) -> dict[str, float]:
    return {
        "hit1": mean(r == 1 for r in got),
        "hit3": mean(r is not None and r <= 3 for r in got),
        "mrr": mean(1.0 / r if r else 0.0 for r in got),
    }


def summary(got: list[int | None]) -> str:
    return " ".join(f"{key} {value:.3f}" for key, value in scores(got).items())


if __name__ == "__main__":
    main()
