"""Term-document matrices for the lexical arms (``bm25``, ``boost``).

:func:`build` turns tokenised chunks into a :class:`TermDocMatrix`: a vocabulary
and a ``scipy.sparse`` CSR matrix of term counts, one row per term and one column
per chunk, built once per corpus. An arm turns the counts into per-(term, chunk)
weights (bm25's saturated tf x idf, boost's idf); ``boost`` scores a batch of
questions in one sparse product ``Q @ W`` (:func:`query_matrix`, :func:`batch_scores`),
which costs the summed posting lengths of the query terms instead of a pass over every
chunk in Python; ``bm25`` keeps its weights as postings (:mod:`rulegauge.arms.postings`).

Determinism (the reason this module exists besides speed). Term ids are given in
order of first occurrence in the corpus (chunk order, then token order), a function
of the corpus alone, never of hash order. scipy's CSR x CSR product
(``csr_matmat``) accumulates each output cell in the order of the query row's
stored entries, so a chunk's score is the float sum of its terms' weights in the
order of the query row: :func:`query_matrix` stores a row either in query token
order with one entry per occurrence (``per_occurrence=True``: the order rank-bm25's
``get_scores`` adds terms, so scores match it to the bit) or once per distinct term
in ascending term id (``per_occurrence=False``). Both orders are fixed by the text,
so a run gives the same bits in every process whatever ``PYTHONHASHSEED`` is.
``tests/arms/test_termdoc.py`` pins the accumulation order, so a scipy that
canonicalised (summed, sorted) the query rows before multiplying would fail there.

Reference: Manning, Raghavan & Schütze, *Introduction to Information Retrieval*
(2008), ch. 6 (term-document matrices, scoring by sparse products).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse


@dataclass(frozen=True)
class TermDocMatrix:
    """Vocabulary (term -> id, ids by first occurrence) and counts (terms x chunks).

    ``counts`` is CSR with sorted column (chunk) indices per row and float64 counts;
    ``doc_len`` is each chunk's token count; ``df`` each term's chunk count.
    """

    vocab: dict[str, int]
    counts: sparse.csr_matrix
    doc_len: np.ndarray

    @property
    def n_docs(self) -> int:
        return int(self.counts.shape[1])

    @property
    def n_terms(self) -> int:
        return int(self.counts.shape[0])

    @property
    def df(self) -> np.ndarray:
        return np.asarray(np.diff(self.counts.indptr), dtype=np.int64)

    def entry_terms(self) -> np.ndarray:
        """Term id of every stored entry (aligned with ``counts.data``)."""
        return np.repeat(np.arange(self.n_terms, dtype=np.int64), np.asarray(np.diff(self.counts.indptr)))

    def entry_docs(self) -> np.ndarray:
        """Chunk index of every stored entry (aligned with ``counts.data``)."""
        return np.asarray(self.counts.indices, dtype=np.int64)

    def with_data(self, data: np.ndarray) -> sparse.csr_matrix:
        """The same sparsity pattern with ``data`` as the entries (weights)."""
        c = self.counts
        return sparse.csr_matrix((np.asarray(data, dtype=np.float64), c.indices, c.indptr),
                                 shape=c.shape)


def build(token_lists: Iterable[Sequence[str]]) -> TermDocMatrix:
    """Count terms per chunk; term ids in order of first occurrence."""
    tokens: list[str] = []
    lengths: list[int] = []
    for toks in token_lists:
        lengths.append(len(toks))
        tokens.extend(toks)
    # one hash pass in C: codes in order of first occurrence, as a dict.setdefault loop
    # would give them (that loop cost seconds per million tokens)
    codes, uniques = pd.factorize(np.asarray(tokens, dtype=object), sort=False)
    vocab = {t: i for i, t in enumerate(uniques.tolist())}
    doc_len = np.asarray(lengths, dtype=np.int64)
    docs = np.repeat(np.arange(len(lengths), dtype=np.int64), doc_len)
    terms = np.asarray(codes, dtype=np.int64)
    coo = sparse.coo_matrix((np.ones(len(terms)), (terms, docs)), shape=(len(vocab), len(lengths)))
    counts = coo.tocsr()  # sums duplicates (exact: small integers)
    counts.sum_duplicates()
    counts.sort_indices()
    return TermDocMatrix(vocab, counts, doc_len)


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


def batch_scores(queries: sparse.csr_matrix, weights: sparse.csr_matrix,
                 batch: int = 256) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Yield ``(row, chunk indices, scores)`` per query row of ``queries @ weights``.

    Rows are multiplied ``batch`` at a time to bound memory; only chunks with a
    stored (non-zero) product appear.
    """
    for start in range(0, queries.shape[0], batch):
        block = queries[start:start + batch]
        # slicing keeps the entries as stored (no sorting, no merging)
        prod = (block @ weights).tocsr()
        for r in range(prod.shape[0]):
            lo, hi = prod.indptr[r], prod.indptr[r + 1]
            yield start + r, prod.indices[lo:hi], prod.data[lo:hi]
