"""Parsed rulings and their decodings -> DataFrames in the ``ruling*`` table shapes.

Column names come from the registered specs (``rulegauge.rulings.tables``);
tuples become lists, absent values nulls. :func:`decode_ruling` decodes the
distinct fused ranks a ruling shows (search rows, and read rows that carry a
fused rank), with the carried-by sizes of the read rows. Besides the decoding
flags, a decode row is flagged ``score_disagrees`` when its search and read rows
print different scores (the search row's is decoded) and ``carried_by_not_fused``
when its carried-by names an arm the "arms fused" line does not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pandas as pd

from rulegauge.answering.citations import parse_markers
from rulegauge.arms.rrf_rounding import fused_value, rounds_to
from rulegauge.rulings.joint import RowDecoding, ScoredRow, decode_ranking
from rulegauge.rulings.records import DocCell, Ruling
from rulegauge.rulings.tables import (
    RULING_CITATIONS,
    RULING_DECODES,
    RULING_READS,
    RULING_REFS,
    RULINGS,
)
from rulegauge.store.tables import TableSpec


def _frame(spec: TableSpec, rows: list[dict[str, object]]) -> pd.DataFrame:
    names = [c.name for c in spec.columns]
    clean = [{n: (list(v) if isinstance(v, tuple) else v) for n, v in
              ((n, r.get(n)) for n in names)} for r in rows]
    return pd.DataFrame(clean, columns=names)


def _doc(d: DocCell) -> dict[str, object]:
    return {"doc_id": d.doc_id, "doc_kind": d.kind, "doc_title": d.title}


def _ratio(score: float | None, ceiling: object) -> float | None:
    if score is None or not isinstance(ceiling, float) or ceiling <= 0:
        return None
    return score / ceiling


def decode_ruling(ruling: Ruling, depth: int = 100, rounding: str = "half_up"
                  ) -> tuple[RowDecoding, ...]:
    """Decode the ruling's distinct fused ranks; () when the arm count is unknown."""
    n_arms, k = ruling.get("n_arms"), ruling.get("k")
    if not isinstance(n_arms, int) or not isinstance(k, float):
        return ()
    rows: dict[int, ScoredRow] = {}
    for s in ruling.search:
        if s.fused_score is not None:
            rows[s.fused_rank] = ScoredRow(s.fused_rank, s.fused_score)
    for r in ruling.reads:
        if r.fused_rank is None or r.fused_score is None:
            continue
        voters = len(r.carried_by) if r.carried_by is not None else None
        rows[r.fused_rank] = ScoredRow(r.fused_rank, rows[r.fused_rank].score
                                       if r.fused_rank in rows else r.fused_score, voters)
    return decode_ranking(list(rows.values()), k=k, arms=n_arms, depth=depth, rounding=rounding)


def _json_ranks(cands: Sequence[tuple[int | None, ...]]) -> str:
    return json.dumps([list(c) for c in cands])


def decodes_frame(ruling: Ruling, decoded: Sequence[RowDecoding]) -> pd.DataFrame:
    search = {s.fused_rank: s for s in ruling.search}
    reads = {r.fused_rank: r for r in ruling.reads if r.fused_rank is not None}
    ceiling = ruling.get("ceiling")
    rows = []
    for rd in decoded:
        fr, d = rd.row.fused_rank, rd.decoding
        src = search.get(fr) or reads.get(fr)
        read = reads.get(fr)
        flags = list(rd.all_flags)
        if fr in search and read is not None and search[fr].fused_score != read.fused_score:
            flags.append("score_disagrees")
        fused_arms = ruling.get("arms_fused")
        if (read is not None and read.carried_by and isinstance(fused_arms, tuple)
                and not set(read.carried_by) <= set(fused_arms)):
            flags.append("carried_by_not_fused")
        ranks = rd.ranks
        value = fused_value(ranks, d.k, d.weights) if ranks is not None else None
        rows.append({
            "question_id": ruling.question_id, "fused_rank": fr,
            "doc_id": src.doc.doc_id if src else None, "page": src.page if src else None,
            "fused_score": rd.row.score, "ceiling": ceiling,
            "score_ratio": _ratio(rd.row.score, ceiling), "k": d.k, "n_arms": d.arms,
            "depth": d.depth, "rounding": d.rounding, "in_search": fr in search,
            "in_read": read is not None,
            "carried_by": "+".join(read.carried_by) if read and read.carried_by else None,
            "n_carried": rd.row.voters, "n_candidates": len(d.candidates), "unique": d.unique,
            "candidates": _json_ranks(d.candidates), "n_consistent": len(rd.consistent),
            "consistent": _json_ranks(rd.consistent),
            "ranks": list(ranks) if ranks is not None else None,
            "decoded_score": float(value) if value is not None else None,
            "reproduces": (rounds_to(value, rd.row.score, d.decimals, d.rounding)
                           if value is not None else None),
            "flags": flags})
    return _frame(RULING_DECODES, rows)


def rulings_frame(rulings: Sequence[Ruling], decoded: Mapping[str, Sequence[RowDecoding]]
                  ) -> pd.DataFrame:
    rows = []
    for r in rulings:
        dec = decoded.get(r.question_id, ())
        rows.append({**r.values, "question_id": r.question_id, "source_file": r.source_file,
                     "source_sha256": r.source_sha256, "n_decoded": len(dec),
                     "n_decoded_unique": sum(d.ranks is not None for d in dec)})
    return _frame(RULINGS, rows)


def refs_frame(rulings: Sequence[Ruling]) -> pd.DataFrame:
    rows = []
    for r in rulings:
        c = r.get("ceiling")
        rows += [{"question_id": r.question_id, "fused_rank": s.fused_rank, **_doc(s.doc),
                  "heading": s.heading, "page": s.page, "fused_score": s.fused_score,
                  "ceiling": c, "score_ratio": _ratio(s.fused_score, c), "band": s.band,
                  "snippet": s.snippet, "snippet_chars": s.snippet_chars, "in_json": s.in_json,
                  "in_table": s.in_table} for s in r.search]
    return _frame(RULING_REFS, rows)


def reads_frame(rulings: Sequence[Ruling]) -> pd.DataFrame:
    rows = []
    for r in rulings:
        c = r.get("ceiling")
        rows += [{"question_id": r.question_id, "read_at": x.read_at, **_doc(x.doc),
                  "heading": x.heading, "page": x.page, "fused_rank": x.fused_rank,
                  "fused_score": x.fused_score, "ceiling": c,
                  "score_ratio": _ratio(x.fused_score, c),
                  "carried_by": "+".join(x.carried_by) if x.carried_by else None,
                  "carried_by_raw": x.carried_by_raw,
                  "n_carried": len(x.carried_by) if x.carried_by is not None else None,
                  "slot": x.slot, "slot_raw": x.slot_raw} for x in r.reads]
    return _frame(RULING_READS, rows)


def citations_frame(rulings: Sequence[Ruling]) -> pd.DataFrame:
    rows = []
    for r in rulings:
        text = r.get("answer_text")
        cited = ({n for m in parse_markers(text) for n in m.numbers}
                 if isinstance(text, str) else set())
        rows += [{"question_id": r.question_id, "n": c.n, **_doc(c.doc), "heading": c.heading,
                  "page": c.page, "quote": c.quote, "quote_chars": c.quote_chars,
                  "cited_in_answer": c.n in cited, "in_answer_list": c.in_answer_list,
                  "in_json": c.in_json, "in_table": c.in_table} for c in r.citations]
    return _frame(RULING_CITATIONS, rows)
