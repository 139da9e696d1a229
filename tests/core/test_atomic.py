"""Atomic writes: complete content or nothing, unique temporaries, folders swapped whole."""

import ctypes
import errno
import os
import threading
from pathlib import Path

import pytest

from rulegauge.core.atomic import (
    TargetExists,
    atomic_dir,
    atomic_path,
    temp_name,
    write_bytes,
    write_text,
)


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
    with pytest.raises(TargetExists, match="appeared while this command ran"), \
            atomic_dir(target) as tmp:  # another process finished first: its folder is kept
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
    assert calls == [1, 1, 1]  # the first write: a no-replace rename; then two exchanges
    assert (target / "v").read_text() == "2"
    assert [p.name for p in tmp_path.iterdir()] == ["model"]
    monkeypatch.setattr(atomic, "_renameat2", lambda: None)  # not Linux, or a C library without it
    assert atomic.exchange(target, tmp_path / "other") is False
    _replace_many(target, 1)
    assert (target / "v").read_text() == "0" and [p.name for p in tmp_path.iterdir()] == ["model"]


WRITE_DIR = ("import sys\nfrom pathlib import Path\nfrom rulegauge.core.atomic import atomic_dir\n"
             "with atomic_dir(Path(sys.argv[1])) as tmp:\n    (tmp / 'f').write_text('theirs')\n")


def test_a_folder_another_process_renames_in_first_is_kept(tmp_path: Path, monkeypatch) -> None:
    """Two processes, deterministically: ours is stopped between its check and its rename
    while another writes the same target whole; ours then fails at the rename."""
    import subprocess
    import sys

    from rulegauge.core import atomic
    from tests.helpers.common import REPO

    target, real = tmp_path / "baseline", atomic.rename_noreplace

    def other_first(src: Path, dst: Path) -> None:
        subprocess.run([sys.executable, "-c", WRITE_DIR, str(dst)], check=True,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
        real(src, dst)

    monkeypatch.setattr(atomic, "rename_noreplace", other_first)
    with pytest.raises(TargetExists, match=f"{target} appeared while this command ran"), \
            atomic_dir(target) as tmp:
        (tmp / "f").write_text("ours")
    assert (target / "f").read_text() == "theirs"
    assert [p.name for p in tmp_path.iterdir()] == ["baseline"]  # nothing of ours left


@pytest.mark.parametrize("kernel", ["renameat2", "fallback"])
def test_rename_noreplace_never_replaces(tmp_path: Path, monkeypatch, kernel: str) -> None:
    from rulegauge.core import atomic

    if kernel == "fallback":
        monkeypatch.setattr(atomic, "_renameat2", lambda: None)
    for make in (lambda p: p.mkdir(), lambda p: p.write_text("x")):
        src, dst = tmp_path / "src", tmp_path / "dst"
        make(src)
        (dst / "keep").mkdir(parents=True) if src.is_dir() else dst.write_text("keep")
        with pytest.raises(FileExistsError):
            atomic.rename_noreplace(src, dst)
        assert src.exists()
        atomic._remove(dst)
        atomic.rename_noreplace(src, dst)
        assert dst.exists() and not src.exists()
        atomic._remove(dst)
    empty = tmp_path / "empty"  # an empty folder is still a folder there: never replaced
    empty.mkdir()
    (tmp_path / "new").mkdir()
    with pytest.raises(FileExistsError):
        atomic.rename_noreplace(tmp_path / "new", empty)


FULL = ("import resource, sys\nfrom pathlib import Path\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        "from rulegauge.core.atomic import atomic_dir, write_text\n"
        "from rulegauge.core.errors import RulegaugeError\n"
        "root = Path(sys.argv[1])\n"
        "try:\n    write_text(root / 'g.yaml', 'x' * 10000)\n"
        "except RulegaugeError as e:\n    print(e)\n"
        "try:\n    with atomic_dir(root / 'out') as tmp:\n"
        "        with open(tmp / 'corpus-00001.jsonl', 'w') as f:\n            f.write('y' * 10000)\n"
        "except RulegaugeError as e:\n    print(e)\n")


def test_a_full_disk_names_the_target_never_the_temporary(tmp_path: Path) -> None:
    """A file-size limit (RLIMIT_FSIZE, in a child: EFBIG as on a full disk) while writing a
    file or a folder: the error names what the user asked for; nothing is left behind."""
    import subprocess
    import sys

    from tests.helpers.common import REPO

    (tmp_path / "g.yaml").write_text("old")
    out = subprocess.run([sys.executable, "-c", FULL, str(tmp_path)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, check=True).stdout.splitlines()
    assert out == [f"{tmp_path / 'g.yaml'}: cannot write (file too large: a file-size limit "
                   "(ulimit -f) or the file system's largest file); it keeps its previous content",
                   f"{tmp_path / 'out'}: cannot write (file too large: a file-size limit "
                   "(ulimit -f) or the file system's largest file); nothing was written there"]
    assert (tmp_path / "g.yaml").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.yaml"]
