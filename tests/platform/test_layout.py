"""The package layout of docs/design.md §2: `raygent.<folder>` imports, and no shadowing of the stdlib `platform`."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

from conftest import ROOT

FOLDERS = ("platform", "environments", "policies", "rewards", "jobs")


def test_import_platform_from_root_is_the_standard_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import platform; print(platform.__file__)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    printed = Path(done.stdout.strip()).resolve()
    assert printed.parent == Path(sysconfig.get_paths()["stdlib"]).resolve()
    assert ROOT not in printed.parents


def test_top_level_folders_are_namespace_portions() -> None:
    for folder in FOLDERS:
        assert (ROOT / folder).is_dir(), folder
        assert not (ROOT / folder / "__init__.py").exists(), f"{folder}/__init__.py would shadow or break imports"


def test_folders_import_as_raygent_namespace_from_root() -> None:
    code = "import raygent.platform.cli, raygent.jobs, platform, uuid; print(platform.system(), uuid.uuid4().version)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["Linux", "4"]
