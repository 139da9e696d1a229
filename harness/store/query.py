"""SQL over every run: DuckDB views across the Parquet tables under ``runs/``.

Each table name found in any run's manifest becomes one view over that table in
every run that has it (``read_parquet([...], union_by_name=true)``, so columns
missing from a run, e.g. an arm's ``rank_<arm>``, read as NULL), with a leading
``run_id`` column taken from the run's directory name. A ``runs`` view lists the
runs themselves (run_id, created, status, path).

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

import pandas as pd

from harness.core.errors import HarnessError
from harness.store.rundir import MANIFEST, list_runs

RUNS_VIEW = "runs"


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
        runs.append({"run_id": path.name, "created": str(manifest.get("created", "")),
                     "status": str(manifest.get("status", "")), "path": str(path.resolve())})
        for name in sorted(manifest.get("tables", {})):
            p = path / f"{name}.parquet"
            if p.exists():
                files[name].append((path.name, p.resolve()))
    return pd.DataFrame(runs, columns=["run_id", "created", "status", "path"]), dict(files)


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
        if name == RUNS_VIEW:
            raise HarnessError(f"table name {name!r} clashes with the {RUNS_VIEW!r} view")
        paths = "[" + ", ".join(_sql_str(str(p)) for _, p in entries) + "]"
        cases = " ".join(f"when {_sql_str(str(p))} then {_sql_str(r)}" for r, p in entries)
        con.execute(
            f"create view {_ident(name)} as select case filename {cases} end as run_id, "
            f"* exclude (filename) from read_parquet({paths}, union_by_name = true, "
            "filename = true)")
    return con


def views(runs_dir: Path) -> list[str]:
    """Names of the views :func:`query` offers (``runs`` first, then tables A-Z)."""
    _, files = table_files(runs_dir)
    return [RUNS_VIEW, *sorted(files)]


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
