"""Every shipped job config validates against its entry's parameter model."""

from __future__ import annotations

import pytest

from raygent.platform.config import configs_dir, load_config

CONFIGS = sorted(path.stem for path in configs_dir().glob("*.yaml"))


@pytest.mark.parametrize("name", CONFIGS)
def test_shipped_config_validates(name: str) -> None:
    config = load_config(name)
    assert config.job == name
    assert config.description, "raygent list shows the description"
    if config.kind == "sweep":
        assert config.sweep.space, "a study sweeps the paper's knob"
