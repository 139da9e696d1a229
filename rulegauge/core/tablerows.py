"""Rows of a table for plain Python loops, typed as what they are: dynamic.

pandas-stubs types every cell of ``DataFrame.itertuples`` as the union of all
pandas scalars; our tables have declared column types (``rulegauge.store.schema``),
checked when a table is read or written, so a row's fields are known at run time
but not to the type checker. :func:`rows` says so once, instead of a cast per
field. Use it only on tables read through the store or built from our records.

:func:`remember_codes` / :func:`known_codes`: the integer codes of an Arrow table's string
column, recorded by the code that built the table (which had them) for the readers that
would otherwise scan millions of strings to find them again (the run summary). Kept only
as long as the table lives (a weak reference); Arrow tables are immutable.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa


def rows(df: pd.DataFrame, *, index: bool = False) -> Iterator[Any]:
    """``df.itertuples(index=index)`` as dynamically typed named tuples."""
    yield from df.itertuples(index=index)


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """``df.to_dict("records")`` with string column names (ours always are)."""
    return [{str(k): v for k, v in r.items()} for r in df.to_dict("records")]


_CODES: dict[tuple[int, str], tuple[weakref.ref[pa.Table], np.ndarray, np.ndarray, tuple[str, ...]]] = {}


def remember_codes(table: pa.Table, column: str, starts: np.ndarray, codes: np.ndarray,
                   values: tuple[str, ...]) -> None:
    """Record that ``table[column]`` is ``values[codes[r]]`` on the rows of run ``r``, from
    ``starts[r]`` to the next run's start (``starts[0] == 0``; runs, not rows: a run's
    table repeats each value over thousands of rows), ``values`` distinct and in order of
    first appearance in the column (what a scan of the column would give)."""
    key = (id(table), column)

    def forget(_: weakref.ref[pa.Table]) -> None:
        _CODES.pop(key, None)

    _CODES[key] = (weakref.ref(table, forget), np.asarray(starts, np.int64), np.asarray(codes, np.int64), values)


def known_runs(table: pa.Table, column: str) -> tuple[np.ndarray, np.ndarray, list[str]] | None:
    """(run starts, run codes, values) recorded for ``table[column]`` by :func:`remember_codes`, or None."""
    hit = _CODES.get((id(table), column))
    if hit is None or hit[0]() is not table:
        return None
    return hit[1], hit[2], list(hit[3])


def known_codes(table: pa.Table, column: str) -> tuple[np.ndarray, list[str]] | None:
    """(int64 code of each row, values) recorded for ``table[column]`` by :func:`remember_codes`, or None."""
    runs = known_runs(table, column)
    if runs is None:
        return None
    starts, codes, values = runs
    return np.repeat(codes, np.diff(np.r_[starts, table.num_rows])), values
