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
and its file exists. Hashes are not verified here (ad-hoc reading; ``harness
bands``/``report`` verify). The connection is in-memory and discarded after each
query. Reference: DuckDB ``read_parquet`` (https://duckdb.org/docs/data/parquet/overview).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from harness.core.errors import HarnessError
from harness.store.rundir import MANIFEST, list_runs

RUNS_VIEW = "runs"
ANSWERABLE_VIEW = "answerable_metrics"
RUNS_COLUMNS = ("run_id", "kind", "goldset", "commit", "model", "created", "status", "path")


def _run_row(path: Path, manifest: dict[str, Any]) -> dict[str, str | None]:
    from harness.store.rundir import run_kind

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


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _ident(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def table_files(runs_dir: Path) -> tuple[pd.DataFrame, dict[str, list[tuple[str, Path]]]]:
    """(the ``runs`` frame, table name -> [(run_id, parquet path)]) under ``runs_dir``."""
    runs, files = [], defaultdict(list)
    for path in list_runs(runs_dir):
        try:
            manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise HarnessError(f"{path / MANIFEST}: not valid JSON ({exc})") from exc
        runs.append(_run_row(path, manifest))
        for name in sorted(manifest.get("tables", {})):
            p = path / f"{name}.parquet"
            if p.exists():
                files[name].append((path.name, p.resolve()))
    return pd.DataFrame(runs, columns=list(RUNS_COLUMNS)), dict(files)


def connect(runs_dir: Path):  # type: ignore[no-untyped-def]
    """An in-memory DuckDB connection with one view per table across runs."""
    import duckdb  # deferred: heavy import

    runs, files = table_files(runs_dir)
    if runs.empty:
        raise HarnessError(f"no runs under {runs_dir} (a run directory holds {MANIFEST})")
    con = duckdb.connect(":memory:")
    con.register("_runs_frame", runs)
    con.execute(f"create view {_ident(RUNS_VIEW)} as select * from _runs_frame")
    for name, entries in sorted(files.items()):
        if name in (RUNS_VIEW, ANSWERABLE_VIEW):
            raise HarnessError(f"table name {name!r} clashes with the {name!r} view")
        paths = "[" + ", ".join(_sql_str(str(p)) for _, p in entries) + "]"
        cases = " ".join(f"when {_sql_str(str(p))} then {_sql_str(r)}" for r, p in entries)
        # runs written before run_id was a column lack it: exclude it only where present
        stored = any("run_id" in pq.read_schema(p).names for _, p in entries)
        exclude = "filename, run_id" if stored else "filename"
        con.execute(
            f"create view {_ident(name)} as select case filename {cases} end as run_id, "
            f"* exclude ({exclude}) from read_parquet({paths}, union_by_name = true, "
            "filename = true)")
    if "metrics" in files:
        con.execute(f"create view {_ident(ANSWERABLE_VIEW)} as "
                    "select * from metrics where answerable")
    return con


def views(runs_dir: Path) -> list[str]:
    """Names of the views :func:`query` offers (``runs`` first, then tables A-Z)."""
    _, files = table_files(runs_dir)
    extra = [ANSWERABLE_VIEW] if "metrics" in files else []
    return [RUNS_VIEW, *sorted([*files, *extra])]


def query(sql: str, runs_dir: Path = Path("runs")) -> pd.DataFrame:
    """Run ``sql`` over every run under ``runs_dir`` and return the result.

    >>> query("select config_id, avg(value) from metrics "
    ...       "where metric = 'recall@5' group by 1")  # doctest: +SKIP
    """
    import duckdb  # deferred: heavy import

    con = connect(runs_dir)
    try:
        df: pd.DataFrame = con.execute(sql).fetchdf()
        return df
    except duckdb.Error as exc:
        raise HarnessError(f"query failed: {exc}\nviews: {', '.join(views(runs_dir))}") from exc
    finally:
        con.close()
