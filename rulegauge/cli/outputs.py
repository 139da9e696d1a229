"""No output over an input: the one check every command with ``-o`` makes before it writes.

The rule: no output path may equal, or lie inside, anything the command reads.
:func:`check_output` refuses (:class:`~rulegauge.core.errors.ConfigError`, exit 2 through
:func:`rulegauge.cli.errors.bad_input_exits_2`) an output path that

* is one of the command's inputs: the same path once resolved (``os.path.realpath``:
  ``./x``, ``a/../x`` and symbolic links), or the same file by another name
  (``os.path.samefile``: the same device and inode, a hard link);
* lies inside an input (a folder the command reads, such as a BEIR folder);
* is a document a gold set among the inputs names (:func:`inputs_of`: every ``.yaml`` or
  ``.yml`` input is read for its ``documents:``, :func:`rulegauge.goldset.documents.named_paths`),
  so ``goldset migrate -o <the old edition>`` or ``pool -o <a rulebook>`` never replaces it;
* is a file of a run given as input (:func:`run_inputs`: its folder, manifest, tables,
  lock and ``.partial`` folder, the gold set its manifest names and that gold set's
  documents). A run folder counts as itself, not as a container: a new name inside it
  (``export``'s default ``RUN/export-trec``) is no input.

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
from typing import TYPE_CHECKING, NamedTuple

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


def inside(a: Path, b: Path) -> bool:
    """True when ``a`` lies strictly inside ``b`` once both are resolved (links followed)."""
    return Path(os.path.realpath(a)).is_relative_to(os.path.realpath(b)) and not same_file(a, b)


class Input(NamedTuple):
    """One thing a command reads: its path and what the message says of it (``whose``)."""

    path: Path
    whose: str = ""


def inputs_of(paths: Iterable[Path | str | None]) -> list[Input]:
    """``paths`` (``None`` and empty entries skipped) with, after each gold set among them,
    the documents it names."""
    # deferred: the gold-set reader loads numpy and pyarrow; `rulegauge --help` stays fast
    from rulegauge.goldset.documents import named_paths
    from rulegauge.goldset.labels import is_goldset_path

    out: list[Input] = []
    for p in paths:
        if p is None or str(p) == "":
            continue
        out.append(Input(Path(p)))
        if is_goldset_path(p):
            out += [Input(f, f" (document {doc} of the gold set {p})") for doc, f in named_paths(p)]
    return out


def run_inputs(run: Run) -> list[Input]:
    """What a command reading ``run`` reads: the run folder, its manifest, lock,
    ``.partial`` folder and tables, the gold set the manifest names and its documents."""
    files = [run.path, run.path / "manifest.json", run.path / ".lock", run.path / ".partial",
             *(run.path / f"{t}.parquet" for t in run.tables())]
    found = [Input(f, f" (of run {run.run_id})") for f in files]
    goldset = run.manifest.get("goldset")
    if isinstance(goldset, dict) and isinstance(goldset.get("path"), str):
        found += [Input(i.path, i.whose[:-1] + f", read by run {run.run_id})" if i.whose
                        else f" (the gold set of run {run.run_id})")
                  for i in inputs_of((goldset["path"],))]
    return found


def check_output(out: Path | str, inputs: Iterable[Path | str | None], *,
                 runs: Iterable[Run] = (), flag: str = "-o") -> Path:
    """``out`` after checking it against ``inputs`` (gold sets with their documents,
    :func:`inputs_of`) and the files of ``runs`` (module docstring); a match raises
    :class:`ConfigError` naming both."""
    target = Path(out)
    runs = tuple(runs)
    found = inputs_of(inputs) + [f for r in runs for f in run_inputs(r)]
    folders = {os.path.realpath(r.path) for r in runs}
    for given, whose in found:
        if same_file(target, given):
            how = ("" if os.path.abspath(target) == os.path.abspath(given)
                   else " (the same file by another name or through a link)")
            raise ConfigError(f"{flag} {target} is the input {given}{whose}{how}: writing it "
                              "would destroy what this command reads; choose another output path")
        if os.path.realpath(given) not in folders and inside(target, given):
            raise ConfigError(f"{flag} {target} lies inside the input {given}{whose}: writing "
                              "there would change what this command reads; choose an output "
                              "path outside it")
    return target
