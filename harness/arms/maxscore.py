"""Exact top-k of a sum of non-negative term weights, without reading the long postings.

Definition: for a query (term ids per occurrence, in query order) over a weight matrix
``W`` (terms x chunks, CSR, sorted chunk indices, every weight >= 0), the score of chunk
``d`` is ``sum_i W[t_i, d]`` added in query order from 0.0 (the order of
:func:`harness.arms.termdoc.gathered_scores` and of rank-bm25). :func:`candidates`
returns chunks that include every chunk of the top ``depth`` (ties at the cut too) and
their exact scores, reading only the postings of the query's rarer terms.

Method (MaxScore; Turtle & Flood 1995): the terms with at most ``max(depth, share x
chunks)`` chunks are *essential*; the others contribute at most ``U``, the sum of their
largest weights (per occurrence). The partial score ``p(d)`` over essential terms is a
lower bound of the full score (weights >= 0), so ``theta``, the ``depth``-th largest
``p`` over distinct chunks, is a lower bound of the ``depth``-th full score. A chunk with
``p(d) + U < theta`` cannot reach the top ``depth``, and neither can a chunk outside the
essential postings when ``U < theta``. The survivors are scored exactly: each term's
weight looked up in its (sorted) posting, added in query order (an absent term adds
0.0, which leaves a non-negative float unchanged), so the floats equal the full
gather's. Both bounds are widened by a relative 1e-9 so that the rounding of ``p`` and
``U`` (float sums in another order) can never exclude a chunk.

When the bound cannot be shown (no rare term, no common term, fewer than ``depth``
chunks in the essential postings, ``U >= theta``, or negative weights) the function
returns None and the caller scores the query in full.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

SHARE = 0.05
"""Terms in more than this share of the chunks (and more than ``depth``) are not read."""

SLACK = 1e-9
"""Relative widening of the bounds (float sums in other orders round differently)."""


@dataclass(frozen=True)
class Postings:
    """A weight matrix with each term's chunk count and largest weight."""

    weights: sparse.csr_matrix
    df: np.ndarray
    row_max: np.ndarray
    non_negative: bool

    @classmethod
    def of(cls, weights: sparse.csr_matrix) -> Postings:
        df = np.diff(weights.indptr).astype(np.int64)
        row_max = np.zeros(weights.shape[0])
        nz = df > 0
        if nz.any():
            row_max[nz] = np.maximum.reduceat(weights.data, weights.indptr[:-1][nz])
        return cls(weights, df, row_max, bool((weights.data >= 0).all()))


def gather(post: Postings, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Chunk indices and weights of the postings of ``terms``, concatenated in order."""
    w = post.weights
    starts = w.indptr[terms].astype(np.int64)
    lens = w.indptr[terms + 1].astype(np.int64) - starts
    offsets = np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))
    return w.indices[offsets].astype(np.int64), w.data[offsets]


def exact_scores(post: Postings, terms: np.ndarray, chunks: np.ndarray) -> np.ndarray:
    """``sum_i W[terms[i], chunk]`` for each chunk, added in the order of ``terms`` from 0.0."""
    w = post.weights
    total = np.zeros(len(chunks))
    for t in terms.tolist():
        lo, hi = int(w.indptr[t]), int(w.indptr[t + 1])
        if hi == lo:
            continue
        pos = np.minimum(np.searchsorted(w.indices[lo:hi], chunks), hi - lo - 1)
        found = w.indices[lo + pos] == chunks
        total = total + np.where(found, w.data[lo + pos], 0.0)
    return total


def candidates(post: Postings, terms: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``(chunks, exact scores)`` holding the whole top ``depth``, or None (module docstring)."""
    if depth <= 0 or len(terms) == 0 or not post.non_negative:
        return None
    n = int(post.weights.shape[1])
    rare = post.df[terms] <= max(depth, SHARE * n)
    if rare.all() or not rare.any():
        return None
    bound = float(post.row_max[terms[~rare]].sum())
    docs, vals = gather(post, terms[rare])
    uniq, inverse = np.unique(docs, return_inverse=True)
    if len(uniq) < depth:
        return None
    partial = np.bincount(inverse, weights=vals)
    theta = float(np.partition(partial, len(partial) - depth)[len(partial) - depth]) * (1 - SLACK)
    if bound * (1 + SLACK) >= theta:
        return None
    keep = uniq[(partial + bound) * (1 + SLACK) >= theta]
    return keep, exact_scores(post, terms, keep)
