"""One row of the fault tier (see :mod:`tests.helpers.fault_cases`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Case:
    id: str
    build: Callable[[Path], None]
    argv: tuple[str, ...]
    exit: int
    fragment: str
    no_runs: bool = False  # the command must not leave anything under {root}/runs
    server: str | None = None  # hostile_server mode for {url}
    timeout_s: float = 180.0  # generous: the machine may be loaded; a hang is unbounded
    after: Callable[[Path], None] | None = None  # what must still hold after the command
    absent: str | None = None  # must not appear in the output nor in any file under runs/
