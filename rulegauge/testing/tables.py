"""The table conformance suite: every registered table's declaration holds together.

:func:`check_table` reports, for one :class:`~rulegauge.store.schema.TableSpec`: a key or a
baseline fact (``kept``: sort, only, blank) naming a column the table does not declare; a
``kept.only`` column that is not boolean; a ``carried`` value other than ``required`` /
``if present``; a ``record`` that does not name an importable class (``module.Class``,
optionally followed by a note in parentheses); a column without a doc; and a schema that
Arrow cannot build. :func:`check_rows` runs, on rows a team's code would write, the checks every
write makes (:mod:`rulegauge.store.table_contract`): each value casts to its declared column type
and no two rows share the declared key. :func:`schema_doc_problems` says whether docs/schemas.md
is what ``python -m rulegauge.store`` prints now (when rulegauge runs from its source tree).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pandas as pd
import pyarrow as pa

from rulegauge.core.errors import RulegaugeError
from rulegauge.store.casting import to_arrow
from rulegauge.store.schema import IF_PRESENT, REQUIRED, TableSpec
from rulegauge.store.table_contract import check_keys
from rulegauge.store.tables import TABLES, markdown


def _record_problem(record: str) -> str | None:
    path = record.split(" (")[0].strip()
    module, _, cls = path.rpartition(".")
    try:
        getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError, ValueError):
        return f"record {record!r} does not name an importable class"
    return None


def check_table(name: str | TableSpec) -> tuple[str, ...]:
    """Every problem of the module docstring for one table; () when it conforms."""
    spec = TABLES.get(name) if isinstance(name, str) else name
    cols = {c.name: c for c in spec.columns}
    out = [f"key column {k!r} is not declared" for k in spec.key if k not in cols]
    out += [f"column {c.name!r} has no doc" for c in spec.columns if not c.doc.strip()]
    if spec.kept is not None:
        named = (*spec.kept.sort, *spec.kept.blank, *((spec.kept.only,) if spec.kept.only else ()))
        out += [f"kept (baselines) names column {c!r}, which is not declared" for c in named if c not in cols]
        only = cols.get(spec.kept.only or "")
        if only is not None and not pa.types.is_boolean(only.type):
            out.append(f"kept.only column {only.name!r} is {only.type}, not bool")
    if spec.carried not in (None, REQUIRED, IF_PRESENT):
        out.append(f"carried is {spec.carried!r}; one of None, {REQUIRED!r}, {IF_PRESENT!r}")
    if spec.record:
        why = _record_problem(spec.record)
        out += [why] if why else []
    try:
        spec.schema()
    except Exception as exc:  # a declaration Arrow refuses is the problem reported
        out.append(f"schema: {type(exc).__name__}: {exc}")
    return tuple(f"table {spec.name}: {p}" for p in out)


def check_rows(name: str, rows: pd.DataFrame, families: dict[str, list[str]] | None = None) -> tuple[str, ...]:
    """The problems a run would refuse writing ``rows`` as table ``name`` (a ``run_id`` column is
    added): a value that does not cast to its declared type, a repeated key; () when none."""
    try:
        check_keys(name, to_arrow(name, rows, families, run_id="conformance"), TABLES.get(name).key)
    except RulegaugeError as exc:
        return (str(exc),)
    return ()


def schema_doc_problems() -> tuple[tuple[str, ...], str | None]:
    """(problems, skipped): docs/schemas.md against ``python -m rulegauge.store``'s output."""
    import rulegauge

    doc = Path(rulegauge.__file__).resolve().parent.parent / "docs" / "schemas.md"
    if not doc.is_file():
        return (), "docs/schemas.md is not here (not a source tree)"
    if doc.read_text(encoding="utf-8") != markdown() + "\n":
        return ("docs/schemas.md is not current: python -m rulegauge.store > docs/schemas.md",), None
    return (), None
