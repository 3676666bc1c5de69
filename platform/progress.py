"""A rich progress bar for Tune sweeps, fed by a Tune callback running in the driver."""

from __future__ import annotations

from typing import Any

from ray.tune import Callback
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


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

    def __getstate__(self) -> dict[str, Any]:
        # Tune pickles its run config into the experiment state; the live display stays in this process.
        return {"metric": self.metric, "task": self.task, "errors": self.errors, "progress": None}

    def __enter__(self) -> SweepProgress:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def on_trial_result(self, iteration: int, trials: list[Any], trial: Any, result: dict, **info: Any) -> None:
        if self.progress is None:
            return
        value = result.get(self.metric)
        running = sum(1 for t in trials if t.status == "RUNNING")
        shown = f"{self.metric}={value:.4g}" if isinstance(value, int | float) else ""
        self.progress.update(self.task, status=f"{running} running · last {shown}")

    def on_trial_complete(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        if self.progress is not None:
            self.progress.advance(self.task)

    def on_trial_error(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self.errors += 1
        if self.progress is None:
            return
        self.progress.advance(self.task)
        self.progress.update(self.task, status=f"[red]{self.errors} errored")
