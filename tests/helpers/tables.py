"""Compare two run directories table by table (the logic of ../shared/tools/same_tables.py).

Every Parquet table of run A must exist in run B with the same rows, compared as the
string form of every value (``repr`` of a float: all its bits), rows sorted, ignoring
run ids and times. Timings are measurements, not results: besides the time columns,
rows whose ``metric`` is a timing (``latency_ms`` in ``answer_metrics``) are left out
(same_tables.py skips only columns, so it reports answer_metrics as differing for
every answered run). Returns the differences, empty when the runs agree.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

SKIP = frozenset({"run_id", "created", "created_at", "time", "started", "finished", "latency_ms"})
TIMING_METRICS = frozenset({"latency_ms"})


def _read(path: Path) -> pd.DataFrame:
    df = pd.read_parquet(path)
    if "metric" in df.columns:
        df = df[~df["metric"].isin(TIMING_METRICS)].reset_index(drop=True)
    return df


def table_differences(a: Path, b: Path) -> list[str]:
    diffs = []
    tables_a = sorted(p.name for p in Path(a).glob("*.parquet"))
    tables_b = sorted(p.name for p in Path(b).glob("*.parquet"))
    diffs += [f"{name}: missing in first run" for name in tables_b if name not in tables_a]
    for name in tables_a:
        if name not in tables_b:
            diffs.append(f"{name}: missing in second run")
            continue
        x, y = _read(Path(a) / name), _read(Path(b) / name)
        cols = [c for c in x.columns if c not in SKIP]
        if list(y.columns) != list(x.columns):
            diffs.append(f"{name}: columns differ")
            continue
        x = x[cols].astype(str).sort_values(cols).reset_index(drop=True)
        y = y[cols].astype(str).sort_values(cols).reset_index(drop=True)
        if not x.equals(y):
            diffs.append(f"{name}: contents differ")
        elif not _read(Path(a) / name)[cols].astype(str).equals(_read(Path(b) / name)[cols].astype(str)):
            diffs.append(f"{name}: same rows in a different order")
    return diffs
