"""The gold side of page lists: per (question, page) relevance, requirements, grades, judgments.

Built once per run (:func:`make_gold`) and shared by every config. Pages get integer
codes; a (question, page) pair is the key ``question index * pages + page code``, and
every lookup is an array search over sorted keys, never a per-row Python loop.
Judged pages (:meth:`rulegauge.goldset.records.Question.judged_pages`: requirement
pages and explicit judgments, judged non-relevant included) feed ``Judged@k`` and the
condensed-list metrics. A foreign hit (a row the rank matrix marks ``foreign``: an id that
matches no chunk) is a page of its own, ``<reply id>#0``
(:func:`rulegauge.corpus.foreign.foreign_page_key`), merged with no other hit, and judged
non-relevant for every question: a page from outside the corpus is no page of the gold set, its
relevance is known, so it stays in condensed lists and counts in ``Judged@k`` (every metric
counts it as the non-relevant page it is, and nobody is sent to judge it).

Requirements met (``recall@k``): a relevant page carries the bitmask of the requirements
it meets (bit i = requirement i, an int64: at most
:data:`rulegauge.core.limits.MAX_ANY_OF_REQUIREMENTS` = 62 bits, the sign bit clear), OR-ed
over the top k and counted, which is what an any-of requirement needs (two alternative
pages found meet it once). A question with more requirements than that, each a single
page (an imported collection's query with hundreds of relevant documents), is counted
page by page instead (``by_page``): its requirement pages carry the flag 1 and the
requirements met are the flagged pages in the top k (a page list holds a page once), so
the common case keeps its one OR-reduce and the limit is only the any-of one
(:func:`rulegauge.goldset.grades.requirements_problem`, checked by ``validate``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rulegauge.core.limits import MAX_ANY_OF_REQUIREMENTS
from rulegauge.corpus.foreign import FOREIGN_PAGE
from rulegauge.corpus.records import page_key, page_keys
from rulegauge.fusion.fuse import RankMatrix
from rulegauge.goldset.records import Question


@dataclass(frozen=True)
class Gold:
    """Question-side lookups shared by every config of a run."""

    questions: tuple[Question, ...]
    page_code: dict[str, int]  # page id -> int code
    chunk_page: np.ndarray  # matrix row -> page code
    chunk_doc: np.ndarray  # matrix row -> doc id
    chunk_pageno: np.ndarray  # matrix row -> page number
    gold_keys: np.ndarray  # sorted q * P + page code of every relevant (question, page)
    gold_mask: np.ndarray  # requirement bitmask aligned with gold_keys
    n_req: np.ndarray
    n_rel: np.ndarray
    gold_gain: np.ndarray | None = None  # grade aligned with gold_keys; None: binary
    ideal_gain: np.ndarray | None = None  # (Q, max relevant) grades sorted descending
    judged_keys: np.ndarray | None = None  # sorted keys of every judged (question, page)
    by_page: np.ndarray | None = None  # (Q,) bool: requirements counted page by page; None: none is
    chunk_foreign: np.ndarray | None = None  # matrix row -> bool: a foreign hit; None: none
    page_foreign: np.ndarray | None = None  # page code -> bool: a foreign hit's page; None: none

    @property
    def n_pages(self) -> int:
        return max(len(self.page_code), 1)

    def row_keys(self, question_index: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """(question, page) keys of matrix ``rows`` asked for ``question_index``."""
        keys: np.ndarray = question_index * self.n_pages + self.chunk_page[rows]
        return keys


def counted_by_page(question: Question) -> bool:
    """True when ``question``'s requirements are counted page by page (module docstring)."""
    return len(question.requirements) > MAX_ANY_OF_REQUIREMENTS


def requirement_masks(question: Question) -> dict[str, int]:
    """Page id -> bitmask of the requirements it meets (bit i = requirement i); for a
    question counted page by page, 1 for each requirement page (module docstring)."""
    if counted_by_page(question):
        if any(len(req) > 1 for req in question.requirements):  # validate refuses it first
            raise ValueError(f"question {question.question_id}: {len(question.requirements)} requirements "
                             f"with an any-of list; at most {MAX_ANY_OF_REQUIREMENTS}")
        return {str(req[0]): 1 for req in question.requirements}
    masks: dict[str, int] = {}
    for i, req in enumerate(question.requirements):
        for ref in req:
            masks[str(ref)] = masks.get(str(ref), 0) | (1 << i)
    return masks


def make_gold(questions: Sequence[Question], matrix: RankMatrix,
              chunk_pages: dict[str, tuple[str, int]]) -> Gold:
    """``chunk_pages`` maps chunk id -> (doc id, page); a foreign hit of the matrix (module
    docstring) needs no entry: it is ``(reply id, 0)``."""
    judged = [q.judged_pages() for q in questions]
    if matrix.foreign is not None:  # only then: the ordinary path builds no new mapping
        chunk_pages = {**chunk_pages, **{str(c): (str(c), FOREIGN_PAGE)
                                         for c in np.unique(matrix.chunk_ids[matrix.foreign])}}
    page_ids = {page_key(d, p) for d, p in chunk_pages.values()}
    page_ids |= {p for q in questions for p in q.relevant_pages}
    page_ids |= {p for j in judged for p in j}
    code = {p: i for i, p in enumerate(sorted(page_ids))}
    # once per distinct chunk, then spread to the matrix rows (a chunk has a row per question)
    inverse, chunks = pd.factorize(matrix.chunk_ids, sort=False)
    u_docs = np.array([chunk_pages[c][0] for c in chunks], dtype=object)
    u_pnos = np.array([chunk_pages[c][1] for c in chunks], dtype=np.int64)
    u_code = np.array([code[k] for k in page_keys(u_docs, u_pnos)], dtype=np.int64)
    docs, pnos, pcode = u_docs[inverse], u_pnos[inverse], u_code[inverse]
    n_pages = max(len(code), 1)
    keys, masks, gains = [], [], []
    for qi, q in enumerate(questions):  # relevant: listed pages and pages judged relevant
        grades, req = q.page_grades, requirement_masks(q)
        for page in sorted(q.relevant_pages):
            keys.append(qi * n_pages + code[page])
            masks.append(req.get(page, 0))
            gains.append(grades[page])
    order = np.argsort(np.asarray(keys, dtype=np.int64), kind="stable")
    graded = any(q.graded for q in questions)
    page_foreign = None
    if matrix.foreign is not None:
        page_foreign = np.zeros(n_pages, bool)
        page_foreign[np.unique(pcode[matrix.foreign])] = True
    jkeys = np.unique(np.asarray([qi * n_pages + code[p] for qi, j in enumerate(judged) for p in j],
                                 dtype=np.int64))
    by_page = np.array([counted_by_page(q) for q in questions], dtype=bool)
    return Gold(tuple(questions), code, pcode, docs, pnos,
                np.asarray(keys, dtype=np.int64)[order], np.asarray(masks, dtype=np.int64)[order],
                np.array([len(q.requirements) for q in questions]),
                np.array([len(q.relevant_pages) for q in questions]),
                np.asarray(gains, dtype=np.float64)[order] if graded else None,
                ideal_gains(questions) if graded else None, jkeys, by_page if by_page.any() else None,
                matrix.foreign, page_foreign)


def ideal_gains(questions: Sequence[Question]) -> np.ndarray:
    """(Q, max relevant pages) grades of each question sorted descending, 0-padded."""
    width = max([len(q.page_grades) for q in questions] + [1])
    out = np.zeros((len(questions), width))
    for i, q in enumerate(questions):
        g = sorted(q.page_grades.values(), reverse=True)
        out[i, : len(g)] = g
    return out


@dataclass(frozen=True)
class Lookup:
    """Gold facts of (question, page) keys: relevant, requirement mask, grade, judged."""

    rel: np.ndarray  # bool
    req: np.ndarray  # int64 requirement bitmask (0 where not relevant)
    gain: np.ndarray | None  # grade (0 where not relevant); None: binary relevance
    judged: np.ndarray  # bool: the gold set judged the page for the question


def lookup(gold: Gold, keys: np.ndarray) -> Lookup:
    """What the gold set says about each (question, page) key."""
    n = len(gold.gold_keys)
    pos = np.minimum(np.searchsorted(gold.gold_keys, keys), max(n - 1, 0))
    hit = (gold.gold_keys[pos] == keys) if n else np.zeros(len(keys), bool)
    mask = np.where(hit, gold.gold_mask[pos] if n else 0, 0)
    gain = None if gold.gold_gain is None else np.where(hit, gold.gold_gain[pos], 0.0)
    jk = gold.judged_keys if gold.judged_keys is not None else np.zeros(0, np.int64)
    jpos = np.minimum(np.searchsorted(jk, keys), max(len(jk) - 1, 0))
    judged = (jk[jpos] == keys) if len(jk) else np.zeros(len(keys), bool)
    if gold.page_foreign is not None:  # a foreign hit's page: judged non-relevant (module docstring)
        judged |= gold.page_foreign[keys % gold.n_pages]
    return Lookup(hit, mask, gain, judged | hit)
