"""The sparse products the lexical arms computed with scipy before their postings (and before
the core dropped scipy): query rows and ``Q @ W`` by ``scipy.sparse``, kept as references
that the postings and the own CSR build are checked against. Not library code: scipy is a
development dependency.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from scipy import sparse

from rulegauge.arms.termdoc import Csr


def to_scipy(m: Csr) -> sparse.csr_matrix:
    """``m`` as a scipy CSR matrix with the same entries in the same order."""
    return sparse.csr_matrix((m.data, m.indices, m.indptr), shape=m.shape)


def query_matrix(vocab: dict[str, int], queries: Sequence[Sequence[str]], *,
                 per_occurrence: bool) -> sparse.csr_matrix:
    """One row per query over ``vocab`` (terms outside it are dropped), weight 1 per entry.

    ``per_occurrence=True``: an entry per token in query order (duplicates kept, not
    summed); ``False``: one entry per distinct term, ascending term id. The matrix is
    assembled from raw arrays so scipy does not reorder or merge the entries.
    """
    indptr = [0]
    indices: list[int] = []
    for toks in queries:
        ids = [vocab[t] for t in toks if t in vocab]
        if not per_occurrence:
            ids = sorted(set(ids))  # ints: hash order plays no part, and sorted anyway
        indices.extend(ids)
        indptr.append(len(indices))
    m = sparse.csr_matrix((np.ones(len(indices)), np.asarray(indices, dtype=np.int32),
                           np.asarray(indptr, dtype=np.int32)), shape=(len(queries), len(vocab)))
    return m


def batch_scores(queries: sparse.csr_matrix, weights: sparse.csr_matrix | Csr,
                 batch: int = 256) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Yield ``(row, chunk indices, scores)`` per query row of ``queries @ weights``.

    Rows are multiplied ``batch`` at a time to bound memory; only chunks with a
    stored (non-zero) product appear.
    """
    if isinstance(weights, Csr):
        weights = to_scipy(weights)
    for start in range(0, queries.shape[0], batch):
        block = queries[start:start + batch]
        # slicing keeps the entries as stored (no sorting, no merging)
        prod = (block @ weights).tocsr()
        for r in range(prod.shape[0]):
            lo, hi = prod.indptr[r], prod.indptr[r + 1]
            yield start + r, prod.indices[lo:hi], prod.data[lo:hi]
