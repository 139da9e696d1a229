"""No output over an input: the one check every command with ``-o`` makes before it writes.

:func:`check_output` refuses (:class:`~rulegauge.core.errors.ConfigError`, exit 2 through
:func:`rulegauge.cli.errors.bad_input_exits_2`) an output path that is one of the
command's inputs: the same path once resolved (``os.path.realpath``: ``./x``, ``a/../x``
and symbolic links), or the same file by another name (``os.path.samefile``: the same
device and inode, a hard link). A run given as input counts with every file of it the
command reads (:func:`run_inputs`: its manifest, its tables and the gold set it names).
The message names both paths. Nothing is written before the check: commands call it
before their first write (and before slow work where they can).

Convention: an input that does not exist cannot be overwritten, so it never matches by
inode; it still matches by resolved path (an output named like a missing input is
refused, as its reading would fail anyway).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from rulegauge.core.errors import ConfigError

if TYPE_CHECKING:
    from rulegauge.store.rundir import Run


def same_file(a: Path, b: Path) -> bool:
    """True when ``a`` and ``b`` name one file or folder (resolved path, or device and inode)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def run_inputs(run: Run) -> list[Path]:
    """The files a command reading ``run`` reads: the run folder, its manifest, its tables
    and the gold set the manifest names."""
    files = [run.path, run.path / "manifest.json", *(run.path / f"{t}.parquet" for t in run.tables())]
    goldset = run.manifest.get("goldset")
    if isinstance(goldset, dict) and isinstance(goldset.get("path"), str):
        files.append(Path(goldset["path"]))
    return files


def check_output(out: Path | str, inputs: Iterable[Path | str | None], *,
                 runs: Iterable[Run] = (), flag: str = "-o") -> Path:
    """``out`` after checking that it is none of ``inputs`` (``None`` entries skipped) nor a
    file of ``runs``; a match raises ConfigError naming both."""
    target = Path(out)
    files = [Path(p) for p in inputs if p is not None and str(p) != ""]
    files += [f for r in runs for f in run_inputs(r)]
    for given in files:
        if same_file(target, given):
            how = ("" if os.path.abspath(target) == os.path.abspath(given)
                   else " (the same file by another name or through a link)")
            raise ConfigError(f"{flag} {target} is the input {given}{how}: writing it would "
                              "destroy what this command reads; choose another output path")
    return target
