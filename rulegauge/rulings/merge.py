"""Merge the page's several views of one list into row records.

* Passage search: raw refs JSON item ``i`` is fused rank ``i``; the printed table
  names its fused rank. Rows join on fused rank; the table's document, heading,
  page and score win, the JSON gives the snippet. A disagreement on page, score,
  document id or heading is a warning.
* Reads: the printed "what the answerer read" table only.
* Citations: the answer's reference list ``[n]``, raw citations JSON item ``n``
  and the chosen-chunks table ``[n]`` join on ``n``; the table wins, then the
  reference list, then the JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rulegauge.answering.citations import parse_markers
from rulegauge.rulings import cells
from rulegauge.rulings.labels import Acc
from rulegauge.rulings.records import CitationRow, DocCell, ReadRow, SearchRow
from rulegauge.rulings.rows import JsonItem, Table
from rulegauge.rulings.top import AnswerRef


def _rows(table: object) -> list[Any]:
    return list(table.rows) if isinstance(table, Table) else []


def _check(acc: Acc, line: int, what: str, a: object, b: object) -> None:
    if a is not None and b is not None and a != b:
        acc.warn(f"{what}: the table says {a!r}, the JSON {b!r}", line)


def merge_search(items: Sequence[JsonItem], table: object, acc: Acc) -> tuple[SearchRow, ...]:
    by_json = {it.position: it for it in items}
    by_table = {}
    for row in _rows(table):
        r = cells.rank(row.cells["fused_rank"])
        if r is not None:
            by_table[r] = row
    out = []
    for rank in sorted(set(by_json) | set(by_table)):
        j, t = by_json.get(rank), by_table.get(rank)
        line = t.line if t else 0
        doc = cells.doc_cell(t.cells["document"]) if t else DocCell(j.doc_id, None, None)  # type: ignore[union-attr]
        score = cells.score_cell(t.cells["score"]) if t else None
        page = cells.integer(t.cells["page"]) if t else None
        heading = t.cells["heading"].strip() or None if t else None
        if t and score is None:
            acc.warn(f"search row #{rank}: score {t.cells['score']!r} not understood", line)
        if j and t:
            what = f"search row #{rank}"
            _check(acc, line, f"{what} page", page, j.page)
            _check(acc, line, f"{what} score", score[0] if score else None, j.score)
            _check(acc, line, f"{what} document id", doc.doc_id, j.doc_id)
            _check(acc, line, f"{what} heading", heading, j.heading)
        out.append(SearchRow(
            rank, doc if t or j is None else DocCell(j.doc_id, None, None),
            heading if t else j.heading if j else None,
            page if t else j.page if j else None,
            score[0] if score else (j.score if j else None),
            score[1] if score else None, score[2] if score else None,
            score[3] if score else None,
            j.text if j else None,
            cells.integer(t.cells["snippet_chars"]) if t else None,
            j is not None, t is not None, line))
    return tuple(out)


def merge_reads(table: object, acc: Acc) -> tuple[ReadRow, ...]:
    out = []
    strange: dict[str, int] = {}
    for row in _rows(table):
        c = row.cells
        read_at = cells.rank(c["read_at"])
        if read_at is None:
            acc.warn(f"read row: position {c['read_at']!r} not understood; row skipped", row.line)
            continue
        score = cells.score_cell(c["score"])
        carried, unknown = cells.arms(c["carried_by"]) if c["carried_by"].strip() else ((), ())
        for name in unknown:
            strange.setdefault(name, row.line)
        out.append(ReadRow(
            read_at, cells.doc_cell(c["document"]), c["heading"].strip() or None,
            cells.integer(c["page"]), cells.rank(c["fused_rank"]),
            score[0] if score else None, score[1] if score else None,
            score[2] if score else None, score[3] if score else None,
            carried if c["carried_by"].strip() else None, c["carried_by"].strip() or None,
            cells.slot(c["slot"]) if c["slot"].strip() else None, c["slot"].strip() or None,
            row.line))
    if strange:
        acc.warn(f"carried-by names unknown arm(s) {', '.join(strange)} (kept as written); "
                 "known: " + ", ".join(cells.ARM_ALIASES.names()), min(strange.values()))
    return tuple(out)


def merge_citations(refs: Sequence[AnswerRef], items: Sequence[JsonItem], table: object,
                    answer: str | None, acc: Acc) -> tuple[CitationRow, ...]:
    by_ref = {r.n: r for r in refs}
    by_json = {it.position: it for it in items}
    by_table = {}
    for row in _rows(table):
        n = cells.marker(row.cells["n"])
        if n is not None:
            by_table[n] = row
    out = []
    for n in sorted(set(by_ref) | set(by_json) | set(by_table)):
        r, j, t = by_ref.get(n), by_json.get(n), by_table.get(n)
        doc = cells.doc_cell(t.cells["document"]) if t else None
        title = doc.title if doc else (r.title if r else None)
        if doc is None:
            kind_doc = cells.doc_cell(r.title) if r else DocCell(None, None, None)
            doc = DocCell(j.doc_id if j else None, kind_doc.kind, title)
        page = cells.integer(t.cells["page"]) if t else (r.page if r else j.page if j else None)
        heading = (t.cells["heading"].strip() if t else r.heading if r else
                   j.heading if j else None) or None
        if t and r and (page != r.page or heading != r.heading):
            acc.warn(f"citation [{n}]: the table and the answer's reference list disagree", t.line)
        quote = j.text if j else None
        qchars = cells.integer(t.cells["quote_chars"]) if t else None
        if qchars is None and quote is not None:
            qchars = len(quote)
        line = t.line if t else r.line if r else 0
        out.append(CitationRow(n, doc, heading, page, quote, qchars, r is not None, j is not None,
                               t is not None, line))
    if answer is not None and refs:
        cited = {x for mk in parse_markers(answer) for x in mk.numbers}
        dangling = sorted(cited - set(by_ref))
        if dangling:
            acc.warn("answer cites [" + "], [".join(map(str, dangling))
                     + "] but its reference list has no such entry", 0)
    return tuple(out)
