"""Atomic writes: write beside the target under a unique temporary name, then rename.

A reader never sees a half-written file or folder, and a completed write survives a
power cut: the content goes to ``.<name>.tmp-<pid>-<random>`` in the target's folder
(same file system, so the rename is atomic, POSIX ``rename(2)``), is ``fsync``-ed, and
only then renamed onto the target, whose folder is ``fsync``-ed after the rename
(:func:`fsync_path`); on any error the temporary is removed and the target is untouched.
The name carries the process id and a random token, so concurrent writers (two
processes, or two threads of one) never share a temporary; the owner holds a lock on its
temporary while it writes, and the temporaries of dead owners are swept by the next write
of the same target (:mod:`rulegauge.core.temps`).

Edge cases: :func:`atomic_path` replaces an existing file; :func:`atomic_dir`
replaces an existing folder only with ``replace=True`` (the two folders are exchanged in
one step, :func:`exchange`, and the old one is deleted after). With ``replace=False`` a
folder that appeared while the block ran (another process finished first) is kept, the
new one discarded and :class:`TargetExists` raised: the check is the rename itself
(:func:`rename_noreplace`, ``renameat2`` ``RENAME_NOREPLACE``), so no moment lies between
the check and the rename. An ``OSError`` while writing (a full disk, a file-size limit)
raises a :class:`RulegaugeError` naming the target, never the temporary.

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

from rulegauge.core import temps
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


class TargetExists(RulegaugeError):
    """``target`` appeared while a write that must not replace it ran (another process
    wrote it first); it is kept and nothing of this write is left."""

    def __init__(self, target: Path) -> None:
        super().__init__(f"{target} appeared while this command ran (another process wrote it "
                         "first); it is kept as that process wrote it and nothing of this "
                         "command's was written")
        self.target = target


def _write_error(target: Path, exc: OSError, tmp: Path, *, existed: bool) -> BaseException:
    """The error to raise for ``exc`` met while writing ``target`` through ``tmp``: one
    naming ``target`` when ``exc`` names no file or names the temporary (what the user
    wrote, never a temporary's name), else ``exc`` itself (an input it could not read)."""
    where = exc.filename
    if where is not None and not Path(os.fsdecode(where)).is_relative_to(tmp):
        return exc
    why = {errno.ENOSPC: "no space left on device", errno.EFBIG: "file too large: a file-size "
           "limit (ulimit -f) or the file system's largest file",
           errno.EDQUOT: "disk quota exceeded"}.get(exc.errno or 0, exc.strerror or str(exc))
    kept = "it keeps its previous content" if existed else "nothing was written there"
    return RulegaugeError(f"{target}: cannot write ({why}); {kept}")


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
    temps.sweep(t.parent, t.name)
    tmp = temp_name(t)
    existed = os.path.lexists(t)
    held = -1
    try:
        os.close(open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        held = temps.hold(tmp)  # the writer opens it by name: the same file, still held
        yield tmp
        fsync_path(tmp)
        os.replace(tmp, t)
        fsync_path(t.parent)
    except OSError as exc:
        raise _write_error(t, exc, tmp, existed=existed) from None
    finally:
        if held >= 0:
            os.close(held)
        if os.path.lexists(tmp):
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
RENAME_NOREPLACE = 1  # <linux/fs.h>: fail with EEXIST rather than replace the new name
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


def rename_noreplace(src: Path, dst: Path) -> None:
    """Rename ``src`` to ``dst`` unless ``dst`` exists, checked by the rename itself
    (``renameat2(2)`` with ``RENAME_NOREPLACE``): :class:`FileExistsError` when it exists,
    whatever appeared there just before. Where there is no such rename, ``dst`` is reserved
    by a call that cannot replace (``mkdir`` for a folder, then ``rename`` onto that empty
    folder; ``link`` for a file, then ``unlink`` of ``src``).
    Reference: renameat2(2), "RENAME_NOREPLACE"; rename(2) ("newpath ... an empty directory")."""
    fn = _renameat2()
    if fn is not None:
        if fn(AT_FDCWD, os.fsencode(src), AT_FDCWD, os.fsencode(dst), RENAME_NOREPLACE) == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
            raise (FileExistsError if err == errno.EEXIST else OSError)(err, os.strerror(err),
                                                                         str(dst))
    if src.is_dir() and not src.is_symlink():
        os.mkdir(dst)  # FileExistsError when it exists
        try:
            os.rename(src, dst)
        except OSError:
            os.rmdir(dst)
            raise
    else:
        os.link(src, dst, follow_symlinks=False)
        os.unlink(src)


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
    renames with a moment without ``target``). ``replace=False``: the new folder is renamed
    to ``target`` only if nothing is there at that moment (:func:`rename_noreplace`);
    otherwise it is discarded and :class:`TargetExists` raised (another process finished
    first: its folder is kept). The folder holding ``target`` is ``fsync``-ed after the
    rename. The temporaries of dead writers of ``target`` are swept first (:mod:`rulegauge.core.temps`).
    """
    t = Path(target)
    t.parent.mkdir(parents=True, exist_ok=True)
    temps.sweep(t.parent, t.name)
    tmp = temp_name(t)
    existed = os.path.lexists(t)
    held = -1
    try:
        tmp.mkdir()
        held = temps.hold(tmp)
        yield tmp
        if replace and os.path.lexists(t):
            _swap_in(tmp, t)
        else:
            try:
                rename_noreplace(tmp, t)
            except FileExistsError:
                if not replace:
                    raise TargetExists(t) from None
                _swap_in(tmp, t)  # appeared meanwhile: replaced all the same
        fsync_path(t.parent)
    except OSError as exc:
        raise _write_error(t, exc, tmp, existed=existed) from None
    finally:
        if held >= 0:
            os.close(held)
        if os.path.lexists(tmp):
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
