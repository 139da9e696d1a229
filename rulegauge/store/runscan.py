"""The runs folder, scanned once for every command that reads more than one run.

:func:`scan` lists every run folder under ``runs_dir`` (a folder holding a ``manifest.json``, not
a link), oldest first by the manifest's ``created`` time, then name, each with its manifest read and
shape-checked (:func:`rulegauge.store.manifest.read_manifest`) or, when that fails, the reason
(``damaged``). One damaged run must not break the commands that read the others (``report``'s trend
chart, ``trend``, ``latest``, ``query``): :func:`readable` leaves each damaged run out with a warning
naming its manifest and why, once per process and run, and every scanning command goes through it.

Edge cases: a folder without a manifest is no run (not listed); an unreadable file (permissions)
counts as damaged; the order of two runs created in the same microsecond is by folder name.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rulegauge.core.errors import RulegaugeError
from rulegauge.store.manifest import MANIFEST, read_manifest

log = logging.getLogger(__name__)
_WARNED: set[str] = set()


@dataclass(frozen=True)
class Scanned:
    """One run folder: its manifest, or why it could not be read (``damaged``)."""

    path: Path
    manifest: dict[str, Any] = field(default_factory=dict)
    damaged: str = ""


def scan(runs_dir: Path) -> list[Scanned]:
    """Every run folder under ``runs_dir``, oldest first (module docstring)."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        return []
    found = []
    for p in runs_dir.iterdir():
        if not p.is_dir() or p.is_symlink() or not (p / MANIFEST).exists():
            continue
        try:
            item = Scanned(p, read_manifest(p))
        except (RulegaugeError, OSError) as exc:
            item = Scanned(p, {}, str(exc))
        found.append((str(item.manifest.get("created", "")), p.name, item))
    return [item for _, _, item in sorted(found, key=lambda t: (t[0], t[1]))]


def warn_damaged(item: Scanned) -> None:
    """The warning that ``item`` (a damaged run) was left out, once per process."""
    if item.damaged and str(item.path) not in _WARNED:
        _WARNED.add(str(item.path))
        log.warning("run %s left out: %s", item.path.name, item.damaged)


def readable(runs_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    """(run folder, manifest) of every run whose manifest reads, oldest first; each damaged run is
    left out with a warning naming it (:func:`warn_damaged`)."""
    out = []
    for item in scan(runs_dir):
        if item.damaged:
            warn_damaged(item)
        else:
            out.append((item.path, item.manifest))
    return out
