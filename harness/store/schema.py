"""Table declarations: :class:`Column`, :class:`TableSpec` and the :data:`TABLES` registry.

Each stage's tables are declared with :func:`table` in a module of this package
(``tables`` for the retrieval run, ``answer_tables``, ``ruling_tables``);
:mod:`harness.store.tables` imports them all, so every table is registered as soon as
anything in the store is used, whichever command runs first.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from harness.core.registry import Registry


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    doc: str
    nullable: bool = False


@dataclass(frozen=True)
class TableSpec:
    name: str
    doc: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]

    def schema(self, families: dict[str, list[str]] | None = None) -> pa.Schema:
        """Arrow schema; ``families`` expands ``prefix*`` columns, e.g.
        ``{"rank_*": ["bm25", "dense"]}`` -> ``rank_bm25, rank_dense``."""
        fields: list[pa.Field] = []
        for c in self.columns:
            if c.name.endswith("*"):
                for member in (families or {}).get(c.name, []):
                    fields.append(pa.field(c.name[:-1] + member, c.type, nullable=True))
            else:
                fields.append(pa.field(c.name, c.type, nullable=c.nullable))
        return pa.schema(fields)


TABLES: Registry[TableSpec] = Registry("table")


def table(name: str, doc: str, key: tuple[str, ...], *columns: Column) -> TableSpec:
    """Declare and register a table."""
    return TABLES.add(name, TableSpec(name, doc, tuple(columns), key))


S, I32, F64, B = pa.string(), pa.int32(), pa.float64(), pa.bool_()
