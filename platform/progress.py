"""A rich progress bar for Tune sweeps, fed by a Tune callback running in the driver.

The bar counts trials that have ended (terminated or errored) from Tune's own trial list at every event, so a
resumed sweep starts at the trials already done. `Tuner.restore` does not take callbacks: it unpickles the ones
saved with the experiment, so a pickled `SweepProgress` carries only a key, and unpickling it in the driver
finds the live bar under that key (`_LIVE`).
"""

from __future__ import annotations

import itertools
from typing import Any

from ray.tune import Callback
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

_LIVE: dict[int, SweepProgress] = {}
_KEYS = itertools.count()
_ENDED = {"TERMINATED", "ERROR"}


class SweepProgress(Callback):
    """Advances one bar per finished trial and shows the latest value of the study's metric."""

    def __init__(self, total: int, metric: str, console: Console | None = None) -> None:
        self.metric = metric
        self.progress: Progress | None = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[status]}"),
            console=console,
            transient=False,
        )
        self.task = self.progress.add_task("trials", total=total, status="starting")
        self.errors = 0
        self.key = next(_KEYS)

    def __getstate__(self) -> dict[str, Any]:
        # Tune pickles its run config into the experiment state; the live display stays in this process.
        return {"metric": self.metric, "task": self.task, "errors": self.errors, "progress": None, "key": -1}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        live = next(reversed(_LIVE.values()), None)  # a restore in the driver: report to the live bar
        if live is not None and live.metric == self.metric:
            self.progress, self.task, self.key = live.progress, live.task, live.key

    def __enter__(self) -> SweepProgress:
        _LIVE[self.key] = self
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        _LIVE.pop(self.key, None)
        if self.progress is not None:
            self.progress.stop()

    def _count(self, trials: list[Any]) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=sum(1 for t in trials if t.status in _ENDED))

    def on_step_begin(self, iteration: int, trials: list[Any], **info: Any) -> None:
        if self.progress is None or not trials:
            return
        self._count(trials)
        running = sum(1 for t in trials if t.status == "RUNNING")
        task = self.progress.tasks[self.task] if self.task < len(self.progress.tasks) else None
        if task is not None and task.fields.get("status") == "starting" and running:
            self.progress.update(self.task, status=f"{running} running")

    def on_trial_result(self, iteration: int, trials: list[Any], trial: Any, result: dict, **info: Any) -> None:
        if self.progress is None:
            return
        value = result.get(self.metric)
        running = sum(1 for t in trials if t.status == "RUNNING")
        shown = f"{self.metric}={value:.4g}" if isinstance(value, int | float) else ""
        self.progress.update(self.task, status=f"{running} running · last {shown}")

    def on_trial_complete(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=sum(1 for t in trials if t.status in _ENDED or t is trial))

    def on_trial_error(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self.errors += 1
        if self.progress is None:
            return
        self.progress.update(self.task, completed=sum(1 for t in trials if t.status in _ENDED or t is trial))
        self.progress.update(self.task, status=f"[red]{self.errors} errored")
