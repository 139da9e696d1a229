"""Frames and Arrow tables cast to a table's registered schema (column order, types,
field descriptions and file metadata from :mod:`rulegauge.store.schema`); a value that does not
cast is an error naming the table, its package, the column and the row
(:mod:`rulegauge.store.table_contract`)."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from rulegauge.core.errors import RulegaugeError
from rulegauge.store.schema import RUN_ID
from rulegauge.store.schema import spec as table_spec
from rulegauge.store.table_contract import CAST_ERRORS, cast_error, head


def to_arrow(name: str, df: pd.DataFrame, families: dict[str, list[str]] | None = None,
             run_id: str | None = None) -> pa.Table:
    """Cast ``df`` to the registered schema of table ``name`` (column order from the
    schema; missing or extra columns raise). ``run_id`` fills the leading ``run_id``
    column (replacing any the frame carries, e.g. when copied from another run). The
    result carries the schema's field descriptions and file metadata."""
    spec = table_spec(name)
    schema = spec.schema(families)
    if run_id is not None:
        df = df.assign(**{RUN_ID.name: run_id})
    missing = [f.name for f in schema if f.name not in df.columns]
    extra = [c for c in df.columns if c not in schema.names]
    if missing or extra:
        raise RulegaugeError(f"{head(name)}: missing columns {missing}, unexpected columns {extra}")
    try:
        table = pa.Table.from_pandas(df[schema.names], schema=schema, preserve_index=False)
    except CAST_ERRORS as exc:
        raise cast_error(name, df, schema, spec.key, exc) from None
    # from_pandas adds its own b"pandas" key; keep it and ours
    return table.replace_schema_metadata({**(table.schema.metadata or {}),
                                          **spec.file_metadata()})


def cast_table(name: str, table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table``'s columns of ``schema``, cast to it (Arrow's safe cast); a missing column or a
    value that does not cast raises naming the table, column and row."""
    try:
        return table.select(schema.names).cast(schema)
    except (KeyError, *CAST_ERRORS) as exc:
        raise cast_error(name, table, schema, table_spec(name).key, exc) from None


def _pandas_dtype(f: pa.Field) -> str:
    if pa.types.is_string(f.type):
        return "str"
    if pa.types.is_integer(f.type):
        return str(f.type).capitalize() if f.nullable else str(f.type)  # int32 / Int32 (nullable)
    if pa.types.is_floating(f.type) or pa.types.is_boolean(f.type):
        return str(f.type.to_pandas_dtype().__name__)
    raise RulegaugeError(f"no pandas dtype for column {f.name} ({f.type})")


def pandas_metadata(name: str, families: dict[str, list[str]] | None = None) -> dict[bytes, bytes]:
    """The ``pandas`` schema metadata of table ``name`` as :func:`to_arrow` writes it from a
    frame (nullable integer columns as pandas ``Int32``), for tables built in Arrow: their
    readers' ``to_pandas()`` then give the same dtypes as for a table written from pandas."""
    schema = table_spec(name).schema(families)
    empty = pd.DataFrame({f.name: pd.Series([], dtype=_pandas_dtype(f)) for f in schema})
    meta = pa.Table.from_pandas(empty, schema=schema, preserve_index=False).schema.metadata or {}
    return {b"pandas": meta[b"pandas"]}
