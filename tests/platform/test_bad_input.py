"""A corpus of bad inputs, CLI and Serve. Every CLI case exits 2 with one `error: ...` on stderr naming the input,
prints nothing on stdout, raises no traceback and leaves nothing on disk; every Serve case is a 4xx in OpenAI's
error format naming the input, and the server still answers afterwards.

The CLI cases run `raygent.platform.cli.main` in this process (what the `raygent` script calls), in a scratch
working directory; a handful also run as a real subprocess at the end.
"""

from __future__ import annotations

import functools
import json
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from served_run import make_agent_run, uvicorn_app

from raygent.platform.serving import build_api

from conftest import free_port, raygent

FLS = "raygent.jobs.fls.study:FLSStudy"
REFUSED = free_port()  # a loopback port nothing listens on (bound and released)
FILES: dict[str, bytes] = {
    "nonutf8.yaml": b"job: fls\nentry: \xff\xfe\n",
    "latin1.yaml": "job: fls\ndescription: caf\u00e9\n".encode("latin-1"),
    "empty.yaml": b"",
    "comments.yaml": b"# only a comment\n",
    "dupkey.yaml": f"job: fls\nentry: {FLS}\njob: other\n".encode(),
    "dupnested.yaml": f"job: fls\nentry: {FLS}\nstudy:\n  seed: 1\n  seed: 2\n".encode(),
    "badyaml.yaml": b"job: fls\nentry: [\n",
    "list.yaml": b"- job\n- fls\n",
    "scalar.yaml": b"just some text\n",
    "noentry.yaml": b"job: fls\n",
    "entry_fn.yaml": b"job: fls\nentry: os.path:join\n",
    "entry_nomod.yaml": b"job: fls\nentry: raygent.jobs.nowhere:Study\n",
    "entry_noattr.yaml": b"job: fls\nentry: raygent.jobs.fls.study:FLSStudi\n",
    "entry_notjob.yaml": b"job: fls\nentry: collections:OrderedDict\n",
    "entry_form.yaml": b"job: fls\nentry: not an entry\n",
    "inf.yaml": f"job: fls\nentry: {FLS}\nstudy:\n  alpha: .inf\n".encode(),
    "badjob.yaml": f"job: Bad-Name\nentry: {FLS}\n".encode(),
    "boolint.yaml": f"job: fls\nentry: {FLS}\nstudy:\n  width: true\n".encode(),
    "afile": b"not a directory",
}

# An fls sweep's results.csv, for the run directories below whose table lacks a column (`RESULTS_WITHOUT`).
RESULTS = pd.DataFrame(
    [
        {"alpha": alpha, "seed": seed, "status": "TERMINATED", "test_error": 0.1 + abs(alpha - 0.3)}
        | {"participation_ratio": alpha, "gd_steps": 10, "reached_target": 1}
        for alpha in (0.01, 0.3, 1.0)
        for seed in (0, 1)
    ]
)
RESULTS_WITHOUT = {"nometric": "test_error", "nostatus": "status", "noratio": "participation_ratio", "noknob": "alpha"}

# (argv, what stderr must contain). `{tmp}` is the scratch directory; files above are in it; `oldrun/` is a run
# directory with a valid config, `emptyrun/` one whose config.yaml is empty, `notrun/` one with a non-run config;
# `nometric/` etc. are fls sweeps whose results.csv lacks a column (`RESULTS_WITHOUT`), `emptyresults/` one whose
# results.csv is empty.
CLI_CASES: list[tuple[list[str], str]] = [
    # config files
    (["run", "nonutf8.yaml"], "nonutf8.yaml: not UTF-8 text (byte 0xff on line 2)"),
    (["sweep", "latin1.yaml"], "latin1.yaml: not UTF-8 text"),
    (["run", "empty.yaml"], "empty.yaml: the config file is empty"),
    (["run", "comments.yaml"], "comments.yaml: the config file is empty"),
    (
        ["run", "dupkey.yaml"],
        "dupkey.yaml: not valid YAML: line 3, column 1: duplicate key 'job' (first given on line 1)",
    ),
    (["run", "dupnested.yaml"], "duplicate key 'seed' (first given on line 4)"),
    (["run", "badyaml.yaml"], "badyaml.yaml: not valid YAML: line 3"),
    (["run", "list.yaml"], "list.yaml: expected a mapping at the top level, got list"),
    (["run", "scalar.yaml"], "scalar.yaml: expected a mapping at the top level, got str"),
    (["run", "noentry.yaml"], "entry: required key is missing"),
    (["run", "entry_fn.yaml"], "entry: 'os.path:join' is a function; expected 'module:attr' naming a job class"),
    (["run", "entry_nomod.yaml"], "entry: 'raygent.jobs.nowhere:Study': no module named 'raygent.jobs.nowhere'"),
    (["run", "entry_noattr.yaml"], "has no attribute 'FLSStudi' (did you mean 'FLSStudy'?)"),
    (["run", "entry_notjob.yaml"], "entry: 'collections:OrderedDict' is a class without params_model"),
    (["run", "entry_form.yaml"], "entry: 'not an entry' is not of the form 'module:attr'"),
    (["run", "inf.yaml"], "study.alpha: got inf; expected a finite number"),
    (["run", "badjob.yaml"], "job: got 'Bad-Name'"),
    (["run", "missing.yaml"], "config file 'missing.yaml' does not exist"),
    (["run", "flz"], "no job named 'flz' (did you mean 'fls'?)"),
    (["run", "."], "config '.' is a directory"),
    (["run", ""], "CONFIG is empty"),
    (["run", "[bold]x[/bold]"], "config file '[bold]x[/bold]' does not exist"),
    (["sweep", "grpo_toy"], "grpo_toy is a run job; use: raygent run grpo_toy"),
    # overrides
    (["run", "fls", "study.sed=1"], "study.sed: unknown key (did you mean 'seed'?)"),
    (["run", "fls", "sweep.num_samples=0"], "sweep.num_samples: got 0"),
    (["run", "fls", "noequals"], "override 'noequals': expected key=value"),
    (["run", "fls", "=1"], "override '=1': expected key=value"),
    (["run", "fls", "a..b=1"], "override 'a..b=1': expected key=value"),
    (["run", "fls", "study.seed.x=1"], "study.seed: got {'x': 1}; expected input should be a valid integer"),
    (["run", "fls", "job.x=1"], "override 'job.x=1': 'job' is a value, not a section"),
    (["run", "fls", "sweep=3"], "sweep: got 3"),
    (["run", "fls", "sweep.space.seed.grid=[]"], "sweep.space.seed: "),
    (["run", "fls", "sweep.scheduler.reduction_factor=.inf"], "sweep.scheduler.reduction_factor: got inf"),
    (["run", "fls", "study.lr=nan"], "study.lr: got 'nan'"),
    (["run", "fls", "sweep.space.lr.uniform=[0.1, .inf]"], "sweep.space.lr.uniform.1: got inf"),
    (["run", "fls", "sweep.space.alpha.uniform=[0.1, 1]"], "sweep.space.alpha: give exactly one of grid, choice"),
    (["run", "fls", "cluster.num_cpus=0"], "cluster.num_cpus: got 0"),
    (
        ["run", "grpo_toy", "env.tasks=raygent.jobs.grpo_toy.tasks:nope"],
        "env.tasks: 'raygent.jobs.grpo_toy.tasks:nope'",
    ),
    (["run", "grpo_toy", "env.registration=raygent.nowhere:f"], "env.registration: 'raygent.nowhere:f'"),
    (["run", "grpo_toy", "env.demonstrations=os:getcwd"], "env.demonstrations: 'os:getcwd' cannot be called with 1"),
    (["run", "grpo_toy", "env.tasks=os.path:exists"], "cannot be called with 3 positional argument(s)"),
    (["run", "grpo_toy", "rollout.episode_timeout_s=.inf"], "rollout.episode_timeout_s: got inf"),
    (["run", "grpo_toy", "policy.model=/nope/model"], "policy.model: '/nope/model' is neither a pretrained preset"),
    (["run", "grpo_toy", "learner.lr=.inf"], "learner.lr: got inf; expected a finite number"),
    # true/false where a number is expected (pydantic alone reads them as 1 and 0)
    (["run", "boolint.yaml"], "study.width: got True; expected an integer, not true/false"),
    (["run", "fls", "study.alpha=true"], "study.alpha: got True; expected a number, not true/false"),
    (["sweep", "fls", "sweep.space.seed.grid=[0, true]"], "sweep.space.seed.grid.1: got True; expected an integer"),
    (["sweep", "fls", "sweep.max_concurrent_trials=true"], "sweep.max_concurrent_trials: got True; expected an"),
    (["run", "grpo_toy", "trainer.steps=true"], "trainer.steps: got True; expected an integer, not true/false"),
    (["run", "grpo_toy", "rollout.sampling.temperature=false"], "rollout.sampling.temperature: got False; expected"),
    (["run", "grpo_toy", "env.task_kwargs.difficulty=true"], "env.task_kwargs.difficulty: got True; expected an"),
    (
        ["run", "grpo_toy", "learner.loss.terms=[{name: grpo, coef: true}]"],
        "learner.loss.terms: loss term 'grpo': coef: got True; expected a number, not true/false",
    ),
    # run directories
    (["run", "fls", "--out", ""], "--out '': expected a directory path"),
    (["run", "fls", "--out", "  "], "--out '  ': expected a directory path"),
    (["run", "fls", "--out", "afile"], "--out 'afile' is a file"),
    (["sweep", "fls", "--out", "afile/sub"], "--out 'afile/sub': cannot create"),
    (["run", "fls", "--out", "/proc/raygent-nope/run"], "--out '/proc/raygent-nope/run': cannot create"),
    (["run", "fls", "--out", "oldrun"], "--out 'oldrun' is already a run directory; continue it with --resume oldrun"),
    (["run", "fls", "--resume", "oldrun"], "--resume oldrun continues a run with its saved config; drop 'fls'"),
    (["sweep", "--resume", "oldrun", "study.seed=2"], "drop 'study.seed=2'"),
    (["run", "--resume", "oldrun", "--out", "x"], "--resume "),
    (["run", "--resume", "emptyrun"], "emptyrun/config.yaml: the run's saved config is empty"),
    (["run", "--resume", "notrun"], "notrun/config.yaml: not a valid run config: entry: required key is missing"),
    (["run", "--resume", "nowhere"], "nowhere: does not exist; expected a raygent run directory"),
    (["run", "--resume", "afile"], "afile: is a file; expected a raygent run directory"),
    (["sweep", "--resume", "."], ".: not a raygent run directory (no config.yaml)"),
    (["report", "."], ".: not a raygent run directory"),
    (["report", "nometric"], "nometric/results.csv: no column 'test_error' (needed for the fls study's report); its"),
    (["report", "nostatus"], "nostatus/results.csv: no column 'status' (needed for the fls study's report)"),
    (["report", "noknob"], "noknob/results.csv: no column 'alpha' (needed"),
    (["report", "noratio"], "noratio/results.csv: no column 'participation_ratio' (needed"),  # only fls's plot reads it
    (["report", "emptyresults"], "emptyresults/results.csv: the file is empty"),
    # addresses
    (["run", "fls", "--address", "justahost"], "--address 'justahost': no port"),
    (["run", "fls", "--address", "127.0.0.1:abc"], "port 'abc' is not a number"),
    (["run", "fls", "--address", "127.0.0.1:0"], "port '0' is not a number in 1..65535"),
    (["sweep", "fls", "--address", "http://127.0.0.1:8265"], "a Jobs address http://... is for submit"),
    (["run", "fls", "--address", f"127.0.0.1:{REFUSED}"], f"--address '127.0.0.1:{REFUSED}': nothing answers"),
    (["run", "fls", "--address", f"ray://127.0.0.1:{REFUSED}"], "nothing answers"),
    (["run", "fls", f"cluster.address=127.0.0.1:{REFUSED}"], f"cluster.address '127.0.0.1:{REFUSED}': nothing answers"),
    (["status", "--address", "ftp://host"], "--address 'ftp://host': scheme 'ftp'"),
    (["status", "--address", "http://:8265"], "is not a host name"),
    (["status", "--address", "http://127.0.0.1:99999"], "port '99999' is not a number"),
    (
        ["status", "--address", f"http://127.0.0.1:{REFUSED}"],
        f"--address 'http://127.0.0.1:{REFUSED}': nothing answers",
    ),
    (["status", "--runs", "afile"], "--runs afile: is a file"),
    (["submit", "fls", "--address", f"127.0.0.1:{REFUSED}"], "nothing answers"),
    (["submit", "fls", "--address", "not a url"], "is not a host name"),
    # serve
    (["serve", "."], ".: not a raygent run directory"),
    (["serve", "nowhere"], "nowhere: does not exist"),
    (["serve", "oldrun", "--backend", "tf"], "--backend 'tf': expected hf or vllm"),
    (["serve", "oldrun", "--once"], "--once leaves the app running on a cluster you join"),
    (["serve", "oldrun", "--host", "no such host!"], "--host 'no such host!'"),
    # a LoRA target the model does not have, before Ray starts (the tiny preset's layers; peft would adapt q_proj
    # alone, or fail inside the learner actor when no target matches)
    (
        ["run", "grpo_toy_tiny", "learner.lora={rank: 4, target_modules: [q_proj, qkv_proj]}"],
        "learner.lora.target_modules: ['qkv_proj'] is no linear layer of the model (qwen2: its linear layers are",
    ),
    (["run", "grpo_toy_tiny", "learner.lora={target_modules: [c_attn]}", "policy.preset=tiny-llama"], "['c_attn']"),
    # click's own checks, printed the same way
    (["run", "fls", "--bogus"], "No such option: --bogus"),
    (["serve"], "Missing argument"),
    (["submit", "fls"], "Missing option '--address'"),
    (["serve", "oldrun", "--port", "0"], "Invalid value for '--port'"),
    (["serve", "oldrun", "--port", "abc"], "Invalid value for '--port'"),
    (["serve", "oldrun", "--max-body-kb", "0"], "Invalid value for '--max-body-kb'"),
]


def _tree(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from raygent.platform import rundir
    from raygent.platform.config import load_config

    root = tmp_path_factory.mktemp("bad-input")
    for name, data in FILES.items():
        (root / name).write_bytes(data)
    old = root / "oldrun"
    old.mkdir()
    rundir.save_config(old, load_config("fls"))
    (root / "emptyrun").mkdir()
    (root / "emptyrun" / "config.yaml").write_text("")
    (root / "notrun").mkdir()
    (root / "notrun" / "config.yaml").write_text("job: fls\n")
    for name, column in [*RESULTS_WITHOUT.items(), ("emptyresults", None)]:
        (root / name).mkdir()
        rundir.save_config(root / name, load_config("fls"))
        table = RESULTS.drop(columns=[column]).to_csv(index=False) if column else ""
        (root / name / "results.csv").write_text(table)
    return root


# ids name the free port REFUSED as PORT: every pytest-xdist worker must collect the same ids
@pytest.mark.parametrize(
    ("argv", "expected"), CLI_CASES, ids=[" ".join(a).replace(str(REFUSED), "PORT")[:60] for a, _ in CLI_CASES]
)
def test_cli_bad_input_exits_2_naming_it(
    argv: list[str], expected: str, scratch: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from raygent.platform.cli import main

    monkeypatch.chdir(scratch)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    before = _tree(scratch)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    assert exit_info.value.code == 2, (out, err)
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert expected in err, err
    assert out == "" and "Traceback" not in err
    assert _tree(scratch) == before, "a failed command left something on disk"


def test_ray_address_from_the_environment_is_named(
    scratch: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from raygent.platform.cli import main

    monkeypatch.chdir(scratch)
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{REFUSED}")
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "fls"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith(f"error: RAY_ADDRESS '127.0.0.1:{REFUSED}': nothing answers")
    assert not (scratch / "runs").exists()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "fls", "--address", "127.0.0.1:{port}"], "no answer from 127.0.0.1:{port} within 5 s"),
        (["status", "--address", "http://127.0.0.1:{port}"], "no answer from 127.0.0.1:{port} within 5 s"),
    ],
)
def test_a_port_that_accepts_but_never_answers_fails_within_the_probe(
    argv: list[str],
    expected: str,
    scratch: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A firewall or proxy that accepts the connection and stays silent: Ray would retry for a minute."""
    from raygent.platform.cli import main

    monkeypatch.chdir(scratch)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = str(silent.getsockname()[1])
        with pytest.raises(SystemExit) as exit_info:
            main([arg.replace("{port}", port) for arg in argv])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and expected.replace("{port}", port) in err, err
    assert not (scratch / "runs").exists()


def test_a_port_that_speaks_another_protocol_is_named(
    scratch: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`status --address` at a Ray GCS port (gRPC) instead of the dashboard: said at once."""
    from concurrent import futures

    import grpc

    from raygent.platform.cli import main

    monkeypatch.chdir(scratch)
    server = grpc.server(futures.ThreadPoolExecutor(1))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with pytest.raises(SystemExit) as exit_info:
            main(["status", "--address", f"127.0.0.1:{port}"])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and "accepts connections but does not answer as the Ray Jobs API" in err
        from raygent.platform.cluster import check_ray_address

        check_ray_address(f"127.0.0.1:{port}")  # a gRPC server passes the GCS probe
    finally:
        server.stop(None)


def test_serve_refuses_a_port_in_use(
    scratch: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from raygent.platform.cli import main

    monkeypatch.chdir(scratch)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(SystemExit) as exit_info:
            main(["serve", "oldrun", "--port", str(port)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and f"--port {port}: something already listens" in err


def test_status_lists_runs_at_any_depth(tmp_path: Path) -> None:
    for name in ("fls/20260101-000000", "fls-a", "nested/deeper/run"):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "summary.json").write_text(json.dumps({"job": "fls", "holds": True, "trials": 3}))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "summary.json").write_text("{half")
    done = raygent("status", "--runs", str(tmp_path))
    assert done.returncode == 0, done.stderr
    for name in ("20260101-000000", "fls-a", "deeper/run"):
        assert name in done.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "{tmp}/nonutf8.yaml"],
        ["run", "fls", "--address", f"127.0.0.1:{REFUSED}"],
        ["status", "--address", f"http://127.0.0.1:{REFUSED}"],
        ["run", "fls", "--out", ""],
        ["run", "fls", "--nope"],
        ["report", "{tmp}/nometric"],
        ["run", "fls", "study.seed=true"],
    ],
)
def test_the_real_command_fails_fast_on_stderr(argv: list[str], scratch: Path) -> None:
    """As a user runs it: exit 2, `error:` on stderr, nothing on stdout or disk, and no hang (the probe gives up
    after 5 s; the timeout here fails the test, it does not measure it)."""
    done = raygent(*[arg.replace("{tmp}", str(scratch)) for arg in argv], cwd=scratch, timeout=30)
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
    assert not (scratch / "runs").exists()


# -- Serve ----------------------------------------------------------------------------------------------------


@functools.cache
def _agent_run() -> Path:
    return make_agent_run(Path(tempfile.mkdtemp(prefix="raygent-bad-")) / "run")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with uvicorn_app(build_api(_agent_run(), max_body_bytes=64 * 1024)) as base:
        yield base


def _send(base: str, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    import urllib.error
    import urllib.request

    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"{base}{path}", data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


ACT = {"task": {"instruction": "What is 2+3?"}, "observation": {"text": "What is 2+3?"}}
CHAT = {"model": "grpo_toy_tiny", "messages": [{"role": "user", "content": "What is 2+3?"}], "max_tokens": 4}


def _chat(**changes: Any) -> dict[str, Any]:
    return {**CHAT, **changes}


SERVE_CASES: list[tuple[str, str, Any, int, str]] = [
    ("POST", "/v1/act", {"task": {"instruction": ""}, "observation": {"text": "x"}}, 422, "task.instruction"),
    ("POST", "/v1/act", {"task": {"instruction": "x"}}, 422, "observation: Field required"),
    ("POST", "/v1/act", {**ACT, "pad": 1}, 422, "pad: Extra inputs are not permitted"),
    (
        "POST",
        "/v1/act",
        b'{"task": {"instruction": "x"}, "observation": {"text": "x"}, "temperature": NaN}',
        422,
        "temperature",
    ),
    ("POST", "/v1/act", {**ACT, "temperature": 5}, 422, "temperature"),
    ("POST", "/v1/act", {**ACT, "attempts": 0}, 422, "attempts"),
    ("POST", "/v1/act", {**ACT, "max_new_tokens": 0}, 422, "max_new_tokens"),
    ("POST", "/v1/act", {**ACT, "history": "not a list"}, 422, "history"),
    ("POST", "/v1/act", b'{"task": {"instruction": "\\ud800"}, "observation": {"text": "x"}}', 422, "task.instruction"),
    ("POST", "/v1/act", {**ACT, "observation": {"text": "7 " * 20_000}}, 400, "context is 4096 tokens"),
    ("POST", "/v1/act", b"{not json", 422, "not valid JSON"),
    ("POST", "/v1/act", b"[1, 2]", 422, "valid dictionary"),
    ("POST", "/v1/act", {**ACT, "pad": "x" * 70_000}, 413, "raygent serve --max-body-kb"),
    # far over the socket buffers: the 413 still reaches a client that sends its whole body before reading
    ("POST", "/v1/act", {**ACT, "pad": "x" * 16_000_000}, 413, "raygent serve --max-body-kb"),
    ("POST", "/v1/chat/completions", _chat(messages=[]), 422, "messages"),
    ("POST", "/v1/chat/completions", _chat(messages=[{"role": "robot", "content": "x"}]), 422, "role"),
    ("POST", "/v1/chat/completions", _chat(messages=[{"role": "user"}]), 422, "a user message needs content"),
    ("POST", "/v1/chat/completions", _chat(messages="hi"), 422, "messages"),
    (
        "POST",
        "/v1/chat/completions",
        json.dumps(_chat()).replace('"max_tokens": 4', '"temperature": NaN').encode(),
        422,
        "temperature",
    ),
    (
        "POST",
        "/v1/chat/completions",
        json.dumps(_chat()).replace('"max_tokens": 4', '"top_p": Infinity').encode(),
        422,
        "top_p",
    ),
    ("POST", "/v1/chat/completions", _chat(seed=2**64), 422, "seed"),
    ("POST", "/v1/chat/completions", _chat(seed=-(2**63) - 1), 422, "seed"),
    ("POST", "/v1/chat/completions", _chat(stop=""), 422, "stop"),
    ("POST", "/v1/chat/completions", _chat(stop=["a", ""]), 422, "stop"),
    ("POST", "/v1/chat/completions", _chat(stop=["a", "b", "c", "d", "e"]), 422, "stop"),
    ("POST", "/v1/chat/completions", _chat(n=0), 422, "n"),
    ("POST", "/v1/chat/completions", _chat(n=9), 422, "n"),
    ("POST", "/v1/chat/completions", _chat(max_tokens=0), 422, "max_tokens"),
    ("POST", "/v1/chat/completions", _chat(top_p=0), 422, "top_p"),
    (
        "POST",
        "/v1/chat/completions",
        b'{"model": "grpo_toy_tiny", "messages": [{"role": "user", "content": "\\udc80x"}]}',
        422,
        "lone surrogate",
    ),
    ("POST", "/v1/chat/completions", _chat(max_tokens=4095), 400, "max_tokens asks for 4095 more"),
    (
        "POST",
        "/v1/chat/completions",
        _chat(messages=[{"role": "user", "content": "7 " * 60_000}]),
        413,
        "over 65536 bytes",
    ),
    (
        "POST",
        "/v1/chat/completions",
        _chat(messages=[{"role": "user", "content": "7 " * 20_000}]),
        400,
        "context is 4096",
    ),
    (
        "POST",
        "/v1/chat/completions",
        _chat(tools=[{"type": "function", "function": {"name": "f"}}]),
        400,
        "tools: not supported",
    ),
    ("POST", "/v1/chat/completions", _chat(response_format={"type": "json_object"}), 400, "response_format"),
    ("POST", "/v1/chat/completions", _chat(logit_bias={"1": 5}), 400, "logit_bias: not supported"),
    ("POST", "/v1/chat/completions", _chat(frequency_penalty=1.0), 400, "frequency_penalty: only 0"),
    ("POST", "/v1/chat/completions", _chat(tool_choice="required"), 400, "tool_choice"),
    (
        "POST",
        "/v1/chat/completions",
        _chat(stream_options={"include_usage": True}),
        400,
        "stream_options: only with stream",
    ),
    ("POST", "/v1/chat/completions", _chat(stream=True, temperature=-1), 422, "temperature"),
    ("POST", "/v1/chat/completions", _chat(stream=True, tools=[{"type": "function"}]), 400, "tools"),
    (
        "POST",
        "/v1/chat/completions",
        _chat(messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]),
        400,
        "content part type 'image_url'",
    ),
    ("POST", "/v1/chat/completions", _chat(model="gpt-4o"), 404, "model 'gpt-4o' does not exist here"),
    ("GET", "/v1/models/gpt-4o", None, 404, "model 'gpt-4o' does not exist here"),
    ("GET", "/v1/nope", None, 404, "no route GET /v1/nope"),
    ("GET", "/v1/chat/completions", None, 405, "Method Not Allowed"),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "expected"),
    SERVE_CASES,
    ids=[f"{i}-{case[1].rsplit('/', 1)[-1]}-{case[3]}" for i, case in enumerate(SERVE_CASES)],
)
def test_serve_bad_request_is_a_4xx_in_openai_format(
    server: str, method: str, path: str, body: Any, status: int, expected: str
) -> None:
    before = _tree(_agent_run())
    code, answer = _send(server, method, path, body)
    assert code == status, answer
    error = answer["error"]
    assert expected in error["message"], error
    assert error["type"] in {"invalid_request_error", "not_found_error"}
    assert _tree(_agent_run()) == before


def test_the_server_is_healthy_after_the_corpus(server: str) -> None:
    assert _send(server, "GET", "/healthz") == (200, {"status": "ok"})
    code, answer = _send(server, "POST", "/v1/act", ACT)
    assert code == 200 and isinstance(answer["action"], str)
    code, answer = _send(server, "POST", "/v1/chat/completions", CHAT)
    assert code == 200 and answer["choices"][0]["message"]["role"] == "assistant"


def test_a_path_without_a_run_yet_is_served_as_waiting(tmp_path: Path) -> None:
    """A RayService started before its run exists stays healthy, answers 503 naming the path, and serves the run
    once it appears."""
    from raygent.platform import rundir
    from raygent.platform.config import load_config

    pending = tmp_path / "later"
    with uvicorn_app(build_api(pending)) as base:
        assert _send(base, "GET", "/healthz") == (200, {"status": "waiting", "detail": f"no run at {pending} yet"})
        code, answer = _send(base, "GET", "/v1/summary")
        assert code == 503 and str(pending) in answer["error"]["message"]
        pending.mkdir()
        rundir.save_config(pending, load_config("fls"))
        (pending / "summary.json").write_text(json.dumps({"job": "fls", "holds": True}))
        assert _send(base, "GET", "/healthz") == (200, {"status": "ok"})
        assert _send(base, "GET", "/v1/summary") == (200, {"job": "fls", "holds": True})
        code, answer = _send(base, "POST", "/v1/act", ACT)
        assert code == 404 and "no trained policy" in answer["error"]["message"]


def test_corpus_size() -> None:
    assert len(CLI_CASES) >= 60 and len(SERVE_CASES) >= 40
