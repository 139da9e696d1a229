"""Rows of a table for plain Python loops, typed as what they are: dynamic.

pandas-stubs types every cell of ``DataFrame.itertuples`` as the union of all
pandas scalars; our tables have declared column types (``harness.store.schema``),
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


_CODES: dict[tuple[int, str], tuple[weakref.ref[pa.Table], np.ndarray, tuple[str, ...]]] = {}


def remember_codes(table: pa.Table, column: str, codes: np.ndarray, values: tuple[str, ...]) -> None:
    """Record that ``table[column][i] == values[codes[i]]``, ``values`` distinct and in order
    of first appearance in the column (what a scan of the column would give)."""
    key = (id(table), column)

    def forget(_: weakref.ref[pa.Table]) -> None:
        _CODES.pop(key, None)

    _CODES[key] = (weakref.ref(table, forget), codes, values)


def known_codes(table: pa.Table, column: str) -> tuple[np.ndarray, list[str]] | None:
    """(int64 codes, values) recorded for ``table[column]`` by :func:`remember_codes`, or None."""
    hit = _CODES.get((id(table), column))
    if hit is None or hit[0]() is not table:
        return None
    return np.asarray(hit[1], np.int64), list(hit[2])
