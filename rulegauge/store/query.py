"""SQL over every run: DuckDB views across the Parquet tables under ``runs/``.

Each table name found in any run's manifest becomes one view over that table in
every run that has it (``read_parquet([...], union_by_name=true)``, so columns
missing from a run, e.g. an arm's ``rank_<arm>``, read as NULL), with a leading
``run_id`` column taken from the run's directory name (the tables' own ``run_id``
column is replaced by it, so views join on directory names even for baselines,
whose rows carry their source run's id). Two more views:

* ``runs``: one row per run: ``run_id``, ``kind`` (``retrieval``, ``rulings``, or
  ``baseline`` for a saved baseline), ``goldset`` (name), ``commit`` (git),
  ``model`` (the embedding models of the run's arms, comma-joined), ``created``,
  ``status``, ``path``;
* ``answerable_metrics``: ``metrics`` restricted to answerable questions, the rows
  ranking-metric means are taken over (``avg(value)`` on it is the honest mean;
  on ``metrics`` it silently counts unanswerable questions' defaults).

Conventions: only directories with a ``manifest.json`` count (partial runs
included: ``status`` tells them apart); a table counts when the manifest lists it
and its file exists. Hashes are not verified here (ad-hoc reading; ``rulegauge
bands``/``report`` verify), but a file that is not readable Parquet (truncated,
damaged) is skipped and reported in :attr:`Views.skipped`, so one broken run does
not stop queries over the others.

Read-only: the tables referenced by the SQL are read with pyarrow into in-memory
Arrow tables (columns missing from a run read as NULL) and registered as views;
then DuckDB's external access is switched off (``enable_external_access=false``,
no extension auto-install or auto-load) and the configuration locked, so the SQL
can read nothing but the run tables and write no file (``COPY ... TO``,
``read_csv('/etc/passwd')``, ``INSTALL httpfs``, ``ATTACH`` are refused). The
connection is in-memory and discarded after each query.

Bounded: every query runs under a statement timeout (``timeout_s``, default 60 s:
a timer interrupts the connection), a memory limit (``memory_limit``, default
``2GB``, with no spilling to disk: ``max_temp_directory_size = '0B'``, so nothing is
written outside the runs either) on 2 threads, and a row cap (``max_rows``, default
100,000 rows fetched; more are cut off with a warning naming the cap). A query that
runs out of time or memory is a :class:`RulegaugeError` saying which (exit 2).

Reference: DuckDB securing guide (https://duckdb.org/docs/operations_manual/securing_duckdb/overview).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from rulegauge.core.errors import RulegaugeError
from rulegauge.store.rundir import MANIFEST, list_runs

if TYPE_CHECKING:
    import duckdb

RUNS_VIEW = "runs"
ANSWERABLE_VIEW = "answerable_metrics"
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MEMORY_LIMIT = "2GB"
DEFAULT_MAX_ROWS = 100_000
_MEMORY = re.compile(r"^\s*\d+(\.\d+)?\s*(B|KB|MB|GB|KiB|MiB|GiB)\s*$", re.IGNORECASE)
RUNS_COLUMNS = ("run_id", "kind", "goldset", "commit", "model", "created", "status", "path")


def _run_row(path: Path, manifest: dict[str, Any]) -> dict[str, str | None]:
    from rulegauge.store.rundir import run_kind

    arms = manifest.get("arms") or {}
    models = sorted({str(a["model"]) for a in arms.values()
                     if isinstance(a, dict) and a.get("model")})
    return {"run_id": path.name,
            "kind": "baseline" if "baseline" in manifest else run_kind(manifest),
            "goldset": (manifest.get("goldset") or {}).get("name"),
            "commit": (manifest.get("git") or {}).get("commit"),
            "model": ",".join(models) or None,
            "created": str(manifest.get("created", "")),
            "status": str(manifest.get("status", "")), "path": str(path.resolve())}


def _ident(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def table_files(runs_dir: Path) -> tuple[pd.DataFrame, dict[str, list[tuple[str, Path]]]]:
    """(the ``runs`` frame, table name -> [(run_id, parquet path)]) under ``runs_dir``."""
    runs, files = [], defaultdict(list)
    for path in list_runs(runs_dir):
        try:
            manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            logging.getLogger(__name__).warning("%s: not valid JSON, run left out (%s)",
                                                path / MANIFEST, exc)
            continue
        if not isinstance(manifest, dict):
            continue
        runs.append(_run_row(path, manifest))
        for name in sorted(manifest.get("tables", {})):
            p = path / f"{name}.parquet"
            if p.exists():
                files[name].append((path.name, p.resolve()))
    return pd.DataFrame(runs, columns=list(RUNS_COLUMNS)), dict(files)


LOCKDOWN = ("set enable_progress_bar = false",  # results go to stdout, nothing else
            "set autoinstall_known_extensions = false",
            "set autoload_known_extensions = false",
            "set enable_external_access = false",
            "set lock_configuration = true")
"""Run after the views exist: no file, network or extension access from the SQL."""


def _read_table(entries: list[tuple[str, Path]], skipped: list[str]) -> pa.Table | None:
    """One table across runs, ``run_id`` first; unreadable files are skipped."""
    parts = []
    for run_id, path in entries:
        try:
            t = pq.read_table(path)
        except (pa.ArrowException, OSError) as exc:
            skipped.append(f"{path}: not readable Parquet, run {run_id} left out ({exc})")
            continue
        if "run_id" in t.column_names:  # tables written since schema 2 carry it; the folder name wins
            t = t.drop_columns(["run_id"])
        parts.append(t.add_column(0, "run_id", pa.array([run_id] * t.num_rows, pa.string())))
    if not parts:
        return None
    try:
        return pa.concat_tables(parts, promote_options="permissive")
    except pa.ArrowException as exc:
        raise RulegaugeError(f"table {parts[0].schema} cannot be read across runs: {exc}") from None


def connect(runs_dir: Path, sql: str | None = None, skipped: list[str] | None = None,
            memory_limit: str = DEFAULT_MEMORY_LIMIT) -> duckdb.DuckDBPyConnection:
    """An in-memory, read-only DuckDB connection with one view per table across runs.

    With ``sql`` only the tables it names are read (a word match, case-insensitive);
    files that cannot be read are listed in ``skipped``.
    """
    import duckdb

    runs, files = table_files(runs_dir)
    if runs.empty:
        raise RulegaugeError(f"no runs under {runs_dir} (a run directory holds {MANIFEST})")
    skipped = [] if skipped is None else skipped
    if not _MEMORY.match(memory_limit):
        raise RulegaugeError(f"--memory-limit {memory_limit!r}: give a size such as 2GB or 512MB")
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False,
                                             "autoload_known_extensions": False,
                                             "memory_limit": memory_limit, "threads": 2,
                                             "max_temp_directory_size": "0B"})
    con.register("_runs_frame", runs)
    con.execute(f"create view {_ident(RUNS_VIEW)} as select * from _runs_frame")
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql.lower())) if sql is not None else None
    if words is not None and ANSWERABLE_VIEW in words:
        words.add("metrics")  # the view reads the metrics table
    loaded: set[str] = set()
    for name, entries in sorted(files.items()):
        if name in (RUNS_VIEW, ANSWERABLE_VIEW):
            raise RulegaugeError(f"table name {name!r} clashes with the {name!r} view")
        if words is not None and name.lower() not in words:
            continue
        table = _read_table(entries, skipped)
        if table is None:
            continue
        con.register(f"_arrow_{name}", table)
        con.execute(f"create view {_ident(name)} as select * from {_ident('_arrow_' + name)}")
        loaded.add(name)
    if "metrics" in loaded:
        con.execute(f"create view {_ident(ANSWERABLE_VIEW)} as select * from metrics where answerable")
    for statement in LOCKDOWN:
        con.execute(statement)
    return con


def views(runs_dir: Path) -> list[str]:
    """Names of the views :func:`query` offers (``runs`` first, then tables A-Z)."""
    _, files = table_files(runs_dir)
    extra = [ANSWERABLE_VIEW] if "metrics" in files else []
    return [RUNS_VIEW, *sorted([*files, *extra])]


def query(sql: str, runs_dir: Path = Path("runs"), *, timeout_s: float = DEFAULT_TIMEOUT_S,
          memory_limit: str = DEFAULT_MEMORY_LIMIT, max_rows: int = DEFAULT_MAX_ROWS) -> pd.DataFrame:
    """Run ``sql`` over every run under ``runs_dir`` and return the result (at most
    ``max_rows`` rows, within ``timeout_s`` and ``memory_limit``: module docstring).

    >>> query("select config_id, avg(value) from metrics "
    ...       "where metric = 'recall@5' group by 1")  # doctest: +SKIP
    """
    import duckdb  # deferred: heavy import

    if not 0 < timeout_s <= 86_400:
        raise RulegaugeError(f"--timeout must be within (0, 86400] seconds, got {timeout_s:g}")
    if not 1 <= max_rows <= 10_000_000:
        raise RulegaugeError(f"--max-rows must be between 1 and 10,000,000, got {max_rows:,}")
    skipped: list[str] = []
    con = connect(runs_dir, sql, skipped, memory_limit)
    for line in skipped:
        logging.getLogger(__name__).warning("%s", line)
    timer = threading.Timer(timeout_s, con.interrupt)
    timer.daemon = True
    timer.start()
    try:
        rel = con.sql(sql)  # a statement that returns no rows gives None
        if rel is None:
            return pd.DataFrame()
        reader = rel.to_arrow_reader(min(max_rows + 1, 65_536))
        batches, n = [], 0
        for batch in reader:
            batches.append(batch)
            n += batch.num_rows
            if n > max_rows:
                break
        table = pa.Table.from_batches(batches, schema=reader.schema).slice(0, max_rows)
        if n > max_rows:
            logging.getLogger(__name__).warning(
                "more than %s rows: showing the first %s (add LIMIT, or raise --max-rows)",
                f"{max_rows:,}", f"{max_rows:,}")
        df: pd.DataFrame = table.to_pandas()
        return df
    except duckdb.Error as exc:
        if timer.finished.is_set() or isinstance(exc, duckdb.InterruptException):
            raise RulegaugeError(f"query stopped: it ran longer than {timeout_s:g} s "
                               "(raise --timeout, or narrow the query)") from None
        if isinstance(exc, duckdb.OutOfMemoryException):
            raise RulegaugeError(f"query stopped: it needs more than {memory_limit} of memory "
                               "(raise --memory-limit, or narrow the query)") from None
        raise RulegaugeError(f"query failed: {exc}\nviews: {', '.join(views(runs_dir))} "
                           "(read-only: files, extensions and the network are off)") from None
    finally:
        timer.cancel()
        con.close()
