"""From fused chunk lists to the ``fused`` and ``metrics`` tables.

Chunks collapse to pages in fused order: a page's rank is its position among
distinct pages, counted at its best-ranked chunk (``page_rank``; later chunks of
the same page carry the same page rank). Relevance and requirement coverage are
looked up per (question, page) with array searches, not per-row Python loops.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.corpus.records import page_key, page_keys
from harness.fusion.fuse import Fused, RankMatrix
from harness.goldset.records import Question
from harness.metrics.ranking import MetricSpec, PageLists, compute, depth_needed, requirement_masks


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

    @property
    def n_pages(self) -> int:
        return max(len(self.page_code), 1)


def make_gold(questions: Sequence[Question], matrix: RankMatrix,
              chunk_pages: dict[str, tuple[str, int]]) -> Gold:
    """``chunk_pages`` maps chunk id -> (doc id, page)."""
    page_ids = {page_key(d, p) for d, p in chunk_pages.values()}
    page_ids |= {p for q in questions for p in q.relevant_pages}
    code = {p: i for i, p in enumerate(sorted(page_ids))}
    # once per distinct chunk, then spread to the matrix rows (a chunk has a row per question)
    inverse, chunks = pd.factorize(matrix.chunk_ids, sort=False)
    u_docs = np.array([chunk_pages[c][0] for c in chunks], dtype=object)
    u_pnos = np.array([chunk_pages[c][1] for c in chunks], dtype=np.int64)
    u_code = np.array([code[k] for k in page_keys(u_docs, u_pnos)], dtype=np.int64)
    docs, pnos, pcode = u_docs[inverse], u_pnos[inverse], u_code[inverse]
    n_pages = max(len(code), 1)
    keys, masks, gains = [], [], []
    for qi, q in enumerate(questions):
        grades = q.page_grades
        for page, mask in requirement_masks(q).items():
            keys.append(qi * n_pages + code[page])
            masks.append(mask)
            gains.append(grades[page])
    order = np.argsort(np.asarray(keys, dtype=np.int64), kind="stable")
    graded = any(q.graded for q in questions)
    return Gold(tuple(questions), code, pcode, docs, pnos,
                np.asarray(keys, dtype=np.int64)[order], np.asarray(masks, dtype=np.int64)[order],
                np.array([len(q.requirements) for q in questions]),
                np.array([len(q.relevant_pages) for q in questions]),
                np.asarray(gains, dtype=np.float64)[order] if graded else None,
                ideal_gains(questions) if graded else None)


def ideal_gains(questions: Sequence[Question]) -> np.ndarray:
    """(Q, max relevant pages) grades of each question sorted descending, 0-padded."""
    width = max([len(q.page_grades) for q in questions] + [1])
    out = np.zeros((len(questions), width))
    for i, q in enumerate(questions):
        g = sorted(q.page_grades.values(), reverse=True)
        out[i, : len(g)] = g
    return out


def gain_lookup(gold: Gold, keys: np.ndarray) -> np.ndarray | None:
    """Grade of each (question, page) key (0 where not relevant); None when binary."""
    if gold.gold_gain is None:
        return None
    pos = np.minimum(np.searchsorted(gold.gold_keys, keys), max(len(gold.gold_keys) - 1, 0))
    hit = gold.gold_keys[pos] == keys
    return np.where(hit, gold.gold_gain[pos], 0.0)


def relevance_lookup(gold: Gold, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pos = np.searchsorted(gold.gold_keys, keys)
    pos = np.minimum(pos, max(len(gold.gold_keys) - 1, 0))
    hit = (gold.gold_keys[pos] == keys) if len(gold.gold_keys) else np.zeros(len(keys), bool)
    return hit, np.where(hit, gold.gold_mask[pos] if len(gold.gold_mask) else 0, 0)


def page_ranks(fused: Fused, gold: Gold) -> tuple[np.ndarray, np.ndarray]:
    """(page_rank per fused row, True where the row is its page's first chunk)."""
    keys = fused.question_index * gold.n_pages + gold.chunk_page[fused.rows]
    first = np.zeros(len(keys), bool)
    _, first_idx, inverse = np.unique(keys, return_index=True, return_inverse=True)
    first[first_idx] = True
    csum = np.cumsum(first)
    starts = np.r_[0, np.flatnonzero(np.diff(fused.question_index)) + 1] if len(keys) else np.zeros(0, np.int64)
    base = np.repeat(np.r_[0, csum][starts], np.diff(np.r_[starts, len(keys)]))
    rank_at = csum - base  # page rank of each first-occurrence row
    return rank_at[first_idx][inverse], first


def page_lists(fused: Fused, gold: Gold, depth: int) -> tuple[PageLists, np.ndarray]:
    """Build :class:`PageLists` for every question (absent ones stay empty) and
    return them with the per-row relevance flags."""
    nq = len(gold.questions)
    prank, first = page_ranks(fused, gold)
    keys = fused.question_index * gold.n_pages + gold.chunk_page[fused.rows]
    rel_row, mask_row = relevance_lookup(gold, keys)
    rel = np.zeros((nq, depth), bool)
    req = np.zeros((nq, depth), np.int64)
    sel = first & (prank <= depth)
    rel[fused.question_index[sel], prank[sel] - 1] = rel_row[sel]
    req[fused.question_index[sel], prank[sel] - 1] = mask_row[sel]
    gain_row = gain_lookup(gold, keys)
    gain = None
    if gain_row is not None:
        gain = np.zeros((nq, depth))
        gain[fused.question_index[sel], prank[sel] - 1] = gain_row[sel]
    first_rel = np.full(nq, np.inf)
    rsel = first & rel_row
    np.minimum.at(first_rel, fused.question_index[rsel], prank[rsel].astype(np.float64))
    top = np.zeros(nq)
    top_sel = fused.fused_rank == 1
    top[fused.question_index[top_sel]] = fused.score[top_sel]
    ceiling = np.full(nq, fused.config.ceiling)
    return (PageLists(rel, req, gold.n_req, gold.n_rel, first_rel, top, ceiling, gain, gold.ideal_gain),
            rel_row)


def fused_frame(fused: Fused, matrix: RankMatrix, gold: Gold, run_arms: Sequence[str]) -> pd.DataFrame:
    """The ``fused`` table rows of one config."""
    c = fused.config
    prank, _ = page_ranks(fused, gold)
    keys = fused.question_index * gold.n_pages + gold.chunk_page[fused.rows]
    rel_row, _ = relevance_lookup(gold, keys)
    df = pd.DataFrame({
        "question_id": matrix.question_ids[fused.question_index].astype(str),
        "config_id": c.config_id,
        "chunk_id": matrix.chunk_ids[fused.rows].astype(str),
        "doc_id": gold.chunk_doc[fused.rows].astype(str),
        "page": gold.chunk_pageno[fused.rows].astype(np.int32),
        "fused_rank": fused.fused_rank.astype(np.int32),
        "fused_score": fused.score,
        "ceiling": c.ceiling,
        "score_ratio": fused.score / c.ceiling,
        "n_arms": np.int32(len(c.arms)),
        "arms_voted": fused.arms_voted.astype(np.int32),
        "relevant": rel_row,
        "page_rank": prank.astype(np.int32),
    })
    for arm in run_arms:
        col = pd.array([pd.NA] * len(df), dtype="Int32")
        if arm in c.arms:
            j = c.arms.index(arm)
            r = matrix.ranks[fused.rows, matrix.arms.index(arm)]
            ok = (r > 0) & (r <= c.depths[j])
            col = pd.array(np.where(ok, r, 0), dtype="Int32")
            col[~ok] = pd.NA
        df[f"rank_{arm}"] = col
    return df


def metrics_frame(fused: Fused, gold: Gold, specs: Sequence[MetricSpec]) -> pd.DataFrame:
    """Every question x metric row of one config (defaults where nothing was retrieved)."""
    lists, _ = page_lists(fused, gold, depth_needed(specs))
    values = compute(specs, lists)
    nq = len(gold.questions)
    qids = np.array([q.question_id for q in gold.questions], dtype=object)
    answerable = np.array([q.answerable for q in gold.questions])
    frames = []
    for s in specs:
        v = values[s.name]
        if s.kind == "ranking":
            v = np.where(answerable, v, s.default)
        frames.append(pd.DataFrame({"question_id": qids.astype(str), "config_id": fused.config.config_id,
                                    "metric": s.name, "value": v.astype(np.float64),
                                    "answerable": answerable}))
    out = pd.concat(frames, ignore_index=True)
    if len(out) != nq * len(specs):
        raise RuntimeError("metrics: a question or metric row went missing")
    return out
