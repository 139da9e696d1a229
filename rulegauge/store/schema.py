"""Table declarations: :class:`Column`, :class:`TableSpec` and the :data:`TABLES` registry.

Each table is declared with :func:`table` by the package that writes it: the kernel's in
:mod:`rulegauge.store.tables`, a product's in its own module (``rulegauge.answering.tables``,
``rulegauge.rulings.tables``), registered through the plug-in group ``rulegauge.tables``.
:func:`spec` loads that group the first time it is asked a name it does not know, and
:func:`load_tables` (every listing: baselines, ``--from``, ``docs/schemas.md``) loads it
always, so every table is known whichever command runs first, and a run of the kernel's
tables alone never imports a product.

Self-explaining files: every table's Arrow schema starts with a ``run_id`` column
(:data:`RUN_ID`, filled by the writer) and carries its documentation as Parquet
metadata: each field's ``description`` is its :class:`Column` doc, and the schema
(file) metadata holds ``rulegauge.table``, ``rulegauge.table_doc``,
``rulegauge.schema_version`` (:data:`SCHEMA_VERSION`) and ``rulegauge.key``, so
``pyarrow.parquet.read_schema(path)`` explains a file with no rulegauge installed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from rulegauge.core.registry import Registry, kind_check


@dataclass(frozen=True)
class Column:
    """A declared column; ``statistics``: Parquet keeps its min/max per row group (off
    where every row group holds the same range, e.g. every question id or the one run id:
    nothing to skip by, and the strings' min/max cost a quarter of the metrics table's
    write); ``backfill``: see the field."""

    name: str
    type: pa.DataType
    doc: str
    nullable: bool = False
    statistics: bool = True
    backfill: bool | None = None
    """A column added after runs were first written: the value every row of a file without
    it holds (a run written before it; checked and read so, :mod:`rulegauge.store.manifest`);
    None: every file of the table has the column."""


SCHEMA_VERSION = "2"
"""Bumped when a table's columns change meaning (2: ``run_id`` and descriptions)."""


@dataclass(frozen=True)
class Kept:
    """How a table is kept in a compact baseline (:mod:`rulegauge.store.baseline`): its rows
    sorted by ``sort`` (stable files: the same run saves the same bytes), only the rows
    whose ``only`` column is true (None: every row), or whose ``top`` column (a rank) is
    at most the baseline's depth, ``blank`` columns emptied."""

    sort: tuple[str, ...]
    only: str | None = None
    blank: tuple[str, ...] = ()
    top: str | None = None


REQUIRED, IF_PRESENT = "required", "if present"
"""Values of :attr:`TableSpec.carried`: a run ``--from`` another copies the table (and
refuses a source without it), or copies it when the source has it (older runs lack it)."""


@dataclass(frozen=True)
class TableSpec:
    """A table: its columns and key, and what other stages do with it: ``kept`` in
    baselines (None: not kept), ``carried`` by ``rulegauge run --from`` (None: not carried,
    else :data:`REQUIRED` or :data:`IF_PRESENT`), ``record``: the typed record it reads
    back into (:mod:`rulegauge.store.readback`; "" when it is read as a frame only)."""

    name: str
    doc: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    kept: Kept | None = None
    carried: str | None = None
    record: str = ""

    def schema(self, families: dict[str, list[str]] | None = None) -> pa.Schema:
        """Arrow schema; ``families`` expands ``prefix*`` columns, e.g.
        ``{"rank_*": ["bm25", "dense"]}`` -> ``rank_bm25, rank_dense``."""
        fields: list[pa.Field] = [_field(RUN_ID.name, RUN_ID.type, RUN_ID.doc, nullable=False)]
        for c in self.columns:
            if c.name.endswith("*"):
                for member in (families or {}).get(c.name, []):
                    fields.append(_field(c.name[:-1] + member, c.type,
                                         f"{c.doc} [{c.name[:-1]}{member}]", nullable=True))
            else:
                fields.append(_field(c.name, c.type, c.doc, nullable=c.nullable))
        return pa.schema(fields, metadata=self.file_metadata())

    def statistics(self, families: dict[str, list[str]] | None = None) -> list[str]:
        """The columns whose Parquet statistics are written (``write_statistics``)."""
        off = {RUN_ID.name} if not RUN_ID.statistics else set()
        off |= {c.name for c in self.columns if not c.statistics}
        return [n for n in self.schema(families).names if n not in off]

    def file_metadata(self) -> dict[bytes, bytes]:
        """Schema-level Parquet metadata: table name and doc, schema version, key."""
        return {b"rulegauge.table": self.name.encode(), b"rulegauge.table_doc": self.doc.encode(),
                b"rulegauge.schema_version": SCHEMA_VERSION.encode(),
                b"rulegauge.key": ",".join(self.key).encode()}


def _field(name: str, type_: pa.DataType, doc: str, *, nullable: bool) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={b"description": doc.encode()})


TABLES: Registry[TableSpec] = Registry("table", accepts=kind_check("a TableSpec", base=TableSpec))


def table(name: str, doc: str, key: tuple[str, ...], *columns: Column, kept: Kept | None = None,
          carried: str | None = None, record: str = "") -> TableSpec:
    """Declare and register a table (facts: :class:`TableSpec`)."""
    if carried not in (None, REQUIRED, IF_PRESENT):
        raise ValueError(f"table {name}: carried must be None, {REQUIRED!r} or {IF_PRESENT!r}")
    return TABLES.add(name, TableSpec(name, doc, tuple(columns), key, kept, carried, record))


def backfilled(name: str, df: Any) -> Any:
    """``df`` (rows of table ``name``) with each backfilled column it lacks added, holding its
    :attr:`Column.backfill` value: a table of a run written before the column existed, as a
    writer of this version writes it (a baseline saved from an older run)."""
    spec = TABLES.get(name)
    missing = {c.name: c.backfill for c in spec.columns if c.backfill is not None and c.name not in df.columns}
    return df.assign(**missing) if missing else df


def load_tables() -> None:
    """Register every table: the kernel's (registered with the package ``rulegauge.store``)
    and the ``rulegauge.tables`` group's (idempotent)."""
    from rulegauge.core import plugins

    plugins.load("rulegauge.tables")


def known_table(name: str) -> bool:
    """Whether ``name`` is a declared table: the kernel's, else the table group is loaded."""
    if name not in TABLES:
        load_tables()
    return name in TABLES


def spec(name: str) -> TableSpec:
    """The declaration of table ``name`` (:func:`known_table`; an unknown name raises
    :class:`~rulegauge.core.errors.RegistryError` listing the tables)."""
    known_table(name)
    return TABLES.get(name)


def kept_tables(names: Iterable[str] | None = None) -> dict[str, Kept]:
    """Table name -> how a baseline keeps it, in registration order; of ``names`` only when
    given (a run's tables: a product's table module is then imported only if the run has one)."""
    if names is None:
        load_tables()
    wanted = None if names is None else {n for n in names if known_table(n)}
    return {n: s.kept for n, s in TABLES.items() if s.kept is not None and (wanted is None or n in wanted)}


def carried_tables() -> dict[str, str]:
    """Table name -> :data:`REQUIRED` or :data:`IF_PRESENT` for ``rulegauge run --from``. A
    plug-in's table is carried :data:`IF_PRESENT` whatever it declares: runs made before the
    plug-in was installed lack it, and installing a plug-in never makes them unreadable (where
    its table is needed, :func:`missing_note` names the plug-in)."""
    load_tables()
    return {n: s.carried if s.carried == IF_PRESENT or plugin_origin(n) is None else IF_PRESENT
            for n, s in TABLES.items() if s.carried is not None}


def plugin_origin(name: str) -> str | None:
    """The ``package==version`` of the plug-in that declared table ``name``; None for rulegauge's own."""
    from rulegauge.core import plugins

    origin = plugins.origin("rulegauge.tables", name)
    return None if origin == plugins.BUILTIN else origin


def missing_note(name: str) -> str:
    """What a run lacking table ``name`` is told beyond that: for a plug-in's table, which plug-in
    and package declared it (the run was made without it); "" for rulegauge's own."""
    origin = plugin_origin(name) if known_table(name) else None
    return (f"; table {name!r} is declared by a plug-in (rulegauge.tables, from {origin}), and this run was "
            "made without it" if origin else "")


S, I32, F64, B = pa.string(), pa.int32(), pa.float64(), pa.bool_()

RUN_ID = Column("run_id", S, "id of the run that wrote the row (its directory name when written)",
                statistics=False)
"""The leading column of every table; not part of ``TableSpec.columns`` so that
readers of runs written before it existed still find every declared column."""
