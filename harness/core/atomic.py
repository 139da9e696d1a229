"""Atomic writes: write beside the target under a unique temporary name, then rename.

A reader never sees a half-written file or folder: the content goes to
``.<name>.tmp-<pid>-<random>`` in the target's folder (same file system, so the
rename is atomic, POSIX ``rename(2)``), and only a complete write is renamed onto
the target; on any error the temporary is removed and the target is untouched.
The name carries the process id and a random token, so concurrent writers (two
processes, or two threads of one) never share a temporary.

Edge cases: :func:`atomic_path` replaces an existing file; :func:`atomic_dir`
replaces an existing folder only with ``replace=True`` (the old one is moved aside
first and deleted after), otherwise a folder that appeared meanwhile (another
process finished first) is kept and the new one discarded.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def temp_name(target: Path | str, tag: str = "tmp") -> Path:
    """A unique sibling of ``target``: ``.<name>.<tag>-<pid>-<8 hex>``."""
    t = Path(target)
    return t.with_name(f".{t.name}.{tag}-{os.getpid()}-{secrets.token_hex(4)}")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@contextmanager
def atomic_path(target: Path | str) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``target``."""
    t = Path(target)
    t.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(t)
    try:
        yield tmp
        os.replace(tmp, t)
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


@contextmanager
def atomic_dir(target: Path | str, *, replace: bool = False) -> Iterator[Path]:
    """Yield a temporary folder to fill; on success it becomes ``target``.

    ``replace=True``: an existing ``target`` is moved aside and deleted after the
    swap. ``replace=False``: if ``target`` exists by then, it is kept (another
    process finished first) and the new folder is discarded.
    """
    t = Path(target)
    t.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(t)
    try:
        tmp.mkdir()
        yield tmp
        if replace and t.exists():
            old = temp_name(t, "old")
            os.replace(t, old)
            os.replace(tmp, t)
            _remove(old)
        elif not t.exists():
            try:
                os.rename(tmp, t)
            except OSError:  # another process renamed its folder first
                if not t.exists():
                    raise
    finally:
        if tmp.exists():
            _remove(tmp)
