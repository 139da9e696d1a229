"""The exact rank of a question's first relevant page beyond its selected top, without
ordering the question's whole list.

On the fast path (:mod:`rulegauge.metrics.page_lists`) the top ``m`` candidates of each
question are in exact fused order; ``first_rel_rank`` needs the first relevant page even
when it lies beyond them. Its rank is one plus the number of distinct pages whose best
chunk comes before the question's first relevant chunk in exact order, and every
candidate scoring more than the float tolerance ``tol`` above another comes before it
in exact order. With ``t`` the best relevant score, the first relevant chunk in exact
order scores within ``tol`` of ``t``, so:

* a candidate scoring above ``t + tol`` comes before it (no relevant one does);
* a candidate scoring below ``t - tol`` comes after the chunk scoring ``t``, so after it;
* only the candidates within ``tol`` of ``t`` (the *cluster*) need the exact order: when
  all of them are relevant, none is ahead; otherwise the cluster alone is put in exact
  order (``Ordering.exact`` of :mod:`rulegauge.metrics.page_lists` on a few columns) and
  its non-relevant candidates before the first relevant one are ahead too.

Pages, not chunks, are counted: every chunk ahead is not relevant, so its page differs
from the relevant page. The same ranks as ordering the whole list (tested with
deliberate ties, ``tests/metrics/test_first_relevant.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rulegauge.fusion.kernel import row_counts


def first_relevant_ranks(s: np.ndarray, rel: np.ndarray, page: np.ndarray, tol: float,
                         exact: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """(G,) float rank of the first relevant page of each of G questions over its whole
    fused list (module docstring); inf for a question with no listed relevant candidate.

    ``s``/``rel``/``page``: (G, U) order keys (0.0: not listed), relevance and page code
    of the questions' candidate columns; ``exact(i, keys, cand)``: candidate columns
    ``cand`` of questions ``i`` (keys ``keys``) in exact fused order."""
    ahead, listed = ahead_of_first_relevant(s, rel, tol, exact)
    pages = np.where(ahead, page, -1)
    pages.sort(axis=1)
    distinct = ((pages[:, 1:] != pages[:, :-1]) & (pages[:, 1:] >= 0)).sum(axis=1) + (pages[:, 0] >= 0)
    return np.where(listed, distinct + 1.0, np.inf)


def ahead_of_first_relevant(s: np.ndarray, rel: np.ndarray, tol: float,
                            exact: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
                            best: np.ndarray | None = None, *, ties: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """((G, U) True where a candidate comes before the question's first relevant chunk in
    exact order, (G,) True where the question lists a relevant candidate); arguments as
    :func:`first_relevant_ranks` (module docstring); ``best``: the (G,) best key of a listed
    relevant candidate (0.0: none) when the caller has it. ``ties``: keys within ``tol`` are
    exactly equal scores (RRF's denominator bound, ``ConfigScores.ties``), so a cluster is
    in column order and ``exact`` is not needed."""
    if best is None:
        best = np.where(rel & (s > 0), s, 0.0).max(axis=1)
    listed = best > 0
    t = best[:, None]
    ahead: np.ndarray = s > t + tol
    cluster = (np.abs(s - t) <= tol) & (s > 0)  # so rel & cluster: listed relevant candidates
    if ties:  # one exact score in the cluster: ahead are its others before its first relevant column
        first_col = np.argmax(cluster & rel, axis=1)[:, None]
        ahead |= cluster & ~rel & (np.arange(s.shape[1])[None, :] < first_col) & listed[:, None]
        return ahead, listed
    hard = np.flatnonzero((cluster & ~rel).any(axis=1) & listed)
    if len(hard):  # exact order of the cluster alone: its columns first, the others keyed 0 (never listed)
        ch = cluster[hard]
        u = ch.shape[1]
        width = int(ch.sum(axis=1).max())
        cols = np.arange(u)
        cand = np.sort(np.where(ch, cols, u + cols), axis=1)[:, :width] % u  # cluster columns, then others
        sh = np.where(ch, s[hard], 0.0)
        ordered = exact(hard, sh, cand)
        in_cluster = np.take_along_axis(ch, ordered, 1)
        first = np.argmax(np.take_along_axis(rel[hard], ordered, 1) & in_cluster, axis=1)
        before = (np.arange(width)[None, :] < first[:, None]) & in_cluster
        mark = np.zeros(ch.shape, bool)
        np.put_along_axis(mark, ordered, before, 1)
        ahead[hard] |= mark
    return ahead, listed


@dataclass(frozen=True)
class RelevantFacts:
    """What :func:`first_relevant_whole` needs of a run's candidates, whatever the config:
    ``cols`` (Q, R) the columns of each question's relevant candidates (-1 padded) and,
    when some question has two candidates on one page, the candidates grouped by page:
    ``order`` flat (Q * U) indices of the candidates by question, page, column, ``starts``
    where each (question, page) group begins in it, ``qstarts`` (Q + 1,) the first group
    of each question (then the number of groups)."""

    cols: np.ndarray
    order: np.ndarray | None = None
    starts: np.ndarray | None = None
    qstarts: np.ndarray | None = None

    @classmethod
    def of(cls, page: np.ndarray, rel: np.ndarray) -> RelevantFacts:
        """From (Q, U) page codes (-1: padding) and relevance of the candidate columns."""
        nq, u = page.shape
        width = max(int(rel.sum(axis=1).max(initial=0)), 1)
        cols = np.argsort(~rel, axis=1, kind="stable")[:, :width]
        cols = np.where(np.take_along_axis(rel, cols, 1), cols, -1)
        ps = np.sort(page, axis=1)
        if not ((ps[:, 1:] == ps[:, :-1]) & (ps[:, 1:] >= 0)).any():  # one candidate per page
            return cls(cols)
        q, c = np.nonzero(page >= 0)
        o = np.lexsort((c, page[q, c], q))
        q, c = q[o], c[o]
        p = page[q, c]
        starts = np.flatnonzero(np.r_[True, (q[1:] != q[:-1]) | (p[1:] != p[:-1])]) if len(q) else np.zeros(0, np.intp)
        return cls(cols, q * u + c, starts, np.searchsorted(q[starts], np.arange(nq + 1)))

    def rows(self, sel: np.ndarray, u: int) -> RelevantFacts:
        """The facts of questions ``sel`` (ascending) alone, as :meth:`of` gives them for
        those rows of (Q, ``u``) candidates: their groups, renumbered, in the same order."""
        if self.order is None:
            return RelevantFacts(self.cols[sel])
        assert self.starts is not None and self.qstarts is not None
        ends = np.r_[self.starts, len(self.order)]  # where each group begins; then the end
        g0, g1 = self.qstarts[sel], self.qstarts[sel + 1]  # each question's groups
        e0 = ends[g0]
        n_e, n_g = ends[g1] - e0, g1 - g0
        new_e0 = np.r_[0, np.cumsum(n_e)[:-1]]
        idx = np.arange(int(n_e.sum())) + np.repeat(e0 - new_e0, n_e)  # the questions' elements
        order = self.order[idx] % u + np.repeat(np.arange(len(sel)) * u, n_e)
        gidx = np.arange(int(n_g.sum())) + np.repeat(g0 - np.r_[0, np.cumsum(n_g)[:-1]], n_g)
        starts = self.starts[gidx] - np.repeat(e0 - new_e0, n_g)
        return RelevantFacts(self.cols[sel], order, starts, np.r_[0, np.cumsum(n_g)])


def first_relevant_whole(s: np.ndarray, rel: np.ndarray, page: np.ndarray, facts: RelevantFacts, tol: float,
                         exact: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray], *,
                         ties: bool = False, rows: np.ndarray | None = None) -> np.ndarray:
    """:func:`first_relevant_ranks` of every question (arguments as there; ``facts`` of
    the same candidates, which hold the page groups: ``page`` itself is not read),
    counting instead of sorting: with ``t`` the best relevant key, the rank is 1 + the
    distinct pages holding a candidate keyed above ``t + tol`` (module docstring) wherever
    no candidate that is not relevant lies within ``tol`` of ``t``; in the few questions
    where one does, that cluster alone is put in exact order (:func:`ahead_of_first_relevant`).
    The widened bounds (``pad``) only send more questions that way. ``ties`` as
    :func:`ahead_of_first_relevant` says. ``rows``: only these questions (ascending), the
    result in their order; the arrays and ``exact`` stay those of every question."""
    if rows is None:
        return _count_ahead(s, lambda i: rel[i], facts, tol, exact, ties=ties)
    return _count_ahead(s[rows], lambda i: rel[rows[i]], facts.rows(rows, s.shape[1]), tol,
                        lambda i, k, c: exact(rows[i], k, c), ties=ties)


def _count_ahead(s: np.ndarray, rel_of: Callable[[np.ndarray], np.ndarray], facts: RelevantFacts, tol: float,
                 exact: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray], *, ties: bool) -> np.ndarray:
    """:func:`first_relevant_whole` on the rows of ``s`` (``rel_of(i)``: the relevance of rows ``i``)."""
    if s.shape[1] == 0:
        return np.full(len(s), np.inf)
    rc = facts.cols
    rs = np.where(rc >= 0, np.take_along_axis(s, np.maximum(rc, 0), 1), 0.0)  # keys of relevant candidates
    t = rs.max(axis=1)
    listed = t > 0
    pad = tol + 4 * np.finfo(np.float64).eps * t  # the bounds' own rounding widens the cluster, never narrows it
    lo = np.maximum(t - pad, np.nextafter(0.0, 1.0))[:, None]  # > 0: unlisted candidates are never near
    above = s > (t + pad)[:, None]
    n_above = row_counts(above)
    near = row_counts(s >= lo) - n_above  # candidates within tol of t (none relevant above)
    hard = np.flatnonzero(listed & (near > np.count_nonzero(rs >= lo, axis=1)))
    if len(hard):  # a candidate not relevant near t: those questions' clusters in exact order
        above[hard] = ahead_of_first_relevant(s[hard], rel_of(hard), tol, lambda i, k, c: exact(hard[i], k, c),
                                              t[hard], ties=ties)[0]
    if facts.order is None:  # one candidate per page: pages ahead = candidates ahead
        ahead = n_above
        ahead[hard] = row_counts(above[hard])
    else:
        assert facts.starts is not None and facts.qstarts is not None
        hit = np.logical_or.reduceat(above.ravel().take(facts.order), facts.starts) if len(facts.starts) \
            else np.zeros(0, bool)
        csum = np.r_[0, np.cumsum(hit)]
        ahead = csum[facts.qstarts[1:]] - csum[facts.qstarts[:-1]]
    return np.where(listed, ahead + 1.0, np.inf)
