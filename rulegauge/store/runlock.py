"""The one-writer-per-run lock: an exclusive ``fcntl.flock`` on ``<run>/.lock``.

A second *process* is refused with a :class:`RulegaugeError` naming the run and the
holder's pid; writers in the same process share the lock (a run that answers opens
the run again), and the manifest's read-modify-write also holds a per-run thread
lock. The lock goes with the process, so a killed run can be resumed at once; the
writer that takes it sweeps the temporaries the killed one left (``.<table>.parquet.tmp-*``,
:func:`rulegauge.core.temps.sweep`). The
lock file is opened with ``O_NOFOLLOW``: a planted link at ``.lock`` is refused,
never truncated through.

Reference: flock(2) (advisory locks per open file description); open(2) ``O_NOFOLLOW``.
"""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path
from typing import ClassVar

from rulegauge.core import temps
from rulegauge.core.atomic import LockHeld, lock_exclusive, open_nofollow
from rulegauge.core.errors import RulegaugeError

LOCK = ".lock"


class RunLock:
    """The process's exclusive lock on one run folder, shared by its writers."""

    _held: ClassVar[dict[str, tuple[int, int]]] = {}  # resolved path -> (fd, writers)
    _guard = threading.Lock()
    _manifest_locks: ClassVar[dict[str, threading.Lock]] = {}

    @classmethod
    def acquire(cls, folder: Path) -> str:
        key = str(folder.resolve())
        with cls._guard:
            if key in cls._held:
                fd, n = cls._held[key]
                cls._held[key] = (fd, n + 1)
                return key
            lock = folder / LOCK
            try:
                fd = lock_exclusive(lock)
            except LockHeld as exc:
                raise RulegaugeError(f"run {folder.name} ({folder}) is being written by another "
                                   f"process (pid {exc.holder}); wait for it to finish or choose "
                                   "another --run-id") from None
            except OSError as exc:
                raise RulegaugeError(f"{lock}: cannot create the run lock "
                                   f"({exc.strerror or exc})") from None
            cls._held[key] = (fd, 1)
            cls._manifest_locks.setdefault(key, threading.Lock())
            temps.sweep(folder, recursive=True)  # a killed writer's temporaries: its lock is ours now
            return key

    @classmethod
    def release(cls, key: str) -> None:
        with cls._guard:
            fd, n = cls._held.get(key, (-1, 0))
            if n > 1:
                cls._held[key] = (fd, n - 1)
            elif n == 1:
                del cls._held[key]
                os.close(fd)  # closing the descriptor releases the flock

    @classmethod
    def manifest_lock(cls, key: str) -> threading.Lock:
        with cls._guard:
            return cls._manifest_locks.setdefault(key, threading.Lock())


def is_locked(folder: Path) -> bool:
    """True when another process holds ``folder``'s run lock (it is being written)."""
    lock = Path(folder) / LOCK
    if not lock.exists() or lock.is_symlink():
        return False
    if str(Path(folder).resolve()) in RunLock._held:
        return False  # this process's own writer
    try:
        fd = open_nofollow(lock, os.O_RDONLY)
    except (OSError, RulegaugeError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False
