"""Page lists: the one input of every ranking metric, built by one function.

Chunks collapse to pages in fused order: a page's rank is its position among distinct
pages, counted at its best-ranked chunk. :func:`page_lists` builds the lists of every
question from either source, and both give the same lists (tested on every metric):

* the full fused lists of one config (:class:`rulegauge.fusion.fuse.Fused`): exact by
  construction (the ``fused`` table, imported rankings, the tests' reference);
* a config's fused scores over dense candidate columns (:class:`Ordering`, built by
  :mod:`rulegauge.pipeline.sweep`): the fast path. The top ``m`` candidates of each
  question are selected (:func:`rulegauge.fusion.kernel.top_columns`) and put in exact fused order; candidates
  scoring above the m-th best by more than the float tolerance are a prefix of the
  exact order. A question whose first ``depth`` pages reach down to that boundary (a
  tie across the cut, too few distinct pages among m chunks) is ordered in full; one
  whose first relevant page lies beyond them when the whole list is needed gets its
  rank counted by :mod:`rulegauge.metrics.first_relevant` (no full order).

What is built follows the metrics' needs (:data:`rulegauge.metrics.family.NEEDS`):
``whole_list`` makes ``first_rel`` exact beyond the cutoffs; ``judged_only`` builds the
condensed list (unjudged pages removed before ranking; Sakai 2007) instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Protocol

import numpy as np

from rulegauge.fusion.fuse import Fused, RankMatrix
from rulegauge.fusion.kernel import along
from rulegauge.fusion.method import config_ceiling
from rulegauge.metrics.first_relevant import RelevantFacts, first_relevant_whole
from rulegauge.metrics.gold import Gold, lookup


@dataclass(frozen=True)
class PageLists:
    """G ranked page lists, padded to D columns (D >= every cutoff asked for).

    ``rel[g, i]``: the page at rank i+1 is relevant; ``req[g, i]``: bitmask of the
    requirements it meets; ``n_req``/``n_rel``: requirements / relevant pages of the
    question; ``first_rel``: rank of the first relevant page over the *whole* list
    (inf if none); ``top_score``/``ceiling``: fused score of the first chunk and the
    config's ceiling. ``gain[g, i]``: the grade of the page at rank i+1 (0 if not
    relevant) and ``ideal_gain[g]``: the question's grades sorted descending, padded
    with 0; both None for binary relevance (every relevant page has grade 1).
    ``judged[g, i]``: the gold set judged the page; ``n_pages[g]``: pages in the list
    within D (None where the builder was not asked for judgments). ``by_page[g]``: the
    question's requirements are counted page by page, ``req`` is then 1 on a requirement
    page (:mod:`rulegauge.metrics.gold`); None when no question is. ``foreign[g, i]``: the
    page is a foreign hit (an id that matches no chunk, :mod:`rulegauge.corpus.foreign`);
    None when the run has none.
    """

    rel: np.ndarray
    req: np.ndarray
    n_req: np.ndarray
    n_rel: np.ndarray
    first_rel: np.ndarray
    top_score: np.ndarray
    ceiling: np.ndarray
    gain: np.ndarray | None = None
    ideal_gain: np.ndarray | None = None
    judged: np.ndarray | None = None
    n_pages: np.ndarray | None = None
    by_page: np.ndarray | None = None
    foreign: np.ndarray | None = None


@dataclass(frozen=True)
class Candidates:
    """Gold facts of a run's dense candidate columns (Q, U): a question's candidates in
    chunk-id order (the :class:`~rulegauge.fusion.fuse.RankMatrix` row order), padded."""

    page: np.ndarray  # int64 page code, -1 for padding
    rel: np.ndarray  # bool
    req: np.ndarray  # int64 requirement mask
    gain: np.ndarray | None  # float grade; None: binary relevance
    judged: np.ndarray  # bool
    judged_cols: np.ndarray  # (Q, J) columns of each question's judged candidates, -1 padded
    foreign: np.ndarray | None = None  # bool: a foreign hit; None: the run has none

    @cached_property
    def unjudged_col(self) -> np.ndarray:
        """(Q,) a column of each question that is not judged (0 where every column is: then
        ``judged_cols`` has no padding in that row)."""
        out: np.ndarray = np.argmax(~self.judged, axis=1)
        return out

    @cached_property
    def relevant(self) -> RelevantFacts:
        """The relevant columns and the page groups :func:`first_relevant_whole` counts on."""
        return RelevantFacts.of(self.page, self.rel)

    @classmethod
    def build(cls, matrix: RankMatrix, gold: Gold) -> Candidates:
        nq = len(matrix.question_ids)
        counts = np.bincount(matrix.question_index, minlength=nq)
        u = int(counts.max(initial=0)) or 1
        starts = np.r_[0, np.cumsum(counts)[:-1]]
        at = (matrix.question_index, np.arange(len(matrix.question_index)) - starts[matrix.question_index])
        found = lookup(gold, matrix.question_index * gold.n_pages + gold.chunk_page)

        def dense(values: np.ndarray, fill: float) -> np.ndarray:
            out = np.full((nq, u), fill, values.dtype)
            out[at] = values
            return out

        judged = dense(found.judged, False)
        width = max(int(judged.sum(axis=1).max(initial=0)), 1)
        cols = np.argsort(~judged, axis=1, kind="stable")[:, :width]
        cols = np.where(np.take_along_axis(judged, cols, 1), cols, -1)
        return cls(dense(gold.chunk_page, -1), dense(found.rel, False), dense(found.req, 0),
                   None if found.gain is None else dense(found.gain, 0.0), judged, cols,
                   None if gold.chunk_foreign is None else dense(gold.chunk_foreign, False))


class Ordering(Protocol):
    """One config's fused scores over dense candidate columns, and its exact order."""

    @property
    def candidates(self) -> Candidates: ...

    @property
    def scores(self) -> np.ndarray:
        """(Q, U) fused scores; 0.0 exactly where no arm voted (never in a list)."""

    @property
    def tol(self) -> float:
        """Float tolerance below which two scores may be exactly equal."""

    @property
    def ties(self) -> bool:
        """True when keys within ``tol`` are exactly equal scores (their order: by column)."""

    @property
    def ceiling(self) -> float: ...

    def exact(self, rows: np.ndarray, s: np.ndarray, cand: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
        """Candidate columns ``cand`` of ``rows`` (scores ``s``; ``keys``: the keys of ``cand``
        itself, aligned with it, read instead of ``s``) in exact fused order."""

    def top(self, m: int) -> np.ndarray:
        """(Q, M) candidate columns of every question, M >= min(m, U): its M best scores
        (:func:`~rulegauge.fusion.kernel.top_columns`; every column when M = U) in exact fused order. Read only: the
        selection is shared by the metrics and the stored fused rows of a config."""

    def top_score(self, rows: np.ndarray, col: np.ndarray) -> np.ndarray:
        """Fused score of candidate column ``col`` of each of ``rows`` (``scores`` may be
        order keys rather than fused scores: every fusion method but RRF)."""


def page_lists(source: Fused | Ordering, gold: Gold, depth: int, *, whole_list: bool = True,
               judged_only: bool = False, m: int | None = None) -> PageLists:
    """The page lists of every question of ``gold`` to ``depth`` pages, from ``source``.

    ``whole_list=False``: ``first_rel`` is exact only within ``depth`` (inf beyond),
    enough for every metric with a cutoff (fast path only; the full lists always know).
    ``judged_only``: the condensed lists (pages the gold set did not judge removed).
    ``m``: candidates per question on the fast path (default ``depth + 6``)."""
    if isinstance(source, Fused):
        return from_fused(source, gold, depth, judged_only=judged_only)[0]
    return _top_pages(source, gold, depth, m or depth + 6, whole_list=whole_list, judged_only=judged_only)


def page_ranks(fused: Fused, gold: Gold) -> tuple[np.ndarray, np.ndarray]:
    """(page_rank per fused row, True where the row is its page's first chunk)."""
    keys = gold.row_keys(fused.question_index, fused.rows)
    first = np.zeros(len(keys), bool)
    _, first_idx, inverse = np.unique(keys, return_index=True, return_inverse=True)
    first[first_idx] = True
    csum = np.cumsum(first)
    starts = np.r_[0, np.flatnonzero(np.diff(fused.question_index)) + 1] if len(keys) else np.zeros(0, np.int64)
    base = np.repeat(np.r_[0, csum][starts], np.diff(np.r_[starts, len(keys)]))
    rank_at = csum - base  # page rank of each first-occurrence row
    return rank_at[first_idx][inverse], first


def from_fused(fused: Fused, gold: Gold, depth: int, *,
               judged_only: bool = False) -> tuple[PageLists, np.ndarray]:
    """:class:`PageLists` for every question (absent ones stay empty) from full fused
    lists, with the per-row relevance flags (of the rows kept)."""
    if judged_only:
        keep = lookup(gold, gold.row_keys(fused.question_index, fused.rows)).judged
        fused = replace(fused, rows=fused.rows[keep], question_index=fused.question_index[keep],
                        fused_rank=fused.fused_rank[keep], score=fused.score[keep],
                        arms_voted=fused.arms_voted[keep])
    nq = len(gold.questions)
    prank, first = page_ranks(fused, gold)
    found = lookup(gold, gold.row_keys(fused.question_index, fused.rows))
    sel = first & (prank <= depth)
    at = (fused.question_index[sel], prank[sel] - 1)
    rel = np.zeros((nq, depth), bool)
    req = np.zeros((nq, depth), np.int64)
    judged = np.zeros((nq, depth), bool)
    rel[at] = found.rel[sel]
    req[at] = found.req[sel]
    judged[at] = found.judged[sel]
    gain = None
    if found.gain is not None:
        gain = np.zeros((nq, depth))
        gain[at] = found.gain[sel]
    foreign = None
    if gold.chunk_foreign is not None:
        foreign = np.zeros((nq, depth), bool)
        foreign[at] = gold.chunk_foreign[fused.rows][sel]
    first_rel = np.full(nq, np.inf)
    rsel = first & found.rel
    np.minimum.at(first_rel, fused.question_index[rsel], prank[rsel].astype(np.float64))
    top = np.zeros(nq)
    top_sel = fused.fused_rank == 1
    top[fused.question_index[top_sel]] = fused.score[top_sel]
    ceiling = np.full(nq, config_ceiling(fused.config))
    n_pages = np.bincount(fused.question_index[sel], minlength=nq)
    return (PageLists(rel, req, gold.n_req, gold.n_rel, first_rel, top, ceiling, gain, gold.ideal_gain,
                      judged, n_pages, gold.by_page, foreign), found.rel)


def first_pages(pages: np.ndarray) -> np.ndarray:
    """True where a row position holds the first occurrence of its page (pages >= 0)."""
    g, w = pages.shape
    if w == 0:
        return np.zeros(pages.shape, bool)
    big = int(pages.max(initial=0)) + 1
    key = np.where(pages >= 0, pages, big) * w + np.arange(w)[None, :]  # page, then position: one sort
    key.sort(axis=1)
    sp = key // w
    first_sorted = np.ones(pages.shape, bool)
    first_sorted[:, 1:] = sp[:, 1:] != sp[:, :-1]
    first = np.zeros(g * w, bool)
    first[(key % w + (np.arange(g) * w)[:, None]).ravel()] = first_sorted.ravel()
    return first.reshape(g, w) & (pages >= 0)


def _top_pages(o: Ordering, gold: Gold, depth: int, m: int, *, whole_list: bool,
               judged_only: bool) -> PageLists:
    """The fast path (module docstring): first ``depth`` pages, top score, and the exact
    first relevant rank over the whole list (within ``depth`` only without ``whole_list``)."""
    d = o.candidates
    nq, u = d.page.shape
    s, tol = o.scores, o.tol
    allq = np.arange(nq)
    if judged_only:  # the condensed list: every judged candidate (few), unjudged ones never enter
        judged = d.judged_cols >= 0
        cols = np.where(judged, d.judged_cols, d.unjudged_col[:, None])  # padding: a column not judged, keyed 0
        cand = o.exact(allq, s, cols, keys=np.where(judged, along(s, cols), 0.0))
        whole = True  # every candidate of the list is there: no boundary, no question ordered in full
    else:  # at least the m best, in exact order (a wider selection made for the fused rows is reused)
        cand = o.top(m)
        whole = cand.shape[1] >= u
    m = cand.shape[1]
    flat = cand + (allq * u)[:, None]  # one index into every (Q, U) plane
    cs = np.ravel(s).take(flat)
    if judged_only:
        cs = np.where(d.judged.ravel().take(flat), cs, 0.0)
    boundary = np.zeros(nq) if whole else cs.min(axis=1)
    pages = np.where(cs > 0, d.page.ravel().take(flat), -1)
    first = first_pages(pages)
    prank = np.cumsum(first, axis=1)
    keep = first & (prank <= depth)
    last_pos = np.where(keep.any(axis=1), m - 1 - np.argmax(keep[:, ::-1], axis=1), 0)
    last_score = cs[allq, last_pos]
    bad = (boundary > 0) & ((last_score - boundary <= tol) | (prank[:, -1] < depth))
    # the candidates are an exact prefix of the fused list down to keys above the boundary
    relc = d.rel.ravel().take(flat) & first
    rpos = np.argmax(relc, axis=1)
    found = relc.any(axis=1) & ((boundary == 0) | (cs[allq, rpos] - boundary > tol))
    first_rel_rank = np.where(found, prank[allq, rpos].astype(np.float64), np.inf)
    rest = np.flatnonzero(~found) if whole_list and not whole else allq[:0]
    if len(rest):  # beyond the prefix: over the whole list, without ordering it (rulegauge.metrics.first_relevant)
        first_rel_rank[rest] = first_relevant_whole(s, d.rel, d.page, d.relevant, tol, o.exact, ties=o.ties, rows=rest)
    full_rows = np.flatnonzero(bad)
    top = np.where(cs[:, 0] > 0, o.top_score(allq, cand[:, 0]), 0.0)
    n_pages = keep.sum(axis=1)
    at = np.flatnonzero(keep)
    if len(full_rows):
        at = at[~np.isin(at // m, full_rows)]
    to = (at // m) * depth + prank.ravel()[at] - 1  # (question, page rank - 1) of each kept position
    chosen = flat.ravel()[at]
    out = {name: np.zeros((nq, depth), a.dtype) for name, a in
           (("rel", d.rel), ("req", d.req), ("gain", d.gain), ("judged", d.judged), ("foreign", d.foreign))
           if a is not None}
    for name, arr in out.items():
        arr.ravel()[to] = getattr(d, name).ravel().take(chosen)
    if len(full_rows):
        fs = s[full_rows]
        full = o.exact(full_rows, fs, np.tile(np.arange(u), (len(full_rows), 1)))
        fsc = np.take_along_axis(fs, full, 1)
        fp = np.where(fsc > 0, np.take_along_axis(d.page[full_rows], full, 1), -1)
        ffirst = first_pages(fp)
        fprank = np.cumsum(ffirst, axis=1)
        fkeep = ffirst & (fprank <= depth)
        ri, pos = np.nonzero(fkeep)
        for name, arr in out.items():
            arr[full_rows] = 0
            arr[full_rows[ri], fprank[ri, pos] - 1] = np.take_along_axis(
                getattr(d, name)[full_rows], full, 1)[ri, pos]
        hit = ffirst & np.take_along_axis(d.rel[full_rows], full, 1)
        first_rel_rank[full_rows] = np.where(hit.any(axis=1),  # (the same rank as first_relevant_whole's)
                                        np.take_along_axis(fprank, np.argmax(hit, axis=1)[:, None], 1)[:, 0],
                                        np.inf)
        top[full_rows] = np.where(fsc[:, 0] > 0, o.top_score(full_rows, full[:, 0]), 0.0)
        n_pages[full_rows] = fkeep.sum(axis=1)
    if not whole_list:
        first_rel_rank[first_rel_rank > depth] = np.inf
    return PageLists(out["rel"], out["req"], gold.n_req, gold.n_rel, first_rel_rank, top,
                     np.full(nq, o.ceiling), out.get("gain"), gold.ideal_gain, out["judged"], n_pages,
                     gold.by_page, out.get("foreign"))
