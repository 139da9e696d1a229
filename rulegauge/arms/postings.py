"""Exact per-question sums of precomputed term weights, and their exact top ``depth``.

Definition. :class:`Postings` holds, per term, the chunks that contain it and the term's
weight in each (``bm25``: idf x saturated tf, computed once in ``prepare``: eager scoring,
as bm25s does). Chunks are *numbered in chunk-id order* (:func:`build_postings`), so a
smaller chunk number is a smaller chunk id and a term's postings are ascending in both.
A question's score of chunk ``d`` is the float sum, starting from 0.0 and in the order of
the question's tokens (a token twice counts twice), of the weights of the tokens found in
``d``: :meth:`Postings.accumulate` adds the tokens one after another into one array of
every chunk, with ``np.add.at`` over the token's postings (a view of the stored arrays: no
copy, no gather), or, for the commonest terms (in at least :data:`DENSE_SHARE` of the
chunks), by adding the term's dense row (its weight per chunk, 0.0 where absent; ``x + 0.0
== x``). Per chunk that is the order rank-bm25's ``get_scores`` adds (a term absent from
a chunk adds 0.0 there), so the scores equal its scores to the bit, whatever the batch,
and no hash order enters (``tests/arms/test_postings.py`` pins ``np.add.at``'s in-order
accumulation).

:meth:`Postings.top` returns the ``depth`` best chunks with a positive score, ordered by
score descending, then chunk id ascending (the rule of :mod:`rulegauge.core.ordering`: chunk
numbers are id ranks, so a stable sort by score keeps equal scores in id order), every tie
at the cut considered. It reads the score array twice and never sorts it: a lower bound of
the ``depth``-th score is the ``depth``-th best score among the chunks of the rarest query
term found in at least ``depth`` chunks (distinct chunks, so ``depth`` chunks score that
much); only the chunks at or above it are cut and ordered.

Why this shape (measured, ``benchmarks/bench_bm25.py``): a batch of questions scored in
one ``np.bincount`` over (question, chunk) cells writes a few MB at random and is bound by
cache misses (about 20 ns per posting at 50k chunks); one question's array stays in the
L2 cache, ``np.add.at`` adds a posting in about 2 ns and a dense row costs less than
``np.add.at`` over a posting list of more than about a fifth of the chunks. The score
array is allocated once per :meth:`~rulegauge.arms.bm25.BM25Arm.search` call (a fresh
``np.zeros`` per question costs more than the scoring: page faults), so concurrent
searches (``rulegauge serve-search``) never share it.

numpy detail: ``np.add.at`` takes a fast loop only when the operands' dtypes are the
canonical ``float64`` / ``intp`` instances; an equal but distinct dtype instance (an
unpickled array) falls back to a loop about 50x slower with the same floats. The arrays
here are always made by ``astype`` (canonical).

Reference: Robertson & Zaragoza, *The Probabilistic Relevance Framework: BM25 and
Beyond* (2009); Lù, *BM25S: Orders of magnitude faster lexical search via eager sparse
scoring* (2024), for precomputing the weights.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rulegauge.arms.termdoc import Csr

DENSE_SHARE = 0.2
"""A term in at least this share of the chunks is added as a dense row (measured break-even)."""

_SORT_ALL = 2
"""Up to this many times ``depth`` candidates are sorted whole; more are cut by a partition first."""
_BOUND_FROM = 16
"""The lower bound of the ``depth``-th score reads at most about this many times ``depth`` scores."""
_EMPTY_ROWS = np.zeros(0, dtype=np.int64)
_EMPTY_SCORES = np.zeros(0, dtype=np.float64)


class Postings:
    """Terms x chunks weights as postings (CSR rows: ``indptr``, ``docs``, ``weights``),
    chunks numbered in chunk-id order, plus dense rows of the commonest terms.

    Read-only after :func:`build_postings`; it holds no per-question state.
    """

    __slots__ = ("_dense", "_df", "_indptr", "_slot", "docs", "indptr", "n_docs", "weights")

    def __init__(self, indptr: np.ndarray, docs: np.ndarray, weights: np.ndarray, n_docs: int,
                 dense_share: float = DENSE_SHARE) -> None:
        self.indptr = np.asarray(indptr).astype(np.int64)
        self.docs = np.asarray(docs).astype(np.intp)  # intp and float64: np.add.at's fast loop
        self.weights = np.asarray(weights).astype(np.float64)
        self.n_docs = int(n_docs)
        df = np.diff(self.indptr)
        common = np.flatnonzero(df >= max(1.0, dense_share * self.n_docs))
        dense = np.zeros((len(common), self.n_docs))
        slot = np.full(len(df), -1, dtype=np.int64)
        for k, t in enumerate(common.tolist()):
            lo, hi = self.indptr[t], self.indptr[t + 1]
            dense[k, self.docs[lo:hi]] = self.weights[lo:hi]
            slot[t] = k
        self._dense = dense
        # Python lists: a question reads a few entries each, faster than numpy scalars
        self._slot: list[int] = slot.tolist()
        self._indptr: list[int] = self.indptr.tolist()
        self._df: list[int] = df.tolist()

    @property
    def n_dense(self) -> int:
        """How many terms are stored as dense rows."""
        return int(self._dense.shape[0])

    def accumulate(self, out: np.ndarray, terms: Sequence[int]) -> np.ndarray:
        """Write the scores of the question with token ids ``terms`` (query order) into
        ``out`` (float64, one entry per chunk) and return it (module docstring)."""
        fresh = True
        for t in terms:
            k = self._slot[t]
            if k >= 0:
                if fresh:  # 0.0 + w == w for every chunk: the first row is copied, not added
                    np.copyto(out, self._dense[k])
                else:
                    np.add(out, self._dense[k], out=out)
            else:
                if fresh:
                    out.fill(0.0)
                lo, hi = self._indptr[t], self._indptr[t + 1]
                np.add.at(out, self.docs[lo:hi], self.weights[lo:hi])
            fresh = False
        if fresh:
            out.fill(0.0)
        return out

    def top(self, scores: np.ndarray, terms: Sequence[int], depth: int) -> tuple[np.ndarray, np.ndarray]:
        """``(chunk numbers, scores)`` of the best ``depth`` chunks with a positive score in
        ``scores`` (the question's :meth:`accumulate`), score descending then chunk id
        ascending."""
        if depth <= 0 or not terms:
            return _EMPTY_ROWS, _EMPTY_SCORES
        best, best_df = -1, self.n_docs + 1
        for t in terms:  # the rarest term in at least ``depth`` chunks
            d = self._df[t]
            if depth <= d < best_df:
                best, best_df = t, d
        kth = 0.0
        if best >= 0:
            # any >= depth of its chunks give a lower bound: at most _BOUND_FROM x depth of
            # them (evenly spaced) keep the partition small for a common term
            lo, step = self._indptr[best], max(1, best_df // (_BOUND_FROM * depth))
            posting = scores[self.docs[lo:lo + best_df:step]]  # a copy: partitioned in place
            posting.partition(len(posting) - depth)
            kth = float(posting[len(posting) - depth])
        rows = np.flatnonzero(scores >= kth) if kth > 0 else np.flatnonzero(scores > 0)
        vals = scores[rows]
        if len(rows) > _SORT_ALL * depth:  # keep the best ``depth`` and every tie with the last
            cut = np.partition(vals, len(vals) - depth)[len(vals) - depth]
            keep = vals >= cut
            rows, vals = rows[keep], vals[keep]
        # rows ascend in chunk number = chunk id, so a stable sort by score descending is
        # rulegauge.core.ordering's order (score desc, then id asc); every tie at the cut is in
        order = np.argsort(-vals, kind="stable")[:depth]
        return rows[order], vals[order]


def build_postings(weights: Csr, chunk_ids: Sequence[str],
                   dense_share: float = DENSE_SHARE) -> tuple[Postings, np.ndarray]:
    """:class:`Postings` of ``weights`` (terms x chunks, chunks in ``chunk_ids`` order) with
    chunks renumbered in chunk-id order (code points, as :mod:`rulegauge.core.ordering`), and
    each chunk number's position in ``chunk_ids`` (int64: chunk number -> corpus row)."""
    order = np.argsort(np.asarray(chunk_ids, dtype=str), kind="stable")
    number = np.empty(len(order), dtype=np.int64)
    number[order] = np.arange(len(order), dtype=np.int64)
    n_terms, n_docs = weights.shape
    docs = number[weights.indices]
    rows = np.repeat(np.arange(n_terms, dtype=np.int64), np.diff(weights.indptr))
    # per term, ascending chunk number (weights move with their chunks); a row holds a
    # chunk once, so the keys are distinct and the order is total
    by = np.argsort(rows * max(n_docs, 1) + docs, kind="stable")
    return (Postings(weights.indptr, docs[by], weights.data[by], n_docs, dense_share),
            order.astype(np.int64))
