"""Maps each top-level folder to `raygent.<folder>` (docs/design.md §2).

The folders carry no `__init__.py`, so `platform/` never shadows the standard library's `platform`
module when the repository root is on `sys.path`; their subpackages may have one.
"""

import os

from setuptools import setup

FOLDERS = ("platform", "environments", "policies", "rewards", "jobs")


def _packages() -> tuple[list[str], dict[str, str]]:
    packages: list[str] = []
    package_dir: dict[str, str] = {}
    for folder in FOLDERS:
        package_dir[f"raygent.{folder}"] = folder
        for dirpath, dirnames, _ in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")))
            packages.append("raygent." + dirpath.replace(os.sep, "."))
    return packages, package_dir


packages, package_dir = _packages()
setup(packages=packages, package_dir=package_dir)
