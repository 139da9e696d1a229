"""The run store: ``runs/<run_id>/`` with ``manifest.json`` and Parquet tables.

Writes are atomic (temporary file, then rename), so an interrupted run never
leaves a half-written table; tables already written survive and a resumed run
skips them. Each table's SHA-256 is recorded in the manifest and checked when a
run is opened (:class:`harness.core.errors.ProvenanceError` on mismatch).

Concurrency and hostile input:

* one writer per run: :class:`RunWriter` takes an exclusive ``fcntl.flock`` on
  ``<run>/.lock`` (non-blocking); a second *process* is refused with a
  :class:`HarnessError` naming the run and the holder's pid. Writers in the same
  process share the lock (a run that answers opens the run again), and the
  manifest's read-modify-write also holds a per-run thread lock. The lock goes
  with the process, so a killed run can be resumed at once;
* temporary names carry the pid and a random suffix (``.<name>.tmp-<pid>-<hex>``);
* a failed write (``ENOSPC``, ``EACCES`` ...) removes its temporary file and
  raises a :class:`HarnessError` naming the file: the table or manifest keeps
  its previous content;
* run ids are confined to the runs folder (:func:`run_path`): letters, digits,
  ``.``, ``_``, ``-``, not starting with a dot, at most 128 characters.

Reference: flock(2) (advisory locks per open file description).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import secrets
import threading
import weakref
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from harness.core.atomic import atomic_path, temp_name  # noqa: F401 (temp_name: re-exported)
from harness.core.digest import file_sha256
from harness.core.errors import HarnessError, ProvenanceError
from harness.store.schema import RUN_ID
from harness.store.tables import TABLES

MANIFEST = "manifest.json"


def new_run_id(prefix: str = "run") -> str:
    """``run-YYYYmmdd-HHMMSS-xxxx``: sortable by time, unique by a random suffix."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{prefix}-{stamp}-{secrets.token_hex(2)}"


_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_run_id(run_id: str) -> str:
    """``run_id`` when it is a plain folder name (see module docstring), else raise."""
    if not _RUN_ID.match(run_id) or ".." in run_id:
        raise HarnessError(f"bad run id {run_id!r}: use letters, digits, '.', '_' and '-' "
                           "(not starting with '.', no '..', at most 128 characters); "
                           "a run id is a folder name inside --out")
    return run_id


def run_path(runs_dir: Path, run_id: str) -> Path:
    """``runs_dir / run_id`` after checking the id stays inside ``runs_dir``."""
    check_run_id(run_id)
    path = Path(runs_dir) / run_id
    if not path.resolve().is_relative_to(Path(runs_dir).resolve()):
        raise HarnessError(f"run id {run_id!r} leads outside {runs_dir}")
    return path


def _write_failed(path: Path, exc: OSError) -> HarnessError:
    why = "no space left on device" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
    return HarnessError(f"{path}: cannot write ({why}); the file keeps its previous content")


def atomic_write(path: Path, write: Any) -> None:
    """Call ``write(tmp)`` then rename ``tmp`` over ``path``; on an ``OSError`` the
    temporary file is removed and a :class:`HarnessError` names ``path``."""
    try:
        with atomic_path(path) as tmp:  # removes the temporary on any error
            write(tmp)
    except OSError as exc:
        raise _write_failed(path, exc) from None


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_bytes(data))


class _RunLock:
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
            lock = folder / ".lock"
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise HarnessError(f"{lock}: cannot create the run lock "
                                   f"({exc.strerror or exc})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                os.close(fd)
                raise HarnessError(f"run {folder.name} ({folder}) is being written by another "
                                   f"process (pid {holder}); wait for it to finish or choose "
                                   "another --run-id") from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            cls._held[key] = (fd, 1)
            cls._manifest_locks.setdefault(key, threading.Lock())
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


def to_arrow(name: str, df: pd.DataFrame, families: dict[str, list[str]] | None = None,
             run_id: str | None = None) -> pa.Table:
    """Cast ``df`` to the registered schema of table ``name`` (column order from the
    schema; missing or extra columns raise). ``run_id`` fills the leading ``run_id``
    column (replacing any the frame carries, e.g. when copied from another run). The
    result carries the schema's field descriptions and file metadata."""
    spec = TABLES.get(name)
    schema = spec.schema(families)
    if run_id is not None:
        df = df.assign(**{RUN_ID.name: run_id})
    missing = [f.name for f in schema if f.name not in df.columns]
    extra = [c for c in df.columns if c not in schema.names]
    if missing or extra:
        raise HarnessError(f"table {name}: missing columns {missing}, unexpected columns {extra}")
    table = pa.Table.from_pandas(df[schema.names], schema=schema, preserve_index=False)
    # from_pandas adds its own b"pandas" key; keep it and ours
    return table.replace_schema_metadata({**(table.schema.metadata or {}),
                                          **spec.file_metadata()})


class RunWriter:
    """Writes tables and the manifest of one run directory (holding its lock until
    :meth:`close` or until the writer is garbage-collected)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HarnessError(f"{self.path}: cannot create the run folder "
                               f"({exc.strerror or exc})") from None
        self._key = _RunLock.acquire(self.path)
        self._release = weakref.finalize(self, _RunLock.release, self._key)

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

    def has_table(self, name: str) -> bool:
        return (self.path / f"{name}.parquet").exists()

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
        spec = TABLES.get(name)
        schema = spec.schema(families)
        meta = dict(table.schema.metadata or {})  # e.g. pandas' own key, kept beside ours
        if RUN_ID.name in table.column_names:
            table = table.drop_columns([RUN_ID.name])
        table = table.append_column(RUN_ID.name, pa.repeat(pa.scalar(self.table_run_id(), pa.string()), table.num_rows))
        table = table.select(schema.names).cast(schema)
        table = table.replace_schema_metadata({**meta, **spec.file_metadata()})
        out = self.path / f"{name}.parquet"
        atomic_write(out, lambda tmp: pq.write_table(table, tmp))
        self.update_manifest({"tables": {name: {"sha256": file_sha256(out), "rows": table.num_rows}}})
        return out

    def read_manifest(self) -> dict[str, Any]:
        p = self.path / MANIFEST
        if not p.exists():
            return {}
        try:
            return dict(json.loads(p.read_text(encoding="utf-8")))
        except (json.JSONDecodeError, UnicodeDecodeError, TypeError, ValueError) as exc:
            raise ProvenanceError(f"{p}: manifest is not valid JSON ({exc})") from None

    def update_manifest(self, patch: dict[str, Any]) -> dict[str, Any]:
        """Deep-merge ``patch`` into the manifest and write it atomically (under the
        run lock, so no concurrent update is lost)."""
        with _RunLock.manifest_lock(self._key):
            m = _merge(self.read_manifest(), patch)
            _atomic_write_bytes(self.path / MANIFEST,
                                json.dumps(m, indent=2, sort_keys=True,
                                           ensure_ascii=False).encode())
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
        mp = self.path / MANIFEST
        if not mp.exists():
            raise HarnessError(f"{self.path}: not a run directory (no {MANIFEST})")
        try:
            self.manifest: dict[str, Any] = json.loads(mp.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ProvenanceError(f"{mp}: manifest is not valid JSON ({exc})") from exc
        if verify:
            self.verify()

    @property
    def run_id(self) -> str:
        return str(self.manifest.get("run_id", self.path.name))

    def verify(self) -> None:
        """Check every table's hash against the manifest; report all mismatches."""
        bad = []
        for name, info in self.manifest.get("tables", {}).items():
            p = self.path / f"{name}.parquet"
            if not p.exists():
                bad.append(f"{name}.parquet is missing")
            elif file_sha256(p) != info.get("sha256"):
                bad.append(f"{name}.parquet does not match the hash in the manifest")
        if bad:
            raise ProvenanceError(f"{self.path}: " + "; ".join(bad))

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
            raise HarnessError(f"run {self.run_id} has no table {name!r} (has: {', '.join(self.tables())})")
        return pq.read_table(self.path / f"{name}.parquet", columns=columns)

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r})"


def _manifests(runs_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    """(run directory, manifest) under ``runs_dir``, oldest first by the manifest's
    ``created`` time, then name; an unreadable manifest counts as empty."""
    runs_dir = Path(runs_dir)
    if not runs_dir.exists():
        return []
    found = []
    for p in runs_dir.iterdir():
        mp = p / MANIFEST
        if p.is_dir() and mp.exists():
            try:
                m = json.loads(mp.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError, OSError):
                m = {}
            m = m if isinstance(m, dict) else {}
            found.append((str(m.get("created", "")), p.name, p, m))
    return [(p, m) for _, _, p, m in sorted(found, key=lambda t: (t[0], t[1]))]


def list_runs(runs_dir: Path) -> list[Path]:
    """Run directories under ``runs_dir`` (those with a manifest), oldest first."""
    return [p for p, _ in _manifests(runs_dir)]


def run_kind(manifest: dict[str, Any]) -> str:
    """The kind of run a manifest describes: ``retrieval`` (``harness run``; also
    manifests older than the ``kind`` field) or ``rulings`` (``harness rulings import``)."""
    return str(manifest.get("kind") or "retrieval")


def open_run(ref: str | Path, runs_dir: Path = Path("runs"), *, verify: bool = True,
             kind: str | None = "retrieval") -> Run:
    """Open a run by path, by id under ``runs_dir``, or ``latest``.

    ``latest`` is the newest complete run *of the kind the caller reads*
    (``kind``; ``None`` for any kind): a ``rulings import`` never becomes the
    ``latest`` that ``bands`` or ``report`` open. A path or an id opens that run
    whatever its kind."""
    if str(ref) == "latest":
        runs = [p for p, m in _manifests(runs_dir) if m.get("status") == "complete"
                and (kind is None or run_kind(m) == kind)]
        if not runs:
            what = f"complete {kind} run" if kind else "complete run"
            raise HarnessError(f"no {what} under {runs_dir}")
        return Run(runs[-1], verify=verify)
    p = Path(ref)
    if not (p / MANIFEST).exists() and (Path(runs_dir) / str(ref) / MANIFEST).exists():
        p = Path(runs_dir) / str(ref)
    return Run(p, verify=verify)
