"""`raygent sweep`: one study's search space as a `ray.tune.Tuner` run, then its verdict and report.

The sweep's param_space holds every parameter of the study (fixed ones as constants, swept ones as Tune
domains), so each trial's directory records the full configuration and `--resume` needs nothing but the
run directory: `Tuner.restore` picks up unfinished and errored trials and leaves finished ones alone.
Each trial start and end is appended to `trials.jsonl`, which is how a user (and the resume test) sees
which trials ran in which attempt.

A trial that finished just before the driver was killed may not yet be marked finished in Tune's
experiment state (saved at most once a second here); Tune then starts it again on resume. The trial
wrapper finds its `end` record with the final metrics and replays them instead of recomputing, so a
finished trial never runs twice.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from raygent.platform import rundir, session
from raygent.platform.config import JobConfig, load_entry
from raygent.platform.session import result_row
from raygent.platform.study import TuneStudy

# Keys Tune adds to every result; the results table keeps only what the study reported.
_TUNE_KEYS = {
    "trial_id",
    "timestamp",
    "time_this_iter_s",
    "time_total_s",
    "pid",
    "hostname",
    "node_ip",
    "done",
    "training_iteration",
    "date",
    "time_since_restore",
    "iterations_since_restore",
    "timesteps_since_restore",
    "checkpoint_dir_name",
    "config",
    "should_checkpoint",
    "experiment_tag",
    "timesteps_total",
    "episodes_total",
    "experiment_id",
    "episode_reward_mean",
}


def make_trainable(entry: str, events_path: str | None, threads: int) -> Callable[[dict[str, Any]], None]:
    """The function Tune runs: import the study where the trial runs, log the attempt, call its trainable."""

    def raygent_trial(config: dict[str, Any]) -> None:
        from ray import tune

        study = load_entry(entry)()
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(max(1, threads))
        session.reset(study.metric)
        trial_id = tune.get_context().get_trial_id()
        finished = _finished_metrics(events_path, trial_id)
        if finished is not None:
            _log_event(events_path, {"event": "replayed", "trial_id": trial_id})
            tune.report(finished)
            return
        _log_event(events_path, {"event": "start", "trial_id": trial_id, "config": config})
        study.trainable(config)
        _log_event(events_path, {"event": "end", "trial_id": trial_id, "metrics": session.last_report()})

    return raygent_trial


def _finished_metrics(path: str | None, trial_id: str) -> dict[str, Any] | None:
    if path is None or not os.path.isfile(path):
        return None
    with open(path) as handle:
        for line in handle:
            event = json.loads(line)
            if event.get("trial_id") == trial_id and event.get("event") == "end" and event.get("metrics"):
                return dict(event["metrics"])
    return None


def _log_event(path: str | None, event: dict[str, Any]) -> None:
    if path is None or not os.path.isdir(os.path.dirname(path)):
        return  # a remote worker without the driver's filesystem: Tune's own records still hold
    event = {"time": time.time(), "pid": os.getpid(), **event}
    with open(path, "a") as handle:
        handle.write(json.dumps(event, default=str) + "\n")


def param_space(config: JobConfig, single: bool = False) -> dict[str, Any]:
    """Fixed study parameters as constants, swept ones as Tune domains (none when `single`)."""
    swept = {} if single else config.sweep.space
    space: dict[str, Any] = {k: v for k, v in config.study.model_dump().items() if k not in swept}
    # Tune varies the last grid key fastest, so trials run in the YAML's order: last knob fastest.
    space.update({knob: dim.to_tune() for knob, dim in swept.items()})
    return space


def trial_count(config: JobConfig, single: bool = False) -> int:
    if single:
        return 1
    grid = math.prod(len(dim.grid) for dim in config.sweep.space.values() if dim.grid is not None)
    return grid * config.sweep.num_samples


def _tune_config(config: JobConfig, study: TuneStudy, single: bool) -> Any:
    from ray import tune

    search_alg = scheduler = None
    if config.sweep.search == "optuna" and not single:
        from ray.tune.search.optuna import OptunaSearch

        search_alg = OptunaSearch(seed=config.study.seed)
    if config.sweep.scheduler.type == "asha" and not single:
        from ray.tune.schedulers import ASHAScheduler

        settings = config.sweep.scheduler
        scheduler = ASHAScheduler(
            time_attr="training_iteration",
            grace_period=settings.grace_period,
            reduction_factor=settings.reduction_factor,
            max_t=settings.max_t,
        )
    return tune.TuneConfig(
        metric=study.metric,
        mode=study.mode,
        search_alg=search_alg,
        scheduler=scheduler,
        num_samples=1 if single else config.sweep.num_samples,
        max_concurrent_trials=_concurrency(config),
        reuse_actors=True,  # a trial's process start (imports of torch etc.) costs more than many trials
    )


def _concurrency(config: JobConfig) -> int | None:
    """`sweep.max_concurrent_trials`, with `auto` sized from the connected cluster's resources."""
    from ray import cluster_resources

    from raygent.platform.config import concurrent_trials

    if config.sweep.max_concurrent_trials != "auto":
        return concurrent_trials(config.sweep, 0, 0)
    resources = cluster_resources()
    return concurrent_trials(config.sweep, float(resources.get("CPU", 0)), float(resources.get("GPU", 0)))


def run_tuner(
    config: JobConfig,
    run_dir: Path,
    resume: bool = False,
    single: bool = False,
    callbacks: list[Any] | None = None,
) -> pd.DataFrame:
    """Run (or resume) the sweep in `run_dir`; returns the results table."""
    from ray import tune

    os.environ.setdefault("TUNE_GLOBAL_CHECKPOINT_S", "1")
    study: TuneStudy = load_entry(config.entry)()
    resources = config.sweep.resources_per_trial
    trainable = tune.with_resources(
        make_trainable(config.entry, str(run_dir / rundir.EVENTS_FILE), threads=int(resources.cpu)),
        {"cpu": resources.cpu, "gpu": resources.gpu},
    )
    tune_path = run_dir / rundir.TUNE_DIR
    if resume and tune.Tuner.can_restore(str(tune_path)):
        tuner = tune.Tuner.restore(str(tune_path), trainable=trainable, resume_unfinished=True, resume_errored=True)
    else:
        tuner = tune.Tuner(
            trainable,
            param_space=param_space(config, single),
            tune_config=_tune_config(config, study, single),
            run_config=tune.RunConfig(
                name=rundir.TUNE_DIR,
                storage_path=str(run_dir),
                verbose=0,
                callbacks=callbacks,
                failure_config=tune.FailureConfig(max_failures=1),
            ),
        )
    grid = tuner.fit()
    rows = []
    for index in range(len(grid)):
        result = grid[index]
        params = study.params_model.model_validate(
            {key: value for key, value in (result.config or {}).items() if key in study.params_model.model_fields}
        ).model_dump()
        metrics = {
            k: v for k, v in (result.metrics or {}).items() if k not in _TUNE_KEYS and not k.startswith("config/")
        }
        row = result_row(params, [metrics] if metrics else [], trial_id=str((result.metrics or {}).get("trial_id")))
        row["iterations"] = int((result.metrics or {}).get("training_iteration", 0) or 0)
        if result.error is not None:
            row["status"] = "ERROR"
        rows.append(row)
    return pd.DataFrame(rows).sort_values("trial_id", ignore_index=True)
