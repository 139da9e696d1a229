"""Atomic writes: complete content or nothing, unique temporaries, folders swapped whole."""

import ctypes
import errno
import os
import threading
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


def _replace_many(target: Path, n: int) -> None:
    for i in range(n):
        with atomic_dir(target, replace=True) as tmp:
            (tmp / "v").write_text(str(i))


def _watch(target: Path, stop: threading.Event, missing: list[int]) -> None:
    while not stop.is_set():
        if not os.path.lexists(target):
            missing.append(1)


def test_atomic_dir_replace_exchanges_so_the_target_never_goes_missing(tmp_path: Path) -> None:
    """renameat2(RENAME_EXCHANGE): a reader looking the whole time never finds no target (a
    property, not a timing: with the exchange there is no instant without one)."""
    from rulegauge.core import atomic

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    if not atomic.exchange(a, b):
        pytest.skip("this kernel or file system has no renameat2 RENAME_EXCHANGE")
    assert (b / "x").read_text() == "a" and not (a / "x").exists()  # the names swapped
    with pytest.raises(FileNotFoundError):
        atomic.exchange(tmp_path / "gone", b)  # an error other than "not supported" raises
    target = tmp_path / "model"
    _replace_many(target, 1)
    stop, missing = threading.Event(), []
    watcher = threading.Thread(target=_watch, args=(target, stop, missing))
    watcher.start()
    try:
        _replace_many(target, 200)
    finally:
        stop.set()
        watcher.join()
    assert missing == []
    assert (target / "v").read_text() == "199"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "model"]  # old trees deleted


def test_atomic_dir_replace_falls_back_to_two_renames(tmp_path: Path, monkeypatch) -> None:
    """Where the kernel answers ENOSYS or EINVAL (or there is no renameat2), the swap is two
    renames: the same result, old tree deleted, only the moment without a target comes back."""
    from rulegauge.core import atomic

    calls: list[int] = []

    def unsupported(*args: object) -> int:
        calls.append(1)
        ctypes.set_errno(errno.ENOSYS if len(calls) % 2 else errno.EINVAL)
        return -1

    monkeypatch.setattr(atomic, "_renameat2", lambda: unsupported)
    target = tmp_path / "model"
    _replace_many(target, 3)
    assert calls == [1, 1]  # the first write had no target to exchange with
    assert (target / "v").read_text() == "2"
    assert [p.name for p in tmp_path.iterdir()] == ["model"]
    monkeypatch.setattr(atomic, "_renameat2", lambda: None)  # not Linux, or a C library without it
    assert atomic.exchange(target, tmp_path / "other") is False
    _replace_many(target, 1)
    assert (target / "v").read_text() == "0" and [p.name for p in tmp_path.iterdir()] == ["model"]
