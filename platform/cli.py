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
from rich.markup import escape
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
err_console = Console(stderr=True, highlight=False)
_state: dict[str, Any] = {"verbose": False}

DEFAULT_MAX_BODY_KB = 1024
"""`raygent serve --max-body-kb`: 1 MiB, room for an accessibility tree and a long history (policy_api's default)."""
CONFIG_HELP = "Job name (e.g. fls) or path to a YAML config."
OVERRIDES_HELP = "key=value overrides, e.g. study.alpha=0.1 sweep.max_concurrent_trials=1"


def _print_error(message: str) -> None:
    printable = message.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates from odd argv
    err_console.print(f"[bold red]error:[/] {escape(printable)}", soft_wrap=True)


def _fail(message: str, code: int = 2) -> NoReturn:
    """`error: MESSAGE` on stderr (rich markup in the message is shown as typed), then exit `code`."""
    _print_error(message)
    raise typer.Exit(code)


def _load(
    config: str | None, overrides: list[str] | None, resume: Path | None, command: str = "run", remote: bool = False
) -> tuple[JobConfig, Path | None]:
    try:
        if resume is not None:
            extra = [config] if config is not None else []
            extra += overrides or []
            if extra:
                _fail(
                    f"--resume {resume} continues a run with its saved config; drop {' '.join(extra)!r} "
                    f"(start a new run instead: raygent {command} CONFIG key=value ... --out DIR)"
                )
            return rundir.load_run_config(resume), resume.resolve()
        if config is None:
            _fail("missing CONFIG (a job name such as fls, or a path to a YAML file)")
        return load_config(config, overrides or [], remote=remote), None
    except ConfigError as exc:
        _fail(str(exc))


def _plan(config: JobConfig, resumed: Path | None, out: str | None, force: bool) -> Path:
    """The run directory, checked before Ray starts and created only once the job can start (`_start`)."""
    if resumed is not None:
        if out is not None:
            _fail(f"--resume {resumed} already names the run directory; drop --out {out}")
        return resumed
    if out is not None and not out.strip():
        _fail(f"--out {out!r}: expected a directory path for the run, e.g. --out runs/{config.job}-a")
    try:
        return rundir.plan_run_dir(config.job, None if out is None else Path(out), force=force)
    except ConfigError as exc:
        _fail(str(exc))


def _start(config: JobConfig, run_dir: Path, resumed: bool) -> Path:
    if resumed:
        return run_dir
    try:
        made = rundir.make_run_dir(run_dir)
    except ConfigError as exc:
        _fail(str(exc))
    rundir.save_config(made, config)
    return made


def _connect(config: JobConfig, address: str | None) -> None:
    from raygent.platform.cluster import connect

    source = "--address" if address else ("cluster.address" if config.cluster.address else None)
    target = address or config.cluster.address
    try:
        info = connect(target, config.cluster.num_cpus, _state["verbose"], source=source)
    except ConfigError as exc:
        _fail(str(exc))
    except ConnectionError as exc:
        _fail(f"cannot reach the Ray cluster: {exc}", code=2 if target or os.environ.get("RAY_ADDRESS") else 1)
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
    out: str | None = typer.Option(None, "--out", help="Run directory (default runs/<job>/<timestamp>)."),
    resume: Path | None = typer.Option(None, "--resume", help="Continue an interrupted sweep in this run directory."),
    address: str | None = typer.Option(
        None, "--address", help="Join this Ray cluster (default: RAY_ADDRESS or embedded)."
    ),
    force: bool = typer.Option(False, "--force", help="Allow an --out that is already a run directory."),
) -> None:
    """Run a study's search space as a Ray Tune sweep and report whether the paper's claim held."""
    job_config, resumed = _load(config, overrides, resume, "sweep")
    if job_config.kind != "sweep":
        _fail(f"{job_config.job} is a {job_config.kind} job; use: raygent run {job_config.job}")
    run_dir = _plan(job_config, resumed, out, force)
    _connect(job_config, address)
    run_dir = _start(job_config, run_dir, resumed is not None)
    summary = _tune(job_config, run_dir, resume is not None, single=False)
    _print_verdict(summary)
    _print_outputs(run_dir)
    if summary["errored"] == summary["trials"]:
        raise typer.Exit(1)


@app.command(epilog="Examples: raygent run fls study.alpha=0.1 · raygent run --resume runs/fls/20261130-101500")
def run(
    config: str | None = typer.Argument(None, help=CONFIG_HELP),
    overrides: list[str] | None = typer.Argument(None, help=OVERRIDES_HELP),
    out: str | None = typer.Option(None, "--out", help="Run directory (default runs/<job>/<timestamp>)."),
    resume: Path | None = typer.Option(None, "--resume", help="Continue an interrupted run in this run directory."),
    address: str | None = typer.Option(
        None, "--address", help="Join this Ray cluster (default: RAY_ADDRESS or embedded)."
    ),
    force: bool = typer.Option(False, "--force", help="Allow an --out that is already a run directory."),
) -> None:
    """Run a job: an agent training job, or one trial of a study at the config's values."""
    job_config, resumed = _load(config, overrides, resume, "run")
    run_dir = _plan(job_config, resumed, out, force)
    _connect(job_config, address)
    run_dir = _start(job_config, run_dir, resumed is not None)
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
    out: str | None = typer.Option(
        None, "--out", help="Run directory on the cluster (default <storage>/<job>/<time>)."
    ),
    storage: str | None = typer.Option(
        None,
        "--storage",
        help="Durable folder on the cluster for runs (default: cluster.storage, else ~/raygent-runs on the head).",
    ),
) -> None:
    """Send a job to a running Ray cluster as a Ray Job, with raygent packed as a wheel."""
    from raygent.platform.cluster import jobs_url
    from raygent.platform.submit import follow, logs_command, run_path
    from raygent.platform.submit import submit as submit_job

    job_config, _ = _load(config, overrides, None, remote=True)  # model paths may exist only on the cluster
    try:
        url = jobs_url(address)
        target = run_path(job_config, out, storage)
    except ConfigError as exc:
        _fail(str(exc))
    command = "sweep" if job_config.kind == "sweep" else "run"
    try:
        job_id = submit_job(job_config, url, command, target, echo=typer.echo, verbose=_state["verbose"])
    except (ConnectionError, RuntimeError, ValueError) as exc:
        _fail(f"cannot submit to the Ray Jobs API at {address}: {exc}")
    if not wait:
        typer.echo(f"follow it with: {logs_command(url, job_id)}")
        typer.echo(job_id)
        return
    status = follow(url, job_id, echo=typer.echo)
    typer.echo(f"job {job_id}: {status}")
    raise typer.Exit(0 if status == "SUCCEEDED" else 1)


@app.command(epilog="Example: raygent report runs/fls/20261130-101500")
def report(run_dir: Path = typer.Argument(..., help="A run directory written by raygent sweep.")) -> None:
    """Rebuild a sweep's verdict, plot and report.html from its results."""
    from raygent.platform.report import rebuild_report

    job_config, _ = _load(None, None, run_dir, "sweep")
    if not (run_dir / rundir.RESULTS_FILE).is_file():
        _fail(f"{run_dir}: no {rundir.RESULTS_FILE} yet (resume the sweep with --resume {run_dir})", code=1)
    try:
        summary = rebuild_report(run_dir, job_config)
    except ConfigError as exc:  # a results.csv that is not the sweep's table
        _fail(str(exc))
    _print_verdict(summary)
    typer.echo(str((run_dir / rundir.REPORT_FILE).resolve()))


@app.command(epilog="Examples: raygent tasks · raygent tasks media_player --json · raygent tasks mybench --read-pages")
def tasks(
    web_app: str | None = typer.Argument(None, help="One app of the novel-software suite (default: all)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
    read_pages: bool = typer.Option(
        False,
        "--read-pages",
        help="Open the page of each template that reads its goal from its page (Chromium, seed 0) to show it.",
    ),
) -> None:
    """List the web apps' task templates: id, difficulty (1 atomic, 2 composed, 3 long) and the instruction."""
    import inspect
    from importlib.metadata import entry_points

    # The apps come from the installed packages' `raygent.apps` entry points (the suite's five and any others'),
    # each an app object (or a function returning one or a list) whose `describe_tasks()` gives the rows.
    found = {entry.name: entry for entry in entry_points(group="raygent.apps")}
    if web_app is not None and web_app not in found:
        _fail(f"unknown app {web_app!r}; apps: {', '.join(found) or 'none installed (run make setup)'}")
    rows = []
    for name in [web_app] if web_app else list(found):
        loaded = found[name].load()
        loaded = loaded() if callable(loaded) else loaded
        for web in loaded if isinstance(loaded, list | tuple) else [loaded]:
            describe = web.describe_tasks
            pages = read_pages and "read_pages" in inspect.signature(describe).parameters
            rows.extend(describe(read_pages=True) if pages else describe())
    for row in rows:  # another package's describe_tasks may give none
        row["example"] = row.get("example") or "(no example instruction)"
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("app", "template", "level", "example instruction", title=f"{len(rows)} task templates")
    for row in rows:
        table.add_row(row["app"], row["template"], str(row["difficulty"]), row["example"])
    console.print(table)


@app.command(
    "eval",
    epilog="Examples: raygent eval toolcalc --policy runs/grpo_toy/20261207-101500 · "
    "raygent eval toolcalc --policy smollm2-135m-instruct --episodes 64",
)
def eval_policy(
    env: str = typer.Argument(..., help="A registered environment's name (raygent envs)."),
    policy: str = typer.Option(..., "--policy", help="A run directory, a preset or a model directory."),
    episodes: int | None = typer.Option(None, "--episodes", help="Tasks evaluated, one episode each (default 64)."),
    seed: int | None = typer.Option(None, "--seed", help="The held-out draw's seed (default: the run's, else 0)."),
    split: str | None = typer.Option(None, "--split", help="The task split (default: the environment's eval split)."),
    out: str | None = typer.Option(None, "--out", help="Output directory (default runs/eval/<env>-<timestamp>)."),
    address: str | None = typer.Option(
        None, "--address", help="Join this Ray cluster (default: RAY_ADDRESS or embedded)."
    ),
) -> None:
    """Evaluate a policy on a registered environment without training: greedy success overall and per template,
    with 95 % intervals (summary.json, trajectories.jsonl)."""
    from raygent.platform.cluster import connect
    from raygent.platform.evaluate import eval_sections, run_eval

    try:
        config, model, described = eval_sections(env, policy, episodes, seed, split)
    except ConfigError as exc:
        _fail(str(exc))
    try:
        directory = rundir.plan_run_dir("eval", None if out is None else Path(out))
    except ConfigError as exc:
        _fail(str(exc))
    if out is None:
        directory = directory.with_name(f"{env}-{directory.name}")
    try:
        connect(address, None, _state["verbose"], source="--address" if address else None)
    except ConfigError as exc:
        _fail(str(exc))
    except ConnectionError as exc:
        _fail(f"cannot reach the Ray cluster: {exc}", code=2 if address or os.environ.get("RAY_ADDRESS") else 1)
    directory.mkdir(parents=True, exist_ok=True)
    summary = run_eval(config, model, directory, env, described)
    table = Table("template", "episodes", "success", "95 % interval", title=f"{env}: {policy}")
    for name, row in summary["templates"].items():
        low, high = row["ci95"]
        table.add_row(name, str(row["episodes"]), f"{row['success']:.3f}", f"{low:.3f}–{high:.3f}")
    console.print(table)
    low, high = summary["ci95"]
    console.print(
        f"success {summary['success']:.3f} (95 % interval {low:.3f}–{high:.3f}) on {summary['episodes']} episodes "
        f"of split {summary['split']!r}, seed {summary['seed']}; infrastructure failures: {summary['infra_failures']}"
    )
    console.print(f"outputs: {directory}")


@app.command(epilog="Examples: raygent envs · raygent envs --json")
def envs(as_json: bool = typer.Option(False, "--json", help="Machine-readable output (the specs).")) -> None:
    """List the registered environments (entry point group raygent.envs): name, task splits and one line each.
    A run config takes one by name: env: {name: NAME} (keys beside the name override the spec's)."""
    from raygent.platform.envs import EnvRegistryError, registered_envs

    try:
        specs = list(registered_envs().values())
    except EnvRegistryError as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(json.dumps([spec.model_dump(mode="json") for spec in specs], indent=2))
        return
    if not specs:
        typer.echo("no environments registered (run make setup)")
        return
    rows = [("environment", "splits", "description")] + [(s.name, ",".join(s.splits), s.description) for s in specs]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    for name, splits, description in rows:  # one line each, never wrapped
        typer.echo(f"{name:<{widths[0]}}  {splits:<{widths[1]}}  {description}")


@app.command(
    epilog="Examples: raygent serve runs/grpo_toy/20261130-101500 · "
    'curl localhost:8000/v1/act -H \'Content-Type: application/json\' -d \'{"task": {"instruction": '
    '"What is 2+3?"}, "observation": {"text": "What is 2+3?"}}\' · '
    "OPENAI_BASE_URL=http://localhost:8000/v1 with any OpenAI client"
)
def serve(
    run_dir: Path = typer.Argument(..., help="A run directory (an agent run serves its trained policy)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address the HTTP proxy binds."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="HTTP port."),
    backend: str = typer.Option("hf", "--backend", help="Inference backend for the policy: hf or vllm."),
    address: str | None = typer.Option(None, "--address", help="Join this Ray cluster (default: embedded)."),
    max_body_kb: int = typer.Option(
        DEFAULT_MAX_BODY_KB, "--max-body-kb", min=1, max=1024 * 1024, help="Largest request body accepted (KiB)."
    ),
    once: bool = typer.Option(
        False,
        "--once",
        help="Deploy to the cluster of --address (or RAY_ADDRESS), print the URL and exit; the app keeps running "
        "there. Not with the embedded cluster, which stops when this command exits.",
    ),
) -> None:
    """Serve a run as a Ray Serve app: /v1/act, OpenAI's /v1/chat/completions and /v1/models for agents;
    /v1/summary, /v1/report, /healthz for every run."""
    if backend not in {"hf", "vllm"}:
        _fail(f"--backend {backend!r}: expected hf or vllm")
    job_config, _ = _load(None, None, run_dir, "serve")
    if once and not (address or os.environ.get("RAY_ADDRESS")):
        _fail(
            "--once leaves the app running on a cluster you join (--address or RAY_ADDRESS); the embedded "
            "cluster would stop with this command, so serve without --once to keep it up"
        )
    from raygent.platform.cluster import probe

    if host not in {"0.0.0.0", "::"}:
        _check_port_free(host, port, probe)
    _connect(job_config, address)

    from ray import serve as ray_serve

    from raygent.platform.serving import build_app

    ray_serve.start(http_options={"host": host, "port": port})
    args = {"run_dir": str(run_dir.resolve()), "backend": backend, "max_body_bytes": max_body_kb * 1024}
    ray_serve.run(build_app(args), name="raygent", route_prefix="/")
    typer.echo(
        f"serving {run_dir} at http://{host}:{port}  (POST /v1/act, /v1/chat/completions; GET /v1/models, /v1/summary)"
    )
    if once:
        typer.echo(
            "the app keeps running on the cluster; stop it with: serve shutdown (or ray_serve.delete('raygent'))"
        )
        return
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        ray_serve.shutdown()


def _check_port_free(host: str, port: int, probe: Any) -> None:
    """Refuse an unknown host, or a port something already answers on (Serve would fail later with a long
    traceback)."""
    import socket

    try:
        socket.getaddrinfo(host, port)
    except (socket.gaierror, UnicodeError) as exc:
        _fail(f"--host {host!r}: not an address this machine can bind ({exc})")
    try:
        probe(host, port, f"--port {port}", timeout_s=1.0)
    except ConfigError:
        return  # nothing answers: free
    _fail(f"--port {port}: something already listens on {host}:{port}; pick another port")


@app.command(epilog="Examples: raygent status · raygent status --address http://127.0.0.1:8265")
def status(
    address: str | None = typer.Option(None, "--address", help="A cluster's Jobs address: list its jobs."),
    runs: Path = typer.Option(Path("runs"), "--runs", help="Where local runs live."),
) -> None:
    """Show local runs and their verdicts, or the jobs on a cluster."""
    if address:
        from raygent.platform.cluster import jobs_url, quiet_ray_logs

        try:
            url = jobs_url(address)
        except ConfigError as exc:
            _fail(str(exc))
        from ray.job_submission import JobSubmissionClient

        quiet_ray_logs(_state["verbose"])
        try:
            jobs = JobSubmissionClient(url).list_jobs()
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError or HTTP errors here
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            _fail(f"--address {address!r}: not a Ray Jobs API ({first})")
        table = Table("submission id", "status", "entrypoint", title=f"jobs at {escape(url)}")
        for job in jobs:
            table.add_row(escape(str(job.submission_id)), str(job.status.value), escape(job.entrypoint))
        console.print(table)
        return
    if runs.exists() and not runs.is_dir():
        _fail(f"--runs {runs}: is a file; expected the folder runs are written under")
    table = Table("run", "job", "verdict", "trials", title=f"runs under {escape(str(runs))}")
    for summary_path in sorted(runs.rglob(rundir.SUMMARY_FILE)) if runs.is_dir() else []:
        if rundir.TUNE_DIR in summary_path.relative_to(runs).parts:
            continue
        try:
            summary = json.loads(summary_path.read_text())
        except (OSError, ValueError):
            continue  # a run writing its summary right now, or not a raygent file
        if not isinstance(summary, dict):
            continue
        verdict = "[green]holds[/]" if summary.get("holds") else "[red]does not hold[/]"
        table.add_row(
            escape(str(summary_path.parent)),
            escape(str(summary.get("job", "?"))),
            verdict,
            escape(str(summary.get("trials", ""))),
        )
    console.print(table)
    typer.echo(f"RAY_ADDRESS={os.environ.get('RAY_ADDRESS', '(unset: commands start an embedded cluster)')}")


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


def main(argv: list[str] | None = None) -> None:
    """The `raygent` entry point. Click's own usage errors (a missing argument, an option of the wrong type) are
    printed like raygent's: `error: ...` on stderr, exit 2, no traceback and no boxed panel."""
    import sys

    try:  # typer >= 0.22 carries its own copy of click
        from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
    except ImportError:  # pragma: no cover - older typer on plain click
        from click.exceptions import ClickException, NoArgsIsHelpError, UsageError  # type: ignore[assignment]

    try:
        code = app(args=argv, prog_name="raygent", standalone_mode=False)
    except NoArgsIsHelpError as exc:
        typer.echo(exc.ctx.get_help() if exc.ctx else exc.format_message())
        sys.exit(0)
    except UsageError as exc:
        where = (
            f"raygent {exc.ctx.command_path.split(' ', 1)[1]}" if exc.ctx and " " in exc.ctx.command_path else "raygent"
        )
        _print_error(f"{exc.format_message()} (see: {where} --help)")
        sys.exit(2)
    except ClickException as exc:
        _print_error(exc.format_message())
        sys.exit(exc.exit_code)
    except typer.Abort:
        _print_error("interrupted")
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
