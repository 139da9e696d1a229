"""Temporaries of dead processes: each one held by its owner's lock, swept once the owner is gone.

Every temporary rulegauge writes (:mod:`rulegauge.core.atomic`) is named
``.<name>.<tag>-<pid>-<8 hex>`` (:data:`TEMP`) and, while its owner writes it, held by an
exclusive ``flock`` on the temporary itself (:func:`hold`: a file or a folder; the lock is
released by the kernel when the owner dies, ``kill -9`` included). A temporary is its dead
owner's, and removed by :func:`sweep`, only when both checks say so: its lock can be taken
(no live process holds it) and the pid in its name is not alive. So a live writer's
temporary is never touched (its lock is held, in this process or another), and one of an
older writer that held no lock is kept while its pid lives.

Who sweeps: the next command that takes the same lock, the lock being the name written.
:func:`rulegauge.core.atomic.atomic_path` and :func:`~rulegauge.core.atomic.atomic_dir`
sweep the temporaries of their own target (a SIGKILLed ``goldset import-beir -o OUT``
leaves ``.OUT.tmp-*``, removed by the next import into ``OUT``); a run's writer sweeps
the whole run folder once it holds the run lock (:mod:`rulegauge.store.runlock`: a
SIGKILLed run's ``.<table>.parquet.tmp-*``, removed by the resume).

Reference: flock(2) ("locks are released when the process terminates"); kill(2) with
signal 0 (existence check).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import stat
from pathlib import Path

TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<tag>[a-z]+)-(?P<pid>\d+)-[0-9a-f]{8}$")
"""The name of a temporary: ``.<name>.<tag>-<pid>-<8 hex>``."""


def hold(path: Path) -> int:
    """Open the temporary ``path`` (a file or a folder, never through a link) and take an
    exclusive ``flock`` on it; the descriptor is returned (closing it releases the lock)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags | (os.O_DIRECTORY if path.is_dir() else 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise
    return fd


def alive(pid: int) -> bool:
    """True when a process ``pid`` exists (ours or another user's)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, another user's
        return True
    return True


def owner_gone(path: Path) -> bool:
    """True when the temporary ``path`` is no live process's (module docstring: its lock is
    free and the pid its name carries is not alive)."""
    m = TEMP.match(path.name)
    if m is None or alive(int(m["pid"])):
        return False
    try:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            return True  # rulegauge never makes a temporary that is a link
        fd = hold(path)
    except OSError:
        return False  # held (a live owner), or gone already
    os.close(fd)
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def sweep(folder: Path | str, name: str | None = None, *, recursive: bool = False) -> list[Path]:
    """Remove the temporaries in ``folder`` (of target ``name`` only, when given; in every
    folder below too with ``recursive``, links never followed) whose owner is gone; the
    removed paths are returned. Nothing else is touched, and a folder that cannot be listed
    is skipped."""
    removed: list[Path] = []
    todo = [Path(folder)]
    while todo:
        here = todo.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for e in entries:
            m = TEMP.match(e.name)
            path = Path(e.path)
            if m is not None and (name is None or m["name"] == name):
                if owner_gone(path):
                    _remove(path)
                    removed.append(path)
            elif recursive and e.is_dir(follow_symlinks=False):
                todo.append(path)
    return removed
