"""The run store: ``runs/<run_id>/`` with ``manifest.json`` and Parquet tables.

Writes are atomic (temporary file, then rename), so an interrupted run never
leaves a half-written table; tables already written survive and a resumed run
skips them. Each table's SHA-256 is recorded in the manifest and checked when a
run is opened (:class:`rulegauge.core.errors.ProvenanceError` on mismatch).

Concurrency and hostile input:

* one writer per run (:mod:`rulegauge.store.runlock`: ``flock`` on ``<run>/.lock``,
  opened with ``O_NOFOLLOW``);
* temporary names carry the pid and a random suffix (``.<name>.tmp-<pid>-<hex>``);
* a failed write (``ENOSPC``, ``EACCES`` ...) removes its temporary file and
  raises a :class:`RulegaugeError` naming the file: the table or manifest keeps
  its previous content;
* run ids are confined to the runs folder (:func:`run_path`, the one check in
  :func:`rulegauge.core.names.check_name`);
* nothing is written or read through a link under a run folder (the run folder
  itself, ``.partial``, journals, tables, the manifest: :meth:`RunWriter.file`);
* the manifest's shape and every table's columns are checked when a run is opened
  (:mod:`rulegauge.store.manifest`); ``has_table`` means "recorded in the manifest";
* a refused command never changes a complete run (:meth:`RunWriter.mark_failed`).

Reference: flock(2) (advisory locks per open file description).
"""

from __future__ import annotations

import json
import logging
import secrets
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from rulegauge.core.atomic import atomic_write, check_no_links, link_error
from rulegauge.core.atomic import temp_name as temp_name  # re-exported
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import ConfigError, ProvenanceError, RulegaugeError
from rulegauge.core.names import check_name
from rulegauge.core.redact import redact_text
from rulegauge.store.casting import cast_table, pandas_metadata, to_arrow
from rulegauge.store.fits import Wants
from rulegauge.store.manifest import MANIFEST as MANIFEST
from rulegauge.store.manifest import check_columns, read_manifest
from rulegauge.store.part_sink import PartSink, parquet_parts
from rulegauge.store.runlock import RunLock
from rulegauge.store.runscan import readable
from rulegauge.store.schema import RUN_ID, missing_note
from rulegauge.store.schema import spec as table_spec
from rulegauge.store.table_contract import KeyCheck, check_file_keys, check_keys

log = logging.getLogger(__name__)


def new_run_id(prefix: str = "run") -> str:
    """``run-YYYYmmdd-HHMMSS-xxxx``: sortable by time, unique by a random suffix."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{prefix}-{stamp}-{secrets.token_hex(2)}"


def check_run_id(run_id: str) -> str:
    """``run_id`` when it is a plain folder name, else raise (:func:`check_name`)."""
    try:
        return check_name("run id", run_id)
    except ConfigError as exc:
        raise RulegaugeError(f"{exc}; a run id is a folder name inside --out") from None


def run_path(runs_dir: Path, run_id: str) -> Path:
    """``runs_dir / run_id`` after checking the id stays inside ``runs_dir``."""
    check_run_id(run_id)
    path = Path(runs_dir) / run_id
    if path.is_symlink():
        raise link_error(path)
    if not path.resolve().is_relative_to(Path(runs_dir).resolve()):
        raise RulegaugeError(f"run id {run_id!r} leads outside {runs_dir}")
    return path


def failure_reason(exc: BaseException) -> str:
    """What a failed run's manifest says ended it: a :class:`RulegaugeError`'s message; for an
    interrupt or another exception (a bug, a plug-in's), its type and last line."""
    if isinstance(exc, RulegaugeError):
        return str(exc)
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (KeyboardInterrupt)"
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[-1] if lines else ''}".rstrip(": ")


class RunWriter:
    """Writes tables and the manifest of one run directory (holding its lock until
    :meth:`close` or until the writer is garbage-collected)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if self.path.is_symlink():
            raise link_error(self.path)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RulegaugeError(f"{self.path}: cannot create the run folder "
                               f"({exc.strerror or exc})") from None
        self._key = RunLock.acquire(self.path)
        self._release = weakref.finalize(self, RunLock.release, self._key)

    def close(self) -> None:
        """Release this writer's share of the run lock (idempotent)."""
        self._release()

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def run_id(self) -> str:
        return self.path.name

    def file(self, name: str) -> Path:
        """``<run>/<name>`` (``name`` may hold folders) after refusing any link on the way."""
        return check_no_links(self.path / name, self.path)

    def folder(self, name: str) -> Path:
        """``<run>/<name>/``, created if missing, never through a link."""
        p = self.file(name)
        p.mkdir(parents=True, exist_ok=True)
        return self.file(name)

    def has_table(self, name: str) -> bool:
        """True when table ``name`` is recorded in the manifest and its file is there
        (a file the manifest does not record is not a finished table)."""
        return name in self.read_manifest().get("tables", {}) and self.file(
            f"{name}.parquet").exists()

    def mark_failed(self, error: str) -> None:
        """Record ``status: failed`` and the error, unless the run was complete: a
        refused command leaves a complete run as it was."""
        with RunLock.manifest_lock(self._key):
            if self.read_manifest().get("status") == "complete":
                return
        self.update_manifest({"status": "failed", "error": redact_text(error)[:2000]})

    def table_run_id(self) -> str:
        """The ``run_id`` written into every row: the manifest's run id (a baseline
        keeps its source run's), else the directory name."""
        return str(self.read_manifest().get("run_id") or self.run_id)

    def write_table(self, name: str, df: pd.DataFrame,
                    families: dict[str, list[str]] | None = None) -> Path:
        """Write ``df`` as ``<name>.parquet`` atomically and record its hash."""
        return self.write_arrow(name, to_arrow(name, df, families, run_id=self.table_run_id()), families)

    def write_arrow(self, name: str, table: pa.Table,
                    families: dict[str, list[str]] | None = None) -> Path:
        """Write an Arrow table (cast to the registered schema) atomically; large
        tables are built in Arrow directly to avoid a Python object per cell. The
        ``run_id`` column is (re)filled with this run's id; the file carries the
        schema's field descriptions and file metadata."""
        spec = table_spec(name)
        meta = dict(table.schema.metadata or {})  # e.g. pandas' own key, kept beside ours
        table = self._cast(name, table, families).replace_schema_metadata({**meta, **spec.file_metadata()})
        check_keys(name, table, spec.key)  # the declared key is unique (store/table_contract)
        out = self.file(f"{name}.parquet")
        atomic_write(out, lambda tmp: pq.write_table(table, tmp, write_statistics=spec.statistics(families)),
                     self.path)
        self.update_manifest({"tables": {name: {"sha256": file_sha256(out), "rows": table.num_rows}}})
        return out

    def write_parts(self, name: str, parts: Iterable[pa.Table],
                    families: dict[str, list[str]] | None = None) -> int:
        """Write table ``name`` from Arrow ``parts`` (consumed one at a time, so the table is
        never whole in memory) as one Parquet file (:meth:`stream`). Returns the rows written."""
        with self.stream(name, families) as put:
            for part in parts:
                put(part)
        return put.rows

    @contextmanager
    def stream(self, name: str, families: dict[str, list[str]] | None = None) -> Iterator[PartSink]:
        """Stream table ``name`` into one Parquet file, one part per ``put(part)`` call
        (each cast to the registered schema), atomically: the file appears when the block
        ends without error (an error while the parts are made leaves no file), with the
        pandas metadata a frame would write (:func:`rulegauge.store.casting.pandas_metadata`),
        and its hash is recorded."""
        spec = table_spec(name)
        schema = spec.schema(families).with_metadata({**pandas_metadata(name, families), **spec.file_metadata()})
        out = self.file(f"{name}.parquet")
        run_id = self.table_run_id()  # read from the manifest once, not for every part
        keys = KeyCheck(name, spec.key)  # the declared key is unique over every part (store/table_contract)

        def cast(part: pa.Table) -> pa.Table:
            part = self._cast(name, part, families, run_id)
            keys.add(part)
            return part

        with parquet_parts(out, self.path, schema, statistics=spec.statistics(families), cast=cast) as sink:
            yield sink
            keys.check()  # before the file appears
        self.update_manifest({"tables": {name: {"sha256": file_sha256(out), "rows": sink.rows}}})

    def _cast(self, name: str, table: pa.Table, families: dict[str, list[str]] | None,
              run_id: str | None = None) -> pa.Table:
        """``table`` with this run's ``run_id`` column (``run_id``: :meth:`table_run_id`
        when the caller read it already), cast to the registered schema."""
        schema = table_spec(name).schema(families)
        if RUN_ID.name in table.column_names:
            table = table.drop_columns([RUN_ID.name])
        run_id = self.table_run_id() if run_id is None else run_id
        table = table.append_column(RUN_ID.name, pa.repeat(pa.scalar(run_id, pa.string()), table.num_rows))
        return cast_table(name, table, schema)

    def read_manifest(self) -> dict[str, Any]:
        """The manifest so far (``{}`` for a new run), shape-checked, never through a link."""
        return read_manifest(self.path, missing_ok=True)

    def update_manifest(self, patch: dict[str, Any]) -> dict[str, Any]:
        """Deep-merge ``patch`` into the manifest and write it atomically (under the
        run lock, so no concurrent update is lost)."""
        with RunLock.manifest_lock(self._key):
            m = _merge(self.read_manifest(), patch)
            data = json.dumps(m, indent=2, sort_keys=True, ensure_ascii=False).encode()
            atomic_write(self.path / MANIFEST, lambda tmp: Path(tmp).write_bytes(data), self.path)
        return m


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


class Run:
    """A finished (or partial) run directory opened for reading."""

    def __init__(self, path: Path, *, verify: bool = True) -> None:
        self.path = Path(path)
        if self.path.is_symlink():
            raise link_error(self.path)
        self.manifest: dict[str, Any] = read_manifest(self.path)
        if verify:
            self.verify()

    @property
    def run_id(self) -> str:
        return str(self.manifest.get("run_id", self.path.name))

    def verify(self) -> None:
        """Check every table's hash against the manifest, its columns against the declared
        schema and its declared key unique; report all mismatches."""
        bad = []
        for name, info in self.manifest.get("tables", {}).items():
            p = self.path / f"{name}.parquet"
            if p.is_symlink():
                bad.append(str(link_error(p)))
            elif not p.exists():
                bad.append(f"{name}.parquet is missing")
            elif file_sha256(p) != info.get("sha256"):
                bad.append(f"{name}.parquet does not match the hash in the manifest")
        if bad:
            raise ProvenanceError(f"{self.path}: " + "; ".join(bad))
        check_columns(self.path, self.tables())
        check_file_keys(self.path, self.tables())  # a table written by other means repeats no key

    @property
    def complete(self) -> bool:
        """True when the manifest says the run finished (``status: complete``)."""
        return self.manifest.get("status") == "complete"

    def tables(self) -> list[str]:
        return sorted(self.manifest.get("tables", {}))

    def has_table(self, name: str) -> bool:
        return name in self.manifest.get("tables", {})

    def table(self, name: str) -> pd.DataFrame:
        df: pd.DataFrame = self.arrow(name).to_pandas()
        return df

    def arrow(self, name: str, columns: list[str] | None = None) -> pa.Table:
        """Table ``name`` as Arrow (``columns``: only those), without the pandas conversion:
        the fast read for large tables such as ``metrics``."""
        if not self.has_table(name):
            raise RulegaugeError(f"run {self.run_id} has no table {name!r} (has: {', '.join(self.tables())})"
                                 + missing_note(name))
        return pq.read_table(self.path / f"{name}.parquet", columns=columns)

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r})"


def _manifests(runs_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    """(run directory, manifest) under ``runs_dir`` whose manifest reads, oldest first by the
    manifest's ``created`` time, then name; a damaged run is left out, with a warning naming it
    (:mod:`rulegauge.store.runscan`)."""
    return readable(runs_dir)


def list_runs(runs_dir: Path) -> list[Path]:
    """Run directories under ``runs_dir`` (those with a manifest), oldest first."""
    return [p for p, _ in _manifests(runs_dir)]


def run_kind(manifest: dict[str, Any]) -> str:
    """The kind of run a manifest describes: ``retrieval`` (``rulegauge run``; also
    manifests older than the ``kind`` field) or ``rulings`` (``rulegauge rulings import``)."""
    return str(manifest.get("kind") or "retrieval")


def run_metrics(path: Path, manifest: dict[str, Any]) -> set[str]:
    """The metrics a run scored: its manifest's ``metrics`` list, else (a manifest older
    than that key) the distinct names in its ``metrics`` table; empty without one."""
    listed = manifest.get("metrics")
    if isinstance(listed, list):
        return {str(m) for m in listed}
    if "metrics" not in (manifest.get("tables") or {}):
        return set()
    col = pq.read_table(Path(path) / "metrics.parquet", columns=["metric"]).column("metric")
    return {str(m) for m in col.unique().to_pylist()}


def _lacks(path: Path, manifest: dict[str, Any], needs: str | None, metrics: Sequence[str],
           wants: Wants | None = None) -> str:
    """Why a run cannot be the ``latest`` a command needs ('' when it can)."""
    if manifest.get("status") != "complete":
        return f"status {manifest.get('status') or 'unknown'}, not complete"
    if needs is not None and needs not in (manifest.get("tables") or {}):
        return f"no {needs} table"
    if needs is not None and ((manifest.get("tables") or {}).get(needs) or {}).get("rows") == 0:
        return f"its {needs} table is empty"  # e.g. fused rows of a --fused-config none run
    missing = [m for m in dict.fromkeys(metrics) if m not in run_metrics(path, manifest)] if metrics else []
    if missing:
        return f"metric(s) {', '.join(missing)} not scored"
    return wants.lacks(path, manifest) if wants is not None else ""


def open_run(ref: str | Path, runs_dir: Path = Path("runs"), *, verify: bool = True,
             kind: str | None = "retrieval", needs: str | None = None,
             metrics: Sequence[str] = (), wants: Wants | None = None) -> Run:
    """Open a run by path, by id under ``runs_dir``, or ``latest``.

    ``latest`` is the newest complete run *of the kind the caller reads*
    (``kind``; ``None`` for any kind) that has what the caller needs: with ``needs``,
    that table holding rows (``answerers latest`` opens the newest run with answers, not a newer run
    without); with ``metrics``, every one of those metrics scored (``gate --run latest``
    opens the newest run with the policy's metrics, not a newer ``-m recall@3`` run); with
    ``wants``, the gold set (by hash) and the configs the command names
    (:class:`rulegauge.store.fits.Wants`: ``report -c ID latest`` is not another gold set's run).
    Each newer run of the kind passed over is logged (a warning: which and why), so the
    command says why it did not take it. A ``rulings import`` never becomes the
    ``latest`` that ``bands`` or ``report`` open. A path or an id opens that run whatever
    its kind or metrics."""
    if str(ref) == "latest":
        passed: list[str] = []
        for p, m in reversed(_manifests(runs_dir)):
            if kind is not None and run_kind(m) != kind:
                continue
            why = _lacks(p, m, needs, metrics, wants)
            if not why:
                if passed:
                    log.warning("latest is run %s; newer run(s) skipped: %s", p.name, "; ".join(passed))
                return Run(p, verify=verify)
            passed.append(f"{p.name} ({why})")
        what = f"complete {kind} run" if kind else "complete run"
        asked = [*([f"an {needs} table"] if needs else []), *([f"metric(s) {', '.join(metrics)}"] if metrics else []),
                 *([wants.describe()] if wants is not None and wants.describe() else [])]
        raise RulegaugeError(f"no {what}{' with ' + ' and '.join(asked) if asked else ''} under {runs_dir}"
                             + (f"; skipped: {'; '.join(passed)}" if passed else ""))
    p = Path(ref)
    if not (p / MANIFEST).exists() and (Path(runs_dir) / str(ref) / MANIFEST).exists():
        p = Path(runs_dir) / str(ref)
    return Run(p, verify=verify)
