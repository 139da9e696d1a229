"""A folder every pytest-xdist worker of one session shares, and a lock over it.

Under xdist each worker's ``basetemp`` is ``<session temp>/popen-gwN``; the session's own
folder is its parent (as :mod:`tests.team.conftest` uses for the one wheel of a session).
Run without xdist, ``basetemp`` is the session's folder itself. A fixture that computes an
expensive input once per session takes the lock, computes it when it is not there yet and
reads it otherwise: the first worker computes, the others wait and reuse it.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def session_folder(factory: pytest.TempPathFactory, name: str) -> Path:
    """``<session temp>/<name>``, created; the same folder for every worker of the session."""
    base = factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def session_lock(factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """Hold ``<session temp>/<name>.lock`` (exclusive) and yield :func:`session_folder`."""
    folder = session_folder(factory, name)
    with open(folder.parent / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield folder
