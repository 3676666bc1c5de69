"""Config validation: one message naming the key, the value and what was expected; exit 2 from the CLI."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from raygent.platform.config import (
    ClassEntry,
    ConfigError,
    EntryPoint,
    _explain,
    apply_overrides,
    check_entry,
    entry_validator,
    load_config,
    parse_override,
    reject_bool_numbers,
    resolve_config_path,
)

from conftest import raygent

BASE = {
    "job": "fls",
    "entry": "raygent.jobs.fls.study:FLSStudy",
    "sweep": {"space": {"seed": {"grid": [0, 1]}}},
}


def write(tmp_path: Path, data: dict) -> str:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_job_name_resolves_to_shipped_config() -> None:
    assert resolve_config_path("fls").name == "fls.yaml"
    with pytest.raises(ConfigError, match=r"no job named 'flz' \(did you mean 'fls'\?\)"):
        resolve_config_path("flz")


def test_overrides_are_parsed_as_yaml_values() -> None:
    assert parse_override("study.alpha=0.5") == (["study", "alpha"], 0.5)
    assert parse_override("sweep.space.seed.grid=[0, 1]") == (["sweep", "space", "seed", "grid"], [0, 1])
    assert apply_overrides({"a": {"b": 1}}, ["a.c=x", "d=true"]) == {"a": {"b": 1, "c": "x"}, "d": True}
    with pytest.raises(ConfigError, match="expected key=value"):
        parse_override("study.alpha")


def test_unknown_key_suggests_the_nearest(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, {**BASE, "swep": {}}))
    assert str(info.value).startswith("swep: unknown key (did you mean 'sweep'?)")
    with pytest.raises(
        ConfigError, match=r"sweep\.max_concurent_trials: unknown key \(did you mean 'max_concurrent_trials'"
    ):
        load_config(write(tmp_path, BASE), ["sweep.max_concurent_trials=2"])


def test_wrong_type_and_out_of_range_name_key_and_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^sweep\.num_samples: got 'many'; expected .*integer"):
        load_config(write(tmp_path, BASE), ["sweep.num_samples=many"])
    with pytest.raises(ConfigError, match=r"^sweep\.num_samples: got 0; expected .*greater than or equal to 1"):
        load_config(write(tmp_path, BASE), ["sweep.num_samples=0"])
    with pytest.raises(ConfigError, match=r"^sweep\.space\.seed: .*exactly one of"):
        load_config(write(tmp_path, {**BASE, "sweep": {"space": {"seed": {"grid": [1], "choice": [2]}}}}))


def test_space_knobs_must_be_study_parameters_of_the_right_type(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"sweep\.space\.alpah: 'alpah' is not a parameter .*did you mean 'alpha'"):
        load_config(write(tmp_path, {**BASE, "sweep": {"space": {"alpah": {"grid": [1.0]}}}}))
    with pytest.raises(ConfigError, match=r"sweep\.space\.seed: value 'x' at position 1 is invalid"):
        load_config(write(tmp_path, {**BASE, "sweep": {"space": {"seed": {"grid": [0, "x"]}}}}))
    with pytest.raises(ConfigError, match="search 'optuna' takes"):
        load_config(write(tmp_path, {**BASE, "sweep": {"search": "optuna", "space": {"seed": {"grid": [0]}}}}))


def test_study_block_is_typed_by_the_entry(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, BASE), ["study.seed=7"])
    assert config.study.seed == 7 and type(config.study).__name__ != "StudyParams"
    with pytest.raises(ConfigError, match=r"^study\.sed: unknown key \(did you mean 'seed'\?\)"):
        load_config(write(tmp_path, BASE), ["study.sed=1"])
    with pytest.raises(ConfigError, match=r"^entry: 'raygent.jobs.nope:X': no module named 'raygent.jobs.nope'"):
        load_config(write(tmp_path, {**BASE, "entry": "raygent.jobs.nope:X"}))


def test_entry_must_name_a_job_class(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^entry: 'os.path:join' is a function; expected 'module:attr' naming a job"):
        load_config(write(tmp_path, {**BASE, "entry": "os.path:join"}))
    with pytest.raises(ConfigError, match=r"^entry: 'collections:OrderedDict' is a class without params_model"):
        load_config(write(tmp_path, {**BASE, "entry": "collections:OrderedDict"}))
    with pytest.raises(ConfigError, match=r"^entry: 'raygent.jobs.fls.study:FLSStudi': .* \(did you mean 'FLSStudy'"):
        load_config(write(tmp_path, {**BASE, "entry": "raygent.jobs.fls.study:FLSStudi"}))


class _Entries(BaseModel):
    any_callable: EntryPoint = "os.path:join"
    a_class: ClassEntry | None = None
    source: Annotated[str, entry_validator("function", "a task source f(split, seed, n)", 3)] = "x:y"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"any_callable": "os:path"}, r"'os:path' is a module; expected 'module:attr' naming a function or class"),
        ({"any_callable": "no_such_mod:f"}, r"'no_such_mod:f': no module named 'no_such_mod'"),
        ({"any_callable": "os.path:joinn"}, r"has no attribute 'joinn' \(did you mean 'join'\?\)"),
        ({"any_callable": "just words"}, r"'just words' is not of the form 'module:attr'"),
        ({"a_class": "os.path:join"}, r"'os.path:join' is a function; expected 'module:attr' naming a class"),
        ({"source": "collections:OrderedDict"}, r"is a class; expected 'module:attr' naming a task source"),
        ({"source": "os.path:exists"}, r"cannot be called with 3 positional argument\(s\) \(signature \(path\)\)"),
    ],
)
def test_entry_types_name_the_value_and_what_was_expected(data: dict, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        _Entries.model_validate(data)
    key = next(iter(data))
    assert re.search(f"^{key}: .*{message}", _explain(info.value, _Entries)), _explain(info.value, _Entries)


def test_entry_types_accept_what_they_describe() -> None:
    valid = _Entries.model_validate(
        {"a_class": "collections:OrderedDict", "source": "raygent.jobs.grpo_toy.tasks:toolcalc_tasks"}
    )
    assert valid.a_class == "collections:OrderedDict"
    assert check_entry("os.path:join", "function") == "os.path:join"
    with pytest.raises(ConfigError, match="naming a class"):
        check_entry("os.path:join", "class")


def test_agent_env_entries_are_checked_before_anything_starts(tmp_path: Path) -> None:
    base = yaml.safe_load((Path(__file__).resolve().parents[2] / "jobs/configs/grpo_toy.yaml").read_text())
    for key, value, message in [
        ("env.tasks", "raygent.jobs.grpo_toy.tasks:no_such_tasks", "has no attribute 'no_such_tasks'"),
        ("env.registration", "raygent.nowhere:register", "no module named 'raygent.nowhere'"),
        ("env.demonstrations", "raygent.jobs.grpo_toy.tasks:toolcalc_tasks", "cannot be called with 1 positional"),
    ]:
        with pytest.raises(ConfigError, match=f"^{re.escape(key)}: '{re.escape(value)}'.*{message}"):
            load_config(write(tmp_path, base), [f"{key}={value}"])


def test_task_kwargs_must_be_parameters_of_the_task_function_and_fit_their_types(tmp_path: Path) -> None:
    base = yaml.safe_load((Path(__file__).resolve().parents[2] / "jobs/configs/grpo_toy.yaml").read_text())
    path = write(tmp_path, base)
    for key in ("env.task_kwargs.task_typs", "sft.task_kwargs.task_typs"):
        with pytest.raises(ConfigError, match=rf"^{re.escape(key)}: unknown key \(did you mean 'task_types'\?\)"):
            load_config(path, [f"{key}=[compare]"])
    with pytest.raises(ConfigError, match=r"^env\.task_kwargs\.difficulty: got 'two'; input should be a valid integer"):
        load_config(path, ["env.task_kwargs.difficulty=two"])
    assert load_config(path, ["sft.task_kwargs.task_types=[compare]"]).sft.task_kwargs == {"task_types": ["compare"]}


def test_cli_bad_config_exits_2_with_one_line_and_no_traceback(tmp_path: Path) -> None:
    done = raygent("sweep", write(tmp_path, BASE), "study.sed=1")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr + done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and not done.stdout
    assert lines[0].startswith("error: study.sed: unknown key (did you mean 'seed'?); expected one of: ")
    missing = raygent("sweep", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr and not missing.stdout
    assert "Traceback" not in missing.stderr


def test_a_cluster_only_model_path_passes_for_submit_but_not_for_a_local_run() -> None:
    from raygent.platform.config import ConfigError, load_config

    override = ["policy.model=/models/only-on-the-cluster"]
    with pytest.raises(ConfigError, match=r"policy\.model"):
        load_config("grpo_toy", override)
    config = load_config("grpo_toy", override, remote=True)
    assert config.policy.model == "/models/only-on-the-cluster"  # type: ignore[attr-defined]


GRPO_TOY = Path(__file__).resolve().parents[2] / "jobs/configs/grpo_toy.yaml"


@pytest.mark.parametrize(
    ("job", "data", "overrides", "message"),
    [
        ("fls", {"study": {"width": True}}, [], r"study\.width: got True; expected an integer, not true/false"),
        ("fls", {}, ["study.seed=false"], r"study\.seed: got False; expected an integer, not true/false"),
        ("fls", {}, ["study.noise=true"], r"study\.noise: got True; expected a number, not true/false"),
        ("fls", {}, ["sweep.num_samples=true"], r"sweep\.num_samples: got True; expected an integer"),
        ("fls", {}, ["sweep.space.width.choice=[8, true]"], r"sweep\.space\.width\.choice\.1: got True; expected an"),
        ("fls", {}, ["sweep.space.width.randint=[true, 8]"], r"sweep\.space\.width\.randint\.0: got True"),
        ("fls", {}, ["sweep.space.alpha.uniform=[false, 1]"], r"sweep\.space\.alpha\.uniform\.0: got False; .*number"),
        ("fls", {}, ["sweep.resources_per_trial.gpu=true"], r"sweep\.resources_per_trial\.gpu: got True"),
        ("fls", {}, ["study.positive_labels=[0, true]"], r"study\.positive_labels\.1: got True; expected an integer"),
        ("grpo_toy", {}, ["trainer.steps=true"], r"trainer\.steps: got True; expected an integer, not true/false"),
        ("grpo_toy", {}, ["sft.steps=false"], r"sft\.steps: got False; expected an integer"),
        ("grpo_toy", {}, ["rollout.sampling.temperature=true"], r"rollout\.sampling\.temperature: got True"),
        ("grpo_toy", {}, ["env.task_kwargs.difficulty=true"], r"env\.task_kwargs\.difficulty: got True; expected an"),
        ("grpo_toy", {}, ["learner.loss.terms=[{name: kl, coef: true}]"], r"learner\.loss\.terms: loss term 'kl'"),
    ],
)
def test_a_boolean_is_not_a_number_in_any_section(
    tmp_path: Path, job: str, data: dict[str, Any], overrides: list[str], message: str
) -> None:
    """pydantic's lax mode reads true/false as 1/0 for an int or float field; a config says which key instead."""
    base = yaml.safe_load(GRPO_TOY.read_text()) if job == "grpo_toy" else dict(BASE)
    with pytest.raises(ConfigError, match=f"^{message}"):
        load_config(write(tmp_path, {**base, **data}), overrides)


def test_numbers_and_booleans_still_validate_where_they_belong(tmp_path: Path) -> None:
    from raygent.platform import rundir

    toy = load_config(write(tmp_path, yaml.safe_load(GRPO_TOY.read_text())), ["trainer.steps=5", "sft.steps=0"])
    assert toy.trainer.steps == 5 and type(toy.trainer.steps) is int  # type: ignore[attr-defined]
    assert toy.learner.loss.filter_zero_variance_groups is True  # type: ignore[attr-defined]
    fls = load_config(write(tmp_path, BASE), ["study.alpha=1", "sweep.max_concurrent_trials=auto"])
    assert fls.study.alpha == 1.0 and fls.sweep.max_concurrent_trials == "auto"  # type: ignore[attr-defined]
    run = tmp_path / "run"
    run.mkdir()
    rundir.save_config(run, fls)
    assert rundir.load_run_config(run).model_dump() == fls.model_dump()  # a saved config validates again


class _Mixed(BaseModel):
    count: int = 0
    either: int | bool = 0
    anything: Any = None
    nested: dict[str, list[float]] = {}


def test_reject_bool_numbers_walks_models_mappings_and_lists_and_keeps_real_bools() -> None:
    given = {"either": True, "anything": False, "nested": {"a": [1.5, 2]}}
    reject_bool_numbers(given, _Mixed.model_validate(given))  # bools kept as bools, numbers as numbers: fine
    given = {"nested": {"a": [1.5, True]}}
    with pytest.raises(ConfigError, match=r"^x\.nested\.a\.1: got True; expected a number, not true/false$"):
        reject_bool_numbers(given, _Mixed.model_validate(given), "x")
    with pytest.raises(ConfigError, match=r"^count: got False; expected an integer"):
        reject_bool_numbers({"count": False}, _Mixed.model_validate({"count": False}))
