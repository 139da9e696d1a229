"""Term-document matrices for the lexical arms (``bm25``, ``boost``).

:func:`build` turns tokenised chunks into a :class:`TermDocMatrix`: a vocabulary
and a CSR matrix (:class:`Csr`) of term counts, one row per term and one column
per chunk, built once per corpus. An arm turns the counts into per-(term, chunk)
weights (bm25's saturated tf x idf, boost's idf, :meth:`TermDocMatrix.with_data`) and
keeps them as postings (:mod:`rulegauge.arms.postings`), which score a question in the
summed posting lengths of its terms instead of a pass over every chunk in Python.

Why a record of three numpy arrays and not ``scipy.sparse``: the arms only build the
matrix (sort the (term, chunk) pairs, count duplicates) and read its rows; no sparse
algebra runs on the search path. scipy would be the core install's largest package
(143 MB of a gate's site-packages) for that: :class:`Csr` is the same layout
(``indptr``, ``indices``, ``data``), and ``tests/arms/test_termdoc.py`` checks it equal to
scipy's ``coo_matrix(...).tocsr()`` (scipy is a development dependency).

Determinism (the reason this module exists besides speed). Term ids are given in
order of first occurrence in the corpus (chunk order, then token order), a function
of the corpus alone, never of hash order; each term's entries are in ascending chunk
order; so a run gives the same bits in every process whatever ``PYTHONHASHSEED`` is.

Reference: Manning, Raghavan & Schütze, *Introduction to Information Retrieval*
(2008), ch. 6 (term-document matrices, scoring by sparse products).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Csr:
    """A compressed sparse row matrix: row ``r``'s entries are ``indices[indptr[r]:indptr[r + 1]]``
    (column numbers, int64) with values ``data[...]`` (float64); ``shape`` is (rows, columns).

    The layout of ``scipy.sparse.csr_matrix`` (same three arrays), without the algebra.
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, int]

    def toarray(self) -> np.ndarray:
        """The dense matrix (tests and small inputs)."""
        out = np.zeros(self.shape)
        rows = np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr))
        out[rows, self.indices] = self.data
        return out


@dataclass(frozen=True)
class TermDocMatrix:
    """Vocabulary (term -> id, ids by first occurrence) and counts (terms x chunks).

    ``counts`` is CSR with ascending column (chunk) indices per row and float64 counts;
    ``doc_len`` is each chunk's token count; ``df`` each term's chunk count.
    """

    vocab: dict[str, int]
    counts: Csr
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

    def with_data(self, data: np.ndarray) -> Csr:
        """The same sparsity pattern with ``data`` as the entries (weights)."""
        c = self.counts
        values = np.asarray(data, dtype=np.float64)
        if values.shape != c.data.shape:
            raise ValueError(f"with_data: {values.shape} values for {c.data.shape} entries")
        return Csr(c.indptr, c.indices, values, c.shape)


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
    n_terms, n_docs = len(vocab), len(lengths)
    # one key per (term, chunk) pair, term-major: np.unique sorts the keys and counts the
    # repeats (exact: small integers), which is the CSR order (terms, then ascending chunks)
    keys, tf = np.unique(terms * max(n_docs, 1) + docs, return_counts=True)
    rows, cols = np.divmod(keys, max(n_docs, 1))
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_terms), out=indptr[1:])
    counts = Csr(indptr, cols.astype(np.int64), tf.astype(np.float64), (n_terms, n_docs))
    return TermDocMatrix(vocab, counts, doc_len)
