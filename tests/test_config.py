"""Config validation: one message naming the key, the value and what was expected; exit 2 from the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from raygent.platform.config import ConfigError, apply_overrides, load_config, parse_override, resolve_config_path

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
    with pytest.raises(ConfigError, match=r"^entry: cannot import module 'raygent.jobs.nope'"):
        load_config(write(tmp_path, {**BASE, "entry": "raygent.jobs.nope:X"}))


def test_cli_bad_config_exits_2_with_one_line_and_no_traceback(tmp_path: Path) -> None:
    done = raygent("sweep", write(tmp_path, BASE), "study.sed=1")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr + done.stdout
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert len(lines) == 1
    assert lines[0].startswith("error: study.sed: unknown key (did you mean 'seed'?); expected one of: ")
    missing = raygent("sweep", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "does not exist" in missing.stdout and "Traceback" not in missing.stderr
