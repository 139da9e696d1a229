"""The table contract: values cast to the declared schema, declared keys unique.

Every table a run holds, rulegauge's own or a plug-in's (group ``rulegauge.tables``), is written
through :class:`rulegauge.store.rundir.RunWriter`, which keeps its declaration
(:class:`~rulegauge.store.schema.TableSpec`):

* **types**: each value casts to its column's declared type without loss (Arrow's safe cast: no
  truncated float, no out-of-range integer, no text where a number belongs), and a column not
  declared nullable holds no null. A value that does not is :class:`TableContractError` (exit 2)
  naming the table, its package, the column and the first such row, with the row's key
  (:func:`cast_error`), never Arrow's own traceback; nothing is written.
* **keys**: no two rows share the declared key (``TableSpec.key``), checked over the whole table
  before its file appears (:class:`KeyCheck`: each key column's values coded through one
  dictionary per column, then the combined codes counted, or sorted where their range is much
  wider than the rows), and again when a run is opened
  (:func:`file_key_problem`, from :meth:`rulegauge.store.rundir.Run.verify`), so a table written
  by other means (an older version, a plug-in writing files itself) is refused as well: exit 2
  naming the row that repeats the key and the row it repeats.

The key check holds each key column as 32-bit codes (12 bytes a row for a three-column key): about
0.3 s for the three million rows of a 5,000-config metrics table, 0.1 s to re-read and check every
table of a 200-config run when it is opened (AMD EPYC, 2 cores).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rulegauge.core.component import component
from rulegauge.core.errors import ProvenanceError, RulegaugeError
from rulegauge.store.schema import known_table, spec

CAST_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, ValueError, TypeError,
                OverflowError)
"""What Arrow raises when a value does not cast (its ``ArrowInvalid`` is a ``ValueError``)."""


class TableContractError(RulegaugeError):
    """A table's values break its declaration (module docstring); names table, package, column, row."""


def head(name: str) -> str:
    """``table 'NAME' (rulegauge.tables, from PACKAGE) broke the table contract (docs/plugins.md)``"""
    return f"{component('table', 'rulegauge.tables', name)} broke the table contract (docs/plugins.md)"


def _shown(value: Any) -> str:
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and value != value):
        return "missing"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _first_failing(n: int, fails: Callable[[int], bool]) -> int:
    """The smallest ``i`` whose prefix ``[0, i + 1)`` fails, given that ``[0, n)`` fails (a
    value that does not cast fails every prefix holding it: a binary search over prefixes)."""
    lo, hi = 0, n  # fails(hi) holds; find the smallest such prefix length
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fails(mid):
            hi = mid
        else:
            lo = mid
    return hi - 1


def _fails(convert: Callable[[], object]) -> bool:
    try:
        convert()
    except CAST_ERRORS:
        return True
    return False


def _row_key(source: pd.DataFrame | pa.Table, key: Sequence[str], i: int) -> str:
    """``(question_id='q1', metric='hit@5')``: the key of row ``i`` (the key columns it has)."""
    cols = [k for k in key if k in (source.columns if isinstance(source, pd.DataFrame) else source.column_names)]
    if not cols:
        return ""
    if isinstance(source, pd.DataFrame):
        values = [source[k].iloc[i] for k in cols]
    else:
        values = [source.column(k)[i].as_py() for k in cols]
    return " (" + ", ".join(f"{k}={_shown(v)}" for k, v in zip(cols, values, strict=True)) + ")"


def _column_problem(source: pd.DataFrame | pa.Table, field: pa.Field) -> tuple[int, str] | None:
    """(row, why) of the first value of ``field``'s column that does not cast, or None."""
    if isinstance(source, pd.DataFrame):
        col: Any = source[field.name]
        n = len(col)

        def convert(stop: int) -> object:
            return pa.array(col.iloc[:stop], type=field.type, from_pandas=True)

        def value(i: int) -> Any:
            return col.iloc[i]

        nulls = col.isna().to_numpy() if not pa.types.is_list(field.type) else col.map(
            lambda v: v is None).to_numpy(dtype=bool)
    else:
        arr = source.column(field.name)
        n = len(arr)

        def convert(stop: int) -> object:
            return arr.slice(0, stop).cast(field.type)

        def value(i: int) -> Any:
            return arr[i].as_py()

        nulls = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else np.zeros(n, bool)
    if _fails(lambda: convert(n)):
        i = _first_failing(n, lambda stop: _fails(lambda: convert(stop)))
        try:
            convert(i + 1)
        except CAST_ERRORS as exc:
            cause = str(exc.args[0] if exc.args else exc)
        return i, f"{_shown(value(i))} does not cast to the declared {field.type} ({cause})"
    if not field.nullable and nulls.any():
        i = int(np.flatnonzero(nulls)[0])
        return i, f"the value is missing, and the declared {field.type} column is not nullable"
    return None


def cast_error(name: str, source: pd.DataFrame | pa.Table, schema: pa.Schema, key: Sequence[str],
               exc: BaseException | None = None) -> TableContractError:
    """The error naming the first column (schema order) and row of ``source`` whose value does not
    cast to ``schema`` (module docstring); called once a cast failed (with what it raised, ``exc``)."""
    have = set(source.columns if isinstance(source, pd.DataFrame) else source.column_names)
    missing = [f.name for f in schema if f.name not in have]
    if missing:
        return TableContractError(f"{head(name)}: missing column(s) {', '.join(missing)}")
    for field in schema:
        found = _column_problem(source, field)
        if found is not None:
            i, why = found
            where = f"column {field.name}, row {i + 1}{_row_key(source, key, i)}"
            return TableContractError(f"{head(name)}: {where}: {why}")
    return TableContractError(f"{head(name)}: the rows do not cast to the declared schema"
                              + (f" ({type(exc).__name__}: {str(exc)[:200]})" if exc is not None else ""))


class KeyCheck:
    """Collects the key columns of a table's parts and says whether a key repeats (module docstring)."""

    def __init__(self, name: str, key: Sequence[str]) -> None:
        self.name = name
        self.key = tuple(key)
        self._codes: list[list[np.ndarray]] = [[] for _ in self.key]
        self._values: list[dict[Any, int]] = [{} for _ in self.key]
        self._last: list[tuple[pa.Array, np.ndarray] | None] = [None for _ in self.key]

    def add(self, part: pa.Table | pa.RecordBatch) -> None:
        """Code the key columns of ``part`` (rows after those added before)."""
        for j, k in enumerate(self.key):
            col = part.column(k)
            for chunk in col.chunks if isinstance(col, pa.ChunkedArray) else [col]:
                self._codes[j].append(self._code(j, chunk))

    def _code(self, j: int, chunk: pa.Array) -> np.ndarray:
        if not pa.types.is_dictionary(chunk.type):
            chunk = pc.dictionary_encode(chunk)
        last = self._last[j]
        if last is not None and (chunk.dictionary is last[0] or chunk.dictionary.equals(last[0])):
            lut = last[1]  # parts sharing one dictionary (a grid's config ids) are coded once
        else:
            seen = self._values[j]
            words = chunk.dictionary.to_pylist()
            lut = np.fromiter((seen.setdefault(w, len(seen)) for w in words), np.int32, len(words))
            lut = np.append(lut, np.int32(seen.setdefault(None, len(seen))))  # the last code: null
            self._last[j] = (chunk.dictionary, lut)
        n = len(lut) - 1
        idx = chunk.indices.fill_null(n) if chunk.null_count else chunk.indices
        codes: np.ndarray = lut[idx.to_numpy(zero_copy_only=False)]
        return codes

    def problem(self) -> str | None:
        """Why the key is not unique (the first row repeating an earlier row's key), or None."""
        cols = [np.concatenate(c) if c else np.zeros(0, np.int32) for c in self._codes]
        if not cols or len(cols[0]) < 2:
            return None
        sizes = [max(len(v), 1) for v in self._values]
        span = float(np.prod([float(s) for s in sizes]))
        if span < 2.0**62:
            combined = np.zeros(len(cols[0]), np.int64)
            for c, size in zip(cols, sizes, strict=True):
                combined = combined * size + c
            if span <= 4 * len(combined) + (1 << 20):  # a dense code range: count, no sort
                if int(np.bincount(combined, minlength=0).max()) < 2:
                    return None
            elif not (np.diff(np.sort(combined)) == 0).any():
                return None
            order = np.argsort(combined, kind="stable")
            ordered = combined[order]
        else:  # too many distinct values for one int64: sort on the columns themselves
            order = np.lexsort(cols[::-1])
            ordered = np.stack([c[order] for c in cols], axis=1)
        same = (ordered[1:] == ordered[:-1]) if ordered.ndim == 1 else (ordered[1:] == ordered[:-1]).all(axis=1)
        if not same.any():
            return None
        later = int(order[1:][same].min())  # the first row (in table order) whose key came before
        pos = int(np.flatnonzero(order == later)[0])
        while pos > 0 and same[pos - 1]:  # back to its group's first row (both sorts are stable)
            pos -= 1
        first = int(order[pos])
        words = [{code: w for w, code in v.items()} for v in self._values]
        shown = ", ".join(f"{k}={_shown(words[j][int(cols[j][later])])}" for j, k in enumerate(self.key))
        return (f"{head(self.name)}: the key ({', '.join(self.key)}) repeats: row {later + 1} ({shown}) "
                f"repeats row {first + 1}; each row of a table has a key of its own")

    def check(self) -> None:
        """Raise :class:`TableContractError` when :meth:`problem` finds a repeated key."""
        problem = self.problem()
        if problem is not None:
            raise TableContractError(problem)


def check_keys(name: str, table: pa.Table, key: Sequence[str]) -> None:
    """Raise when two rows of ``table`` share the ``key`` (module docstring)."""
    keys = KeyCheck(name, key)
    keys.add(table.select(list(key)))
    keys.check()


def file_key_problem(name: str, path: Path, key: Sequence[str]) -> str | None:
    """Why the table file ``path`` repeats a key (read as dictionaries, batch by batch), or None;
    a file without every key column is left to the column check."""
    f = pq.ParquetFile(path, read_dictionary=list(key))
    if not set(key) <= set(f.schema_arrow.names):
        return None
    keys = KeyCheck(name, key)
    for batch in f.iter_batches(columns=list(key)):
        keys.add(batch)
    return keys.problem()


def check_file_keys(folder: Path, names: Sequence[str]) -> None:
    """Raise :class:`~rulegauge.core.errors.ProvenanceError` naming every table of ``names`` in run
    ``folder`` whose file repeats its declared key (a table this version does not know is left
    to what reads it)."""
    bad = [p for n in names if known_table(n)
           for p in [file_key_problem(n, Path(folder) / f"{n}.parquet", spec(n).key)] if p]
    if bad:
        raise ProvenanceError(f"{folder}: " + "; ".join(bad))
