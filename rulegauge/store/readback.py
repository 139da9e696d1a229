"""Run tables back to typed records: questions (with their reference facts), documents, chunks.

The inverse of the frames ``rulegauge run`` writes (``questions``, ``question_facts``,
``documents``, ``chunks``), for everything that reads a run without its gold set or
corpus: re-scoring (``rulegauge run --from``), answering, the answers view. Table order is
kept; a question's facts come back in fact-number order.
"""

from __future__ import annotations

import json
from collections.abc import Collection

import pandas as pd

from rulegauge.core.tablerows import rows
from rulegauge.corpus.records import HEADING_SEP, Chunk, Document, split_page_key
from rulegauge.goldset.records import PageJudgment, PageRef, Question


def _ref(s: str) -> PageRef:
    doc, page = split_page_key(s)
    return PageRef(doc, page)


def questions_from_frame(df: pd.DataFrame, facts: pd.DataFrame | None = None,
                         judgments: pd.DataFrame | None = None,
                         unlabelled: Collection[str] = ()) -> dict[str, Question]:
    """``questions`` table (and ``question_facts``, ``question_judgments``, when the run
    has them) -> :class:`Question` records (table order kept); ``unlabelled``: the ids the
    run's manifest records as nobody labelled (``goldset.unlabelled``)."""
    by_q: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
    if facts is not None:
        for f in rows(facts):
            by_q.setdefault(str(f.question_id), []).append((int(f.fact), tuple(f.phrasings)))
    judged: dict[str, list[PageJudgment]] = {}
    for j in rows(judgments) if judgments is not None else []:
        judged.setdefault(str(j.question_id), []).append(PageJudgment(
            str(j.doc_id), int(j.page), int(j.grade), str(j.judge_kind), str(j.judge_id), str(j.time),
            str(j.note)))
    out = {}
    for r in rows(df):
        reqs = tuple(tuple(_ref(x) for x in req) for req in json.loads(r.requirements))
        game = r.game if isinstance(r.game, str) and r.game else None
        qf = tuple(p for _, p in sorted(by_q.get(r.question_id, [])))
        out[r.question_id] = Question(r.question_id, r.question, r.language, reqs,
                                      tuple(r.tags) if r.tags is not None else (), game,
                                      facts=qf, judged=tuple(judged.get(r.question_id, ())),
                                      labelled=r.question_id not in unlabelled)
    return out


def documents_from_frame(df: pd.DataFrame) -> dict[str, Document]:
    return {r.doc_id: Document(r.doc_id, r.kind, r.game, r.edition, r.language, r.title,
                               r.path, r.source_sha256) for r in rows(df)}


def chunks_from_frame(df: pd.DataFrame) -> dict[str, Chunk]:
    return {r.chunk_id: Chunk(r.chunk_id, r.doc_id, int(r.page),
                              tuple(r.heading_path.split(HEADING_SEP)) if r.heading_path else (),
                              r.text, int(r.char_start), int(r.char_end),
                              # a missing label reads back as NaN from pandas: None, as written
                              r.page_label if isinstance(r.page_label, str) else None)
            for r in rows(df)}


READERS = {"questions": questions_from_frame, "documents": documents_from_frame,
           "chunks": chunks_from_frame}
"""Table -> the function that reads it back (``question_facts`` and ``question_judgments`` are
read with ``questions``);
the tables declare it (``record=`` in :mod:`rulegauge.store.tables`)."""
