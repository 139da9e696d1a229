"""Rows of a table for plain Python loops, typed as what they are: dynamic.

pandas-stubs types every cell of ``DataFrame.itertuples`` as the union of all
pandas scalars; our tables have declared column types (``harness.store.schema``),
checked when a table is read or written, so a row's fields are known at run time
but not to the type checker. :func:`rows` says so once, instead of a cast per
field. Use it only on tables read through the store or built from our records.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd


def rows(df: pd.DataFrame, *, index: bool = False) -> Iterator[Any]:
    """``df.itertuples(index=index)`` as dynamically typed named tuples."""
    yield from df.itertuples(index=index)


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """``df.to_dict("records")`` with string column names (ours always are)."""
    return [{str(k): v for k, v in r.items()} for r in df.to_dict("records")]
