"""The shared cache: `build_once` builds a directory once, atomically, under a lock."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from raygent.policies.cache import build_once, cache_root


def test_cache_root_follows_raygent_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAYGENT_CACHE", str(tmp_path))
    assert cache_root("a", "b") == tmp_path / "a" / "b"


def test_concurrent_builders_build_once_and_leave_no_temporary_directory(tmp_path: Path) -> None:
    calls: list[Path] = []

    def build(out: Path) -> None:
        calls.append(out)
        time.sleep(0.2)  # long enough that the second thread arrives while the first one builds
        (out / "done").write_text("x")

    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(build_once(tmp_path / "m", build, "done"))) for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and results == [tmp_path / "m"] * 3
    assert (tmp_path / "m" / "done").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m", "m.lock"]


def test_a_failed_build_leaves_nothing_and_the_next_call_builds_again(tmp_path: Path) -> None:
    def broken(out: Path) -> None:
        (out / "half").write_text("x")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        build_once(tmp_path / "m", broken, "done")
    assert not (tmp_path / "m").exists()
    with pytest.raises(RuntimeError, match="wrote no 'done'"):
        build_once(tmp_path / "m", lambda out: None, "done")
    assert build_once(tmp_path / "m", lambda out: (out / "done").write_text("y"), "done") == tmp_path / "m"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_an_unfinished_directory_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "stale").write_text("old")
    build_once(tmp_path / "m", lambda out: (out / "done").write_text("new"), "done")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["done"]
