"""Runs import-linter's contracts (`[tool.importlinter]` in pyproject.toml) over the repository's packages.

The top-level folders are namespace portions of `raygent` (no `__init__.py`, see docs/architecture.md), which
import-linter's graph builder does not follow; so the Python files are copied into a temporary `raygent` package
whose every folder has an `__init__.py`, and `lint-imports` runs over that copy. Exit status: lint-imports'.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("platform", "environments", "policies", "rewards", "jobs")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="raygent-imports-") as tmp:
        package = Path(tmp) / "raygent"
        package.mkdir()
        (package / "__init__.py").touch()
        for folder in FOLDERS:
            for source in (ROOT / folder).rglob("*.py"):
                if "__pycache__" in source.parts:
                    continue
                target = package / source.relative_to(ROOT)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
            for directory in [package / folder, *(package / folder).rglob("*")]:
                if directory.is_dir() and not (directory / "__init__.py").exists():
                    (directory / "__init__.py").touch()
        env = {**os.environ, "PYTHONPATH": tmp}
        lint = Path(sys.executable).with_name("lint-imports")
        return subprocess.call([str(lint), "--config", str(ROOT / "pyproject.toml")], cwd=tmp, env=env)


if __name__ == "__main__":
    raise SystemExit(main())
