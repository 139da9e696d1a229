"""Synthetic runs for the fault tier, built once per process and copied per row.

Why: a synthetic run (:func:`tests.helpers.analysis.write_synthetic_run`) costs about 0.5 CPU-s
in pandas, and the gate and table rows build two each (about 40 CPU-s over the tier), yet the
run depends only on its folder name and keyword arguments: same seed, same fixed ``created``
stamp, no absolute path in any file. So the first request for a (name, arguments) pair writes
the run into a template folder of this process; every request copies that template into the
row's own folder. Each row still gets a fresh, complete, writable copy of the very bytes the
build would have written (rows that damage their copy do not touch the template or each other),
with fresh modification times (``shutil.copy``, not ``copy2``), as a build would leave them.

Real runs (:func:`tests.helpers.fault_runs.real_run`) are not memoised: they record the case
folder's absolute paths.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

_TEMPLATES: dict[tuple[str, str], Path] = {}
_HOME: list[Path] = []  # this process's template folder, made on first use


def _home() -> Path:
    if not _HOME:
        home = Path(tempfile.mkdtemp(prefix="rulegauge-fault-templates-"))
        atexit.register(shutil.rmtree, home, ignore_errors=True)
        _HOME.append(home)
    return _HOME[0]


def synthetic_run(path: Path, **kw: Any) -> Path:
    """What ``write_synthetic_run(path, **kw)`` writes, copied from this process's template."""
    from tests.helpers.analysis import write_synthetic_run

    key = (path.name, repr(sorted(kw.items())))
    template = _TEMPLATES.get(key)
    if template is None:
        template = write_synthetic_run(_home() / str(len(_TEMPLATES)) / path.name, **kw)
        _TEMPLATES[key] = template
    shutil.copytree(template, path, symlinks=True, copy_function=shutil.copy, dirs_exist_ok=True)
    return path
