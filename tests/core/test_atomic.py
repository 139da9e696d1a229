"""Atomic writes: complete content or nothing, unique temporaries, folders swapped whole."""

import os
from pathlib import Path

import pytest

from rulegauge.core.atomic import atomic_dir, atomic_path, temp_name, write_bytes, write_text


def test_write_replaces_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "a.json"
    write_text(target, "one")
    write_bytes(target, b"two")
    assert target.read_text() == "two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.json"]


def test_failed_write_keeps_the_old_file_and_removes_the_temporary(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_temporary_names_are_unique_and_carry_the_pid(tmp_path: Path) -> None:
    names = {temp_name(tmp_path / "x.parquet").name for _ in range(50)}
    assert len(names) == 50
    assert all(n.startswith(f".x.parquet.tmp-{os.getpid()}-") for n in names)


def test_atomic_dir_replace_and_keep(tmp_path: Path) -> None:
    target = tmp_path / "model"
    with atomic_dir(target) as tmp:
        (tmp / "f").write_text("first")
    with atomic_dir(target) as tmp:  # another process finished first: its folder is kept
        (tmp / "f").write_text("second")
    assert (target / "f").read_text() == "first"
    with atomic_dir(target, replace=True) as tmp:
        (tmp / "g").write_text("third")
    assert sorted(p.name for p in target.iterdir()) == ["g"]
    assert [p.name for p in tmp_path.iterdir()] == ["model"]
    with pytest.raises(ValueError), atomic_dir(target, replace=True) as tmp:
        (tmp / "h").write_text("never")
        raise ValueError("boom")
    assert sorted(p.name for p in target.iterdir()) == ["g"]
    assert [p.name for p in tmp_path.iterdir()] == ["model"]


def test_an_atomic_write_fsyncs_the_file_then_its_folder(tmp_path, monkeypatch) -> None:
    import os
    import stat

    from rulegauge.core import atomic

    synced: list[str] = []
    real = os.fsync

    def spy(fd: int) -> None:
        synced.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    atomic.write_text(tmp_path / "sub" / "x.txt", "hello")
    assert synced == ["file", "dir"]
    assert (tmp_path / "sub" / "x.txt").read_text() == "hello"
