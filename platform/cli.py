"""`raygent`: the one command line of the platform (typer + rich).

Every command takes CONFIG as a job name (`fls` → `jobs/configs/fls.yaml`) or a path, then `key=value`
overrides (`study.alpha=0.1`, `sweep.max_concurrent_trials=1`). A bad config exits with status 2 and one
line naming the key; nothing is started before the whole config validates.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from raygent.platform import rundir
from raygent.platform.config import ConfigError, JobConfig, configs_dir, load_config, load_entry

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode="rich",
    help="raygent: train agents and run paper studies on Ray.",
)
console = Console(highlight=False)
_state: dict[str, Any] = {"verbose": False}

CONFIG_HELP = "Job name (e.g. fls) or path to a YAML config."
OVERRIDES_HELP = "key=value overrides, e.g. study.alpha=0.1 sweep.max_concurrent_trials=1"


def _fail(message: str, code: int = 2) -> NoReturn:
    console.print(f"[bold red]error:[/] {message}", soft_wrap=True)
    raise typer.Exit(code)


def _load(config: str | None, overrides: list[str] | None, resume: Path | None) -> tuple[JobConfig, Path | None]:
    try:
        if resume is not None:
            if overrides:
                _fail("--resume continues a run with its saved config; drop the key=value overrides")
            return rundir.load_run_config(resume), resume.resolve()
        if config is None:
            _fail("missing CONFIG (a job name such as fls, or a path to a YAML file)")
        return load_config(config, overrides or []), None
    except ConfigError as exc:
        _fail(str(exc))


def _connect(config: JobConfig, address: str | None) -> None:
    from raygent.platform.cluster import connect

    try:
        info = connect(address or config.cluster.address, config.cluster.num_cpus, _state["verbose"])
    except ConnectionError as exc:
        _fail(f"cannot reach the Ray cluster: {exc}", code=1)
    where = "embedded local cluster" if info.embedded else f"cluster at {info.address}"
    origin = Path(__file__).resolve().parent
    console.print(
        f"raygent.platform from {origin} · {where} · {info.num_cpus:g} CPU, {info.num_gpus:g} GPU", soft_wrap=True
    )


@app.callback()
def _options(verbose: bool = typer.Option(False, "--verbose", "-v", help="Show Ray's own logs.")) -> None:
    from raygent.platform.cluster import use_auth_token_if_available

    _state["verbose"] = verbose
    use_auth_token_if_available()  # before Ray is imported: it reads RAY_AUTH_MODE once


@app.command("list", epilog="Example: raygent list --json")
def list_jobs(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """List the jobs: their kind and one line each (read from the configs, without importing the jobs)."""
    import yaml

    jobs = []
    for path in sorted(configs_dir().glob("*.yaml")):
        data = yaml.safe_load(path.read_text()) or {}
        jobs.append(
            {
                "name": data.get("job", path.stem),
                "kind": data.get("kind", "sweep"),
                "summary": data.get("description", ""),
                "entry": data.get("entry", ""),
                "config": str(path),
            }
        )
    if as_json:
        typer.echo(json.dumps(jobs, indent=2))
        return
    table = Table("job", "kind", "summary")
    for job in jobs:
        table.add_row(job["name"], job["kind"], job["summary"])
    console.print(table)


@app.command(
    epilog="Examples: raygent sweep fls · raygent sweep fls sweep.max_concurrent_trials=1 --out runs/fls-a"
    " · raygent sweep --resume runs/fls/20261130-101500"
)
def sweep(
    config: str | None = typer.Argument(None, help=CONFIG_HELP),
    overrides: list[str] | None = typer.Argument(None, help=OVERRIDES_HELP),
    out: Path | None = typer.Option(None, "--out", help="Run directory (default runs/<job>/<timestamp>)."),
    resume: Path | None = typer.Option(None, "--resume", help="Continue an interrupted sweep in this run directory."),
    address: str | None = typer.Option(
        None, "--address", help="Join this Ray cluster (default: RAY_ADDRESS or embedded)."
    ),
) -> None:
    """Run a study's search space as a Ray Tune sweep and report whether the paper's claim held."""
    job_config, run_dir = _load(config, overrides, resume)
    if job_config.kind != "sweep":
        _fail(f"{job_config.job} is a {job_config.kind} job; use: raygent run {job_config.job}")
    run_dir = _run_dir(job_config, run_dir, out)
    _connect(job_config, address)
    summary = _tune(job_config, run_dir, resume is not None, single=False)
    _print_verdict(summary)
    _print_outputs(run_dir)
    if summary["errored"] == summary["trials"]:
        raise typer.Exit(1)


@app.command(epilog="Examples: raygent run fls study.alpha=0.1 · raygent run --resume runs/fls/20261130-101500")
def run(
    config: str | None = typer.Argument(None, help=CONFIG_HELP),
    overrides: list[str] | None = typer.Argument(None, help=OVERRIDES_HELP),
    out: Path | None = typer.Option(None, "--out", help="Run directory (default runs/<job>/<timestamp>)."),
    resume: Path | None = typer.Option(None, "--resume", help="Continue an interrupted run in this run directory."),
    address: str | None = typer.Option(
        None, "--address", help="Join this Ray cluster (default: RAY_ADDRESS or embedded)."
    ),
) -> None:
    """Run a job: an agent training job, or one trial of a study at the config's values."""
    job_config, run_dir = _load(config, overrides, resume)
    run_dir = _run_dir(job_config, run_dir, out)
    _connect(job_config, address)
    if job_config.kind == "run":
        load_entry(job_config.entry)().run(job_config, run_dir, resume=resume is not None)
    else:
        summary = _tune(job_config, run_dir, resume is not None, single=True)
        results = pd_read(run_dir)
        table = Table("metric", "value", title=f"{job_config.job}: one trial")
        for key, value in results.iloc[0].items():
            table.add_row(str(key), f"{value:.4g}" if isinstance(value, float) else str(value))
        console.print(table)
        if summary["errored"]:
            _print_outputs(run_dir)
            raise typer.Exit(1)
    _print_outputs(run_dir)


@app.command(epilog="Example: raygent submit fls --address http://127.0.0.1:8265 --wait")
def submit(
    config: str = typer.Argument(..., help=CONFIG_HELP),
    overrides: list[str] | None = typer.Argument(None, help=OVERRIDES_HELP),
    address: str = typer.Option(..., "--address", help="The cluster's Jobs address, e.g. http://HEAD:8265."),
    wait: bool = typer.Option(False, "--wait", help="Follow the logs and exit with the job's status."),
    out: str | None = typer.Option(None, "--out", help="Run directory on the cluster (default runs/<job>/<time>)."),
) -> None:
    """Send a job to a running Ray cluster as a Ray Job, with raygent packed as a wheel."""
    from raygent.platform.submit import follow
    from raygent.platform.submit import submit as submit_job

    job_config, _ = _load(config, overrides, None)
    command = "sweep" if job_config.kind == "sweep" else "run"
    try:
        job_id = submit_job(job_config, address, command, out, echo=typer.echo, verbose=_state["verbose"])
    except (ConnectionError, RuntimeError) as exc:
        _fail(f"cannot submit to the Ray Jobs API at {address}: {exc}", code=1)
    if not wait:
        typer.echo(f"follow it with: ray job logs --address {address} -f {job_id}")
        typer.echo(job_id)
        return
    status = follow(address, job_id, echo=typer.echo)
    typer.echo(f"job {job_id}: {status}")
    raise typer.Exit(0 if status == "SUCCEEDED" else 1)


@app.command(epilog="Example: raygent report runs/fls/20261130-101500")
def report(run_dir: Path = typer.Argument(..., help="A run directory written by raygent sweep.")) -> None:
    """Rebuild a sweep's verdict, plot and report.html from its results."""
    from raygent.platform.report import load_results, write_report

    job_config, _ = _load(None, None, run_dir)
    if not (run_dir / rundir.RESULTS_FILE).is_file():
        _fail(f"{run_dir}: no {rundir.RESULTS_FILE} yet (resume the sweep with --resume {run_dir})", code=1)
    summary = write_report(run_dir.resolve(), job_config, load_results(run_dir), wall_s=None)
    _print_verdict(summary)
    typer.echo(str((run_dir / rundir.REPORT_FILE).resolve()))


@app.command(epilog="Examples: raygent tasks · raygent tasks media_player --json")
def tasks(
    web_app: str | None = typer.Argument(None, help="One app of the novel-software suite (default: all)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """List the web apps' task templates: id, difficulty (1 atomic, 2 composed, 3 long) and the instruction."""
    import random

    from raygent.environments.web.registry import available_apps, load_app

    apps = [web_app] if web_app else list(available_apps())
    rows = []
    for name in apps:
        try:
            templates = load_app(name)
        except KeyError as error:
            _fail(str(error.args[0]))
        for template, cls in templates.items():
            task = cls()
            example = task.goal(task.sample(random.Random(0)))
            rows.append({"app": name, "template": template, "difficulty": cls.difficulty, "example": example})
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("app", "template", "level", "example instruction", title=f"{len(rows)} task templates")
    for row in rows:
        table.add_row(row["app"], row["template"], str(row["difficulty"]), row["example"])
    console.print(table)


@app.command(
    epilog="Examples: raygent serve runs/grpo_toy/20261130-101500 · "
    "curl -X POST localhost:8000/v1/act -d '{\"task\": {\"instruction\": \"What is 2+3?\"}, "
    "\"observation\": {\"text\": \"What is 2+3?\"}}'"
)
def serve(
    run_dir: Path = typer.Argument(..., help="A run directory (an agent run serves its trained policy)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address the HTTP proxy binds."),
    port: int = typer.Option(8000, "--port", help="HTTP port."),
    backend: str = typer.Option("hf", "--backend", help="Inference backend for the policy: hf or vllm."),
    address: str | None = typer.Option(None, "--address", help="Join this Ray cluster (default: embedded)."),
    once: bool = typer.Option(False, "--once", help="Deploy, print the URL and exit (the app keeps running)."),
) -> None:
    """Serve a run as a Ray Serve app: /v1/act and /v1/chat/completions for agents, /v1/summary, /v1/report."""
    import time

    from ray import serve as ray_serve

    from raygent.platform.serving import build_app

    job_config, _ = _load(None, None, run_dir)
    _connect(job_config, address)
    ray_serve.start(http_options={"host": host, "port": port})
    ray_serve.run(build_app({"run_dir": str(run_dir.resolve()), "backend": backend}), name="raygent", route_prefix="/")
    typer.echo(f"serving {run_dir} at http://{host}:{port}  (POST /v1/act, /v1/chat/completions; GET /v1/summary)")
    if once:
        return
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        ray_serve.shutdown()


@app.command(epilog="Examples: raygent status · raygent status --address http://127.0.0.1:8265")
def status(
    address: str | None = typer.Option(None, "--address", help="A cluster's Jobs address: list its jobs."),
    runs: Path = typer.Option(Path("runs"), "--runs", help="Where local runs live."),
) -> None:
    """Show local runs and their verdicts, or the jobs on a cluster."""
    if address:
        from ray.job_submission import JobSubmissionClient

        try:
            jobs = JobSubmissionClient(address).list_jobs()
        except ConnectionError as exc:
            _fail(f"cannot reach the Ray Jobs API at {address}: {exc}", code=1)
        table = Table("submission id", "status", "entrypoint", title=f"jobs at {address}")
        for job in jobs:
            table.add_row(str(job.submission_id), str(job.status.value), job.entrypoint)
        console.print(table)
        return
    table = Table("run", "job", "verdict", "trials", title=f"runs under {runs}")
    for summary_path in sorted(runs.glob(f"*/*/{rundir.SUMMARY_FILE}")):
        summary = json.loads(summary_path.read_text())
        verdict = "[green]holds[/]" if summary.get("holds") else "[red]does not hold[/]"
        table.add_row(str(summary_path.parent), summary.get("job", "?"), verdict, str(summary.get("trials", "")))
    console.print(table)
    typer.echo(f"RAY_ADDRESS={os.environ.get('RAY_ADDRESS', '(unset: commands start an embedded cluster)')}")


def _run_dir(config: JobConfig, resumed: Path | None, out: Path | None) -> Path:
    if resumed is not None:
        return resumed
    path = rundir.new_run_dir(config.job, out)
    rundir.save_config(path, config)
    return path


def _tune(config: JobConfig, run_dir: Path, resume: bool, single: bool) -> dict[str, Any]:
    from raygent.platform.progress import SweepProgress
    from raygent.platform.report import finalize
    from raygent.platform.tune_runner import run_tuner, trial_count

    study = load_entry(config.entry)
    start = time.perf_counter()
    with SweepProgress(trial_count(config, single), study.metric, console) as progress:
        results = run_tuner(config, run_dir, resume=resume, single=single, callbacks=[progress])
    if single:
        results.to_csv(run_dir / rundir.RESULTS_FILE, index=False)
        return {"trials": len(results), "errored": int((results["status"] == "ERROR").sum())}
    return finalize(run_dir, config, results, wall_s=time.perf_counter() - start)


def pd_read(run_dir: Path) -> Any:
    import pandas as pd

    return pd.read_csv(run_dir / rundir.RESULTS_FILE)


def _print_verdict(summary: dict[str, Any]) -> None:
    mark = "[bold green]HOLDS[/]" if summary["holds"] else "[bold red]DOES NOT HOLD[/]"
    console.print(f"\n[bold]{summary['job']}[/] claim: {summary['claim']}\n→ {mark}", soft_wrap=True)
    for name, ok in summary.get("checks", {}).items():
        console.print(f"  {'[green]✔' if ok else '[red]✘'}[/] {name}", soft_wrap=True)
    if summary.get("errored"):
        console.print(f"[yellow]{summary['errored']} of {summary['trials']} trials errored[/]")


def _print_outputs(run_dir: Path) -> None:
    for name in (rundir.REPORT_FILE, rundir.SUMMARY_FILE, rundir.RESULTS_FILE):
        if (run_dir / name).exists():
            console.print(f"  {name:<12} {run_dir / name}", soft_wrap=True)
    typer.echo(str(run_dir))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
