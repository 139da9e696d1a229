"""A run's ``manifest.json``: read without following links, its shape checked, and
its tables checked against their declared schemas.

Shape (checked whenever a manifest is read, by a writer or a reader): a JSON
object; ``tables``, when present, maps table names to ``{"sha256": <64 hex>,
"rows": <int >= 0>}``; ``status`` and ``run_id`` are text. A manifest of another
shape (``"tables": []``, a name mapped to a string) is a
:class:`~rulegauge.core.errors.ProvenanceError` naming the file and the key, so no
command goes on to crash on it. :func:`check_columns` compares a table file's
columns with its :class:`~rulegauge.store.schema.TableSpec` (``prefix*`` families
may hold any members): a file with a valid hash but missing columns is refused
when the run is opened, not in the middle of a report.

A manifest larger than :data:`MAX_MANIFEST_BYTES` (64 MiB) is refused unread.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from rulegauge.core.atomic import check_no_links, read_bytes_nofollow
from rulegauge.core.errors import ProvenanceError, RulegaugeError
from rulegauge.core.names import name_problem
from rulegauge.store.schema import known_table
from rulegauge.store.schema import spec as table_spec

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
_SHA = re.compile(r"^[0-9a-f]{64}$")


def shape_problems(m: Any) -> list[str]:
    """Every way ``m`` departs from the manifest shape (module docstring)."""
    if not isinstance(m, dict):
        return [f"must be a JSON object, not {type(m).__name__}"]
    out = []
    tables = m.get("tables", {})
    if not isinstance(tables, dict):
        out.append(f"'tables' must map table names to their hash and rows, not "
                   f"{type(tables).__name__}")
        tables = {}
    for name, info in tables.items():
        if name_problem("table name", name):
            out.append(f"'tables' holds a bad table name {name!r}")
        elif not isinstance(info, dict) or not isinstance(info.get("sha256"), str) \
                or not _SHA.match(info["sha256"]):
            out.append(f"'tables.{name}' must be {{\"sha256\": <64 hex digits>, \"rows\": n}}, "
                       f"got {json.dumps(info)[:80]}")
        elif "rows" in info and (not isinstance(info["rows"], int) or isinstance(info["rows"], bool)
                                 or info["rows"] < 0):
            out.append(f"'tables.{name}.rows' must be a count, got {info['rows']!r}")
    for key in ("status", "run_id", "kind"):
        if key in m and not isinstance(m[key], str):
            out.append(f"'{key}' must be text, got {json.dumps(m[key])[:80]}")
    return out


def read_manifest(folder: Path, *, missing_ok: bool = False) -> dict[str, Any]:
    """The manifest of run ``folder``, read without following a link and shape-checked;
    ``{}`` when there is none and ``missing_ok``."""
    p = check_no_links(Path(folder) / MANIFEST, folder)
    if not p.exists():
        if missing_ok:
            return {}
        raise RulegaugeError(f"{folder}: not a run directory (no {MANIFEST})")
    raw = read_bytes_nofollow(p, MAX_MANIFEST_BYTES)
    if len(raw) > MAX_MANIFEST_BYTES:
        raise ProvenanceError(f"{p}: manifest is larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        m = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, ValueError) as exc:
        raise ProvenanceError(f"{p}: manifest is not valid JSON ({exc})") from None
    bad = shape_problems(m)
    if bad:
        raise ProvenanceError(f"{p}: malformed manifest: " + "; ".join(bad))
    return dict(m)


def column_problems(name: str, path: Path) -> list[str]:
    """How the columns of table file ``path`` depart from table ``name``'s declared schema."""
    if not known_table(name):
        return []  # a table this version does not know: read only by what asks for it
    try:
        have = set(pq.read_schema(path).names)
    except (OSError, ValueError) as exc:  # pyarrow raises ArrowInvalid (a ValueError)
        return [f"{name}.parquet is not a readable Parquet file ({exc})"]
    spec = table_spec(name)
    # a backfilled column is one runs written before it lack (store/schema: Column.backfill)
    fixed = [c.name for c in spec.columns if not c.name.endswith("*") and c.backfill is None]
    missing = [c for c in fixed if c not in have]
    if missing:
        return [f"{name}.parquet lacks the declared column(s) {', '.join(missing)} "
                f"(docs/schemas.md)"]
    return []


def check_columns(folder: Path, names: list[str]) -> None:
    """Raise :class:`ProvenanceError` naming every table of ``names`` in ``folder`` whose
    columns are not those declared (:func:`column_problems`)."""
    bad = [p for n in names for p in column_problems(n, Path(folder) / f"{n}.parquet")]
    if bad:
        raise ProvenanceError(f"{folder}: " + "; ".join(bad))
