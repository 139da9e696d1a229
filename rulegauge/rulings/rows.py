"""The page's tab-separated tables and raw JSON lists, turned into row records.

Tables are recognised by shape, wherever they sit on the page: a run of lines
holding tabs, whose first row is a header unless its first cell is a data key
(``#3``, ``[2]``). A run is the *search* table (6 cells, ``#n`` first), the
*reads* table (8 cells, ``#n`` first and fifth) or the *citations* table (5
cells, ``[n]`` first). With the known English headers, columns are taken by name
(so a reordered table still parses); otherwise by the printed position. A row
with the wrong number of cells (a truncated page) is skipped with a warning.

The raw JSON lists are the passage search's refs (items with ``score``) and the
answer's citations (items with ``quote``): production's document id is the
item's ``...DocId`` key (``sharpsignalDocId``), ``headingPath`` its heading.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rulegauge.core.registry import Registry
from rulegauge.rulings import cells
from rulegauge.rulings.segment import Line


@dataclass(frozen=True)
class TableKind:
    """A table the page prints: English headers (lower case) in field order, and
    the shape test for a data row."""

    name: str
    fields: tuple[str, ...]
    headers: tuple[str, ...]
    is_row: Callable[[Sequence[str]], bool]


TABLE_KINDS: Registry[TableKind] = Registry("ruling table")
TABLE_KINDS.add("search", TableKind(
    "search", ("fused_rank", "document", "heading", "page", "score", "snippet_chars"),
    ("fused rank", "document", "heading", "page", "fused rrf score", "snippet chars"),
    lambda c: len(c) == 6 and cells.rank(c[0]) is not None))
TABLE_KINDS.add("reads", TableKind(
    "reads",
    ("read_at", "document", "heading", "page", "fused_rank", "score", "carried_by", "slot"),
    ("read at", "document", "heading", "page", "fused rank", "fused rrf score", "carried by",
     "how it got its slot"),
    lambda c: len(c) == 8 and cells.rank(c[0]) is not None and cells.rank(c[4]) is not None))
TABLE_KINDS.add("citations", TableKind(
    "citations", ("n", "document", "heading", "page", "quote_chars"),
    ("#", "document", "heading", "page", "quote chars"),
    lambda c: len(c) == 5 and cells.marker(c[0]) is not None))


@dataclass(frozen=True)
class TableRow:
    """A data row as field -> cell text, with its line number."""

    line: int
    cells: dict[str, str]


@dataclass(frozen=True)
class Table:
    kind: str | None
    line: int
    header: tuple[str, ...] | None
    rows: tuple[TableRow, ...]
    text: str
    problems: tuple[tuple[int, str], ...]


def _is_data(first_cell: str) -> bool:
    return cells.rank(first_cell) is not None or cells.marker(first_cell) is not None


def tab_runs(lines: Sequence[Line]) -> list[list[Line]]:
    """Consecutive lines holding a tab."""
    runs: list[list[Line]] = []
    for ln in lines:
        if "\t" in ln.text:
            if runs and runs[-1][-1].no == ln.no - 1:
                runs[-1].append(ln)
            else:
                runs.append([ln])
    return runs


def _kind_of(header: tuple[str, ...] | None, data: list[list[str]]) -> TableKind | None:
    if header is not None:
        low = tuple(h.strip().lower() for h in header)
        for _, kind in TABLE_KINDS.items():
            if sorted(low) == sorted(kind.headers):
                return kind
    for _, kind in TABLE_KINDS.items():
        if data and kind.is_row(data[0]):
            return kind
    return None


def parse_table(run: Sequence[Line]) -> Table:
    """Recognise one run of tab-separated lines (see module docstring)."""
    split = [ln.text.split("\t") for ln in run]
    header = tuple(split[0]) if not _is_data(split[0][0]) else None
    data_lines = list(run[1:] if header else run)
    data = split[1:] if header else split
    kind = _kind_of(header, data)
    text = "\n".join(ln.text for ln in run)
    if kind is None:
        return Table(None, run[0].no, header, (), text, ())
    n = len(kind.fields)
    by_name = (header is not None
               and sorted(h.strip().lower() for h in header) == sorted(kind.headers))
    order = ([kind.fields[kind.headers.index(h.strip().lower())] for h in header]
             if by_name and header else list(kind.fields))
    if header is not None and not by_name and len(header) != n:
        return Table(None, run[0].no, header, (), text, ())
    rows, problems = [], []
    for ln, c in zip(data_lines, data, strict=True):
        if len(c) != n:
            problems.append((ln.no, f"{kind.name} table row has {len(c)} cells, expected {n}; "
                                    "row skipped (truncated page?)"))
            continue
        rows.append(TableRow(ln.no, dict(zip(order, c, strict=True))))
    return Table(kind.name, run[0].no, header, tuple(rows), text, tuple(problems))


@dataclass(frozen=True)
class JsonItem:
    """One item of a raw JSON list: position (1-based), doc id, page, heading, and
    ``score`` (refs) or ``quote`` (citations)."""

    position: int
    doc_id: str | None
    page: int | None
    heading: str | None
    score: float | None
    text: str | None


def _doc_key(item: dict[str, Any]) -> str | None:
    for key, value in item.items():
        if key.lower().endswith("docid") or key.lower() == "doc_id":
            return None if value is None else str(value)
    return None


def json_items(raw: str) -> tuple[str | None, list[JsonItem], list[str]]:
    """Parse a raw JSON list: (kind ``refs``/``citations``/None, items, problems)."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, [], [f"invalid JSON ({exc.msg} at character {exc.pos})"]
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        return None, [], ["JSON is not a list of objects"]
    if not data:
        return None, [], []
    kind = "refs" if "score" in data[0] else "citations" if "quote" in data[0] else None
    items, problems = [], []
    for i, x in enumerate(data, start=1):
        page, score = x.get("page"), x.get("score")
        if not isinstance(page, int) or isinstance(page, bool):
            problems.append(f"item {i}: page {page!r} is not an integer")
            page = None
        if score is not None and (not isinstance(score, int | float) or isinstance(score, bool)):
            problems.append(f"item {i}: score {score!r} is not a number")
            score = None
        text = x.get("snippet") if kind == "refs" else x.get("quote")
        heading = x.get("headingPath")
        items.append(JsonItem(i, _doc_key(x), page, heading if isinstance(heading, str) else None,
                              None if score is None else float(score),
                              text if isinstance(text, str) else None))
    return kind, items, problems
