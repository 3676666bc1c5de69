"""The environment registry (`raygent.platform.envs`): the `raygent.envs` entry points, `raygent envs`, and a run
config's `env: {name: ...}`. No Ray: another package is a dist-info directory on `sys.path`, never installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from raygent.environments.web.registry import available_apps
from raygent.platform.cli import main
from raygent.platform.config import (
    ConfigError,
    apply_overrides,
    check_entry,
    load_entry,
    read_yaml_file,
    resolve_config_path,
    validate_config,
)
from raygent.platform.envs import EnvRegistryError, EnvSpec, env_section, named_env, registered_envs

from conftest import raygent

BUILTIN = {"toolcalc", "factguard", "reasonaug", "single_turn", "web_url", "docos", *available_apps()}
PLUGIN = """
from raygent.platform.envs import EnvSpec

def tasks(split, seed, n):
    return []

def register():
    pass

SPEC = EnvSpec(name="fakecalc", description="a calculator of another package", id="fake/Calc-v0",
               registration="{module}:register", tasks="{module}:tasks", splits=("fit", "check"))

def more():
    return [SPEC.model_copy(update={{"name": "fakecalc_hard", "task_kwargs": {{"hard": True}}}})]

NOT_A_SPEC = 3

def explodes():
    raise RuntimeError("no world today")
"""


def add_package(root: Path, module: str, entries: dict[str, str]) -> None:
    """A package `module` and its dist-info (`raygent.envs` entry points `entries`) under `root`."""
    (root / f"{module}.py").write_text(textwrap.dedent(PLUGIN.format(module=module)))
    info = root / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entries.items())
    (info / "entry_points.txt").write_text(f"[raygent.envs]\n{lines}")


@pytest.fixture
def plugin_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory on `sys.path` (and on a subprocess's PYTHONPATH) for `add_package`."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if name.startswith("fakeenvs"):
            del sys.modules[name]


def test_another_package_registers_through_the_entry_point_group(plugin_root: Path) -> None:
    add_package(plugin_root, "fakeenvs_ok", {"fakecalc": "fakeenvs_ok:SPEC", "fakecalc_more": "fakeenvs_ok:more"})
    specs = registered_envs()
    assert BUILTIN | {"fakecalc", "fakecalc_hard"} <= set(specs)
    assert list(specs) == sorted(specs)
    assert specs["fakecalc"].splits == ("fit", "check")
    section = env_section("fakecalc_hard")
    assert section == {
        "id": "fake/Calc-v0",
        "registration": "fakeenvs_ok:register",
        "tasks": "fakeenvs_ok:tasks",
        "kwargs": {},
        "task_kwargs": {"hard": True},
        "train_split": "fit",
        "eval_split": "check",
    }
    section["task_kwargs"]["hard"] = False  # a copy: the spec keeps its own
    assert env_section("fakecalc_hard")["task_kwargs"] == {"hard": True}


def test_raygent_envs_lists_the_builtins_and_another_package(plugin_root: Path) -> None:
    add_package(plugin_root, "fakeenvs_cli", {"fakecalc": "fakeenvs_cli:SPEC"})
    done = raygent("envs", env={"PYTHONPATH": os.pathsep.join([str(plugin_root), os.environ["PYTHONPATH"]])})
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines()}
    assert BUILTIN | {"fakecalc"} <= set(lines)
    assert lines["fakecalc"].split()[1] == "fit,check" and lines["fakecalc"].endswith("a calculator of another package")
    assert lines["toolcalc"].split()[1] == "train,heldout"
    assert lines["docos"].split()[1] == "train,heldout,default"


def test_raygent_envs_json_gives_the_specs(plugin_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    add_package(plugin_root, "fakeenvs_json", {"fakecalc": "fakeenvs_json:SPEC"})
    with pytest.raises(SystemExit) as exit_info:
        main(["envs", "--json"])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 0, err
    specs = {spec["name"]: EnvSpec.model_validate(spec) for spec in json.loads(out)}
    assert BUILTIN | {"fakecalc"} <= set(specs)
    assert specs == {name: spec for name, spec in registered_envs().items()}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("fakeenvs_bad_nowhere:SPEC", "loading it failed (ModuleNotFoundError"),
        ("{module}:NO_SUCH", "loading it failed (AttributeError"),
        ("{module}:NOT_A_SPEC", "gives int 3; expected an EnvSpec"),
        ("{module}:explodes", "calling it failed (RuntimeError: no world today)"),
    ],
)
def test_a_broken_entry_point_is_named_without_a_traceback(
    value: str, expected: str, plugin_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = f"fakeenvs_bad{zlib.crc32(value.encode())}"
    add_package(plugin_root, module, {"broken": value.format(module=module)})
    with pytest.raises(EnvRegistryError, match="broken") as raised:
        registered_envs()
    assert f"entry point broken = {value.format(module=module)} (raygent.envs)" in str(raised.value)
    assert expected in str(raised.value)
    with pytest.raises(SystemExit) as exit_info:
        main(["envs"])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 2 and not out
    assert "error: entry point broken" in err and "Traceback" not in err


def test_two_specs_of_one_name_name_both_entry_points(plugin_root: Path) -> None:
    add_package(plugin_root, "fakeenvs_dup", {"fakecalc": "fakeenvs_dup:SPEC"})
    add_package(plugin_root, "fakeenvs_dup2", {"toolcalc": "fakeenvs_dup2:more"})
    (plugin_root / "fakeenvs_dup2.py").write_text(
        "from fakeenvs_dup import SPEC\n\ndef more():\n    return [SPEC.model_copy(update={'name': 'toolcalc'})]\n"
    )
    with pytest.raises(EnvRegistryError, match="two environments named 'toolcalc'"):
        registered_envs()


def test_every_builtin_names_importable_functions() -> None:
    specs = registered_envs()
    assert BUILTIN <= set(specs)
    for name in BUILTIN:
        spec = specs[name]
        check_entry(spec.registration, "function", args=0)
        check_entry(spec.tasks, "function", args=3)
        if spec.demonstrations is not None:
            check_entry(spec.demonstrations, "function", args=1)
        assert "\n" not in spec.description and spec.splits


def _grpo_toy(env: object) -> dict:
    data = read_yaml_file(resolve_config_path("grpo_toy_tiny"))
    return {**data, "env": env}


WEB_AGENT_KEYS = {"difficulties": [1, 2], "exclude": ["media_player/sort_playlist", "media_player/save_playlist"]}


@pytest.mark.parametrize(
    ("job", "env"),
    [
        ("factguard", {"name": "factguard"}),
        ("reasonaug", {"name": "reasonaug"}),
        ("docos", {"name": "docos"}),
        ("web_agent", {"name": "media_player", "task_kwargs": WEB_AGENT_KEYS}),
    ],
)
def test_the_shipped_jobs_env_sections_by_name(job: str, env: dict) -> None:
    data = read_yaml_file(resolve_config_path(job))
    named = validate_config({**data, "env": env}).env  # type: ignore[attr-defined]
    assert named == validate_config(data).env  # type: ignore[attr-defined]


def test_a_named_env_validates_to_the_shipped_section() -> None:
    shipped = validate_config(read_yaml_file(resolve_config_path("grpo_toy_tiny")))
    named = validate_config(_grpo_toy({"name": "toolcalc"}))
    same, expected = named.env.model_dump(), shipped.env.model_dump()  # type: ignore[attr-defined]
    for key in ("tasks", "demonstrations"):  # the job's names re-export the environment's functions
        assert load_entry(same.pop(key)) is load_entry(expected.pop(key))
    assert same == expected
    assert named.model_dump(exclude={"env"}) == shipped.model_dump(exclude={"env"})


def test_keys_beside_the_name_override_the_spec() -> None:
    given = {"name": "toolcalc", "task_kwargs": {"difficulty": 2}, "eval_split": "train"}
    env = validate_config(_grpo_toy(given)).env  # type: ignore[attr-defined]
    assert env.task_kwargs == {"difficulty": 2, "task_types": ["compare", "single"]}
    assert env.eval_split == "train" and env.id == "raygent/ToolCalc-v0"
    overridden = apply_overrides(_grpo_toy({"name": "toolcalc"}), ["env.task_kwargs.difficulty=0"])
    assert validate_config(overridden).env.task_kwargs["difficulty"] == 0  # type: ignore[attr-defined]
    assert named_env({"id": "x"}) == {"id": "x"}  # no name: the section as given


def test_a_named_env_is_checked_like_a_written_one() -> None:
    with pytest.raises(ConfigError, match=r"env\.task_kwargs\.difficulty: got 'hard'"):
        validate_config(_grpo_toy({"name": "toolcalc", "task_kwargs": {"difficulty": "hard"}}))
    with pytest.raises(ConfigError, match=r"env\.name: got 3; expected a registered environment's name"):
        validate_config(_grpo_toy({"name": 3}))


def test_an_unknown_name_exits_2_with_a_suggestion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    config = tmp_path / "typo.yaml"
    config.write_text(yaml.safe_dump(_grpo_toy({"name": "toolcalk"})))
    for argv in (["run", str(config)], ["run", "grpo_toy_tiny", "env.name=toolcalk"]):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        out, err = capsys.readouterr()
        assert exit_info.value.code == 2 and not out, err
        assert "error: env.name: unknown environment 'toolcalk' (did you mean 'toolcalc'?); registered:" in err
        assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["typo.yaml"]  # no run directory


def test_listing_imports_neither_ray_nor_torch() -> None:
    """`raygent envs` imports the spec modules only: no environment module imports Ray, and none of them torch."""
    code = (
        "import sys; from raygent.platform.envs import registered_envs; specs = registered_envs(); "
        "print(len(specs), sorted(m for m in ('ray', 'torch') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, heavy = done.stdout.split(" ", 1)
    assert int(count) >= len(BUILTIN) and heavy.strip() == "[]"
    helped = raygent("envs", "--help")
    assert helped.returncode == 0 and "Example" in helped.stdout and "raygent envs --json" in helped.stdout


def test_url_tasks_are_free_tasks_on_the_page() -> None:
    from raygent.environments.web.spec import url_tasks
    from raygent.environments.web.url_env import URL_ENV_ID, task_url

    url = "http://127.0.0.1:8123/app/"
    train = url_tasks("train", 0, 5, url=url, instructions=["Open a file.", "Close it."])
    assert len(train) == 5 and {task.env for task in train} == {URL_ENV_ID}
    assert {task_url(task) for task in train} == {url} and train == url_tasks(
        "train", 0, 5, url, ["Open a file.", "Close it."]
    )
    heldout = url_tasks("heldout", 0, 3, url=url, instructions=["a", "b"])
    assert [task.instruction for task in heldout] == ["a", "b", "a"]
    with pytest.raises(ValueError, match=r"task_kwargs\.url"):
        url_tasks("train", 0, 1)
    with pytest.raises(ValueError, match="not on loopback"):
        url_tasks("train", 0, 1, url="http://example.com/")
