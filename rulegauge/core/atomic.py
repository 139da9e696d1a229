"""Atomic writes: write beside the target under a unique temporary name, then rename.

A reader never sees a half-written file or folder, and a completed write survives a
power cut: the content goes to ``.<name>.tmp-<pid>-<random>`` in the target's folder
(same file system, so the rename is atomic, POSIX ``rename(2)``), is ``fsync``-ed, and
only then renamed onto the target, whose folder is ``fsync``-ed after the rename
(:func:`fsync_path`); on any error the temporary is removed and the target is untouched.
The name carries the process id and a random token, so concurrent writers (two
processes, or two threads of one) never share a temporary.

Edge cases: :func:`atomic_path` replaces an existing file; :func:`atomic_dir`
replaces an existing folder only with ``replace=True`` (the two folders are exchanged in
one step, :func:`exchange`, and the old one is deleted after), otherwise a folder that
appeared meanwhile (another process finished first) is kept and the new one discarded.

Links: nothing rulegauge writes under a run folder goes through a symbolic
link. :func:`check_no_links` refuses a path when it, or any folder between a
root and it, is a link (a planted ``.partial -> /elsewhere``), and
:func:`open_nofollow` opens a file with ``O_NOFOLLOW`` (a planted ``.lock`` or
journal link fails with a :class:`~rulegauge.core.errors.RulegaugeError` instead of
truncating the file it points to). ``atomic_path(target, within=root)`` applies
the check before writing. Reference: open(2) ``O_NOFOLLOW``.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import functools
import os
import secrets
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rulegauge.core.errors import RulegaugeError


def temp_name(target: Path | str, tag: str = "tmp") -> Path:
    """A unique sibling of ``target``: ``.<name>.<tag>-<pid>-<8 hex>``."""
    t = Path(target)
    return t.with_name(f".{t.name}.{tag}-{os.getpid()}-{secrets.token_hex(4)}")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def link_error(path: Path) -> RulegaugeError:
    """The message for a link found where rulegauge writes or reads run files."""
    try:
        where = f" (it points to {os.readlink(path)})"
    except OSError:
        where = ""
    return RulegaugeError(f"{path} is a symbolic link{where}; rulegauge does not read or "
                        "write run files through links: remove it")


def check_no_links(path: Path | str, root: Path | str) -> Path:
    """``path`` after checking that neither ``root`` nor anything from ``root`` down to
    ``path`` (inclusive) is a symbolic link, and that ``path`` lies under ``root``."""
    p, r = Path(path), Path(root)
    try:
        rel = p.relative_to(r)
    except ValueError:
        raise RulegaugeError(f"{p} is not inside {r}") from None
    node = r
    for part in ("", *rel.parts):
        node = node / part if part else node
        if part == "..":
            raise RulegaugeError(f"{p}: '..' leads outside {r}")
        if node.is_symlink():
            raise link_error(node)
    return p


def open_nofollow(path: Path | str, flags: int, mode: int = 0o644) -> int:
    """``os.open(path, flags | O_NOFOLLOW)``; a link at ``path`` raises
    :class:`RulegaugeError` naming it (nothing is opened through it)."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP or Path(path).is_symlink():
            raise link_error(Path(path)) from None
        raise


def read_bytes_nofollow(path: Path | str, limit: int | None = None) -> bytes:
    """The bytes of ``path`` read without following a link (at most ``limit`` + 1
    bytes, so a caller can tell an oversized file)."""
    fd = open_nofollow(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as f:
        return f.read() if limit is None else f.read(limit + 1)


def fsync_path(path: Path) -> None:
    """``fsync`` a file (its bytes) or a folder (its entries: a rename in it survives a
    power cut). Reference: fsync(2), "calling fsync() on a file descriptor for the directory"."""
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if path.is_dir() else 0)
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_path(target: Path | str, *, within: Path | str | None = None) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``target``.
    ``within``: refuse links from that folder down to ``target`` (:func:`check_no_links`)."""
    t = Path(target)
    if within is not None:
        check_no_links(t, within)
    t.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(t)
    try:
        yield tmp
        fsync_path(tmp)
        os.replace(tmp, t)
        fsync_path(t.parent)
    finally:
        if tmp.exists():
            _remove(tmp)


def write_bytes(target: Path | str, data: bytes) -> Path:
    """Write ``data`` to ``target`` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)
    return Path(target)


def write_text(target: Path | str, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``target`` atomically."""
    return write_bytes(target, text.encode(encoding))


AT_FDCWD = -100  # <fcntl.h>: paths relative to the working directory
RENAME_EXCHANGE = 2  # <linux/fs.h>: swap the two names atomically


@functools.cache
def _renameat2() -> Any:
    """libc's ``renameat2`` (glibc 2.28+, Linux), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    fn.restype = ctypes.c_int
    return fn


def exchange(a: Path, b: Path) -> bool:
    """Swap the names ``a`` and ``b`` in one atomic step (Linux ``renameat2(2)`` with
    ``RENAME_EXCHANGE``, through ctypes): at every moment each name holds one of the two
    trees, whole. False, nothing changed, where the kernel, the C library or the file system
    has no such exchange (``ENOSYS``, ``EINVAL``, ``EOPNOTSUPP``, not Linux); another error
    raises ``OSError``. Reference: renameat2(2), "RENAME_EXCHANGE"."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


def _swap_in(tmp: Path, target: Path) -> None:
    """Put the folder ``tmp`` at ``target``, which exists, and delete the old tree.

    Where :func:`exchange` works, ``target`` names the old tree and then the new one, with no
    moment in between. The fallback gives that up: two renames (the old tree moved aside,
    then the new one in), so for the moment between them ``target`` does not exist, and a
    reader then (or a crash, which leaves the old tree under its ``.old-`` name) finds no
    folder there, never a half-written one."""
    if exchange(tmp, target):
        _remove(tmp)  # tmp now holds the old tree
        return
    old = temp_name(target, "old")
    os.replace(target, old)
    os.replace(tmp, target)
    _remove(old)


@contextmanager
def atomic_dir(target: Path | str, *, replace: bool = False) -> Iterator[Path]:
    """Yield a temporary folder to fill; on success it becomes ``target``.

    ``replace=True``: an existing ``target`` is exchanged with the new folder in one step
    and the old tree deleted after (:func:`_swap_in`; where the kernel has no exchange, two
    renames with a moment without ``target``). ``replace=False``: if ``target`` exists by
    then, it is kept (another process finished first) and the new folder is discarded.
    The folder holding ``target`` is ``fsync``-ed after the rename.
    """
    t = Path(target)
    t.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(t)
    try:
        tmp.mkdir()
        yield tmp
        if replace and t.exists():
            _swap_in(tmp, t)
            fsync_path(t.parent)
        elif not t.exists():
            try:
                os.rename(tmp, t)
                fsync_path(t.parent)
            except OSError:  # another process renamed its folder first
                if not t.exists():
                    raise
    finally:
        if tmp.exists():
            _remove(tmp)


def _write_failed(path: Path, exc: OSError) -> RulegaugeError:
    why = "no space left on device" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
    return RulegaugeError(f"{path}: cannot write ({why}); the file keeps its previous content")


@contextmanager
def atomic_file(path: Path, within: Path | None = None) -> Iterator[Path]:
    """Yield a temporary path to write; when the block ends it is renamed over ``path``.
    On an ``OSError`` the temporary file is removed and a :class:`RulegaugeError` names
    ``path``. ``within``: refuse links from that folder down (:func:`check_no_links`)."""
    try:
        with atomic_path(path, within=within) as tmp:  # removes the temporary on any error
            yield tmp
    except OSError as exc:
        raise _write_failed(path, exc) from None


def atomic_write(path: Path, write: Any, within: Path | None = None) -> None:
    """Call ``write(tmp)`` then rename ``tmp`` over ``path`` (:func:`atomic_file`)."""
    with atomic_file(path, within) as tmp:
        write(tmp)


class LockHeld(RulegaugeError):
    """Another process (or open file) holds the lock; ``holder`` is the pid it wrote."""

    def __init__(self, lock: Path, holder: str) -> None:
        super().__init__(f"{lock} is held by pid {holder}")
        self.holder = holder


def lock_exclusive(lock: Path) -> int:
    """Open ``lock`` (created; never through a link, :func:`open_nofollow`), take an
    exclusive non-blocking ``flock`` and write this process's pid into it; the descriptor
    is returned (closing it releases the lock). Held elsewhere: :class:`LockHeld`.
    Reference: flock(2) (locks per open file description, released with the process)."""
    fd = open_nofollow(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise LockHeld(lock, holder) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd
