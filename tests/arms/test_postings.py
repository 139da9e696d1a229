"""Postings: exact per-question sums in query order, and the exact top ``depth``.

Oracles: a Python loop adding each query token's weight per chunk in query order (the
order rank-bm25 adds), and :func:`rulegauge.core.ordering.order` over every positive score.
Weights are drawn from a few inexact values so sums depend on their order and scores tie.
"""

import math

import numpy as np
import pytest
from scipy import sparse

from rulegauge.arms.postings import Postings, build_postings
from rulegauge.arms.termdoc import Csr
from rulegauge.core.ordering import order


def test_add_at_accumulates_in_array_order() -> None:
    """The scorer relies on np.add.at adding repeated indices one after another, in order."""
    values = np.array([1e16, 1.0, -1e16, 0.1, 0.2])
    idx = np.zeros(len(values), dtype=np.intp)
    got = np.zeros(1)
    np.add.at(got, idx, values)
    want = 0.0
    for v in values.tolist():
        want += v
    assert got[0] == want == 0.30000000000000004  # in order: 1.0 is lost to 1e16
    assert math.fsum(values.tolist()) == 1.3  # the exact sum: another order differs


def _corpus(seed: int, n_docs: int = 400, n_terms: int = 40):
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n_terms + 1)
    dense = (rng.random((n_terms, n_docs)) < (p / p.max())[:, None] * 0.9).astype(float)
    values = np.array([0.1, 0.7, np.pi / 3, 1.3, 2.2])
    weights = sparse.csr_matrix(dense * rng.choice(values, size=dense.shape))
    weights.sort_indices()
    ids = [f"c{int(i):04d}" for i in rng.permutation(n_docs)]  # corpus order is not id order
    return rng, weights, ids


def _csr(weights: sparse.csr_matrix) -> Csr:
    return Csr(weights.indptr.astype(np.int64), weights.indices.astype(np.int64), weights.data, weights.shape)


def _reference(weights: sparse.csr_matrix, terms: list[int]) -> np.ndarray:
    rows = weights.toarray()
    out = [0.0] * weights.shape[1]
    for t in terms:  # query order, every chunk, as rank-bm25's get_scores
        for d in range(weights.shape[1]):
            out[d] += rows[t, d]
    return np.array(out)


@pytest.mark.parametrize("dense_share", [0.0, 0.2, 1.1])
def test_scores_and_top_equal_the_oracles(dense_share: float) -> None:
    rng, weights, ids = _corpus(3)
    postings, row_of_number = build_postings(_csr(weights), ids, dense_share=dense_share)
    by_number = np.asarray(ids, dtype=object)[row_of_number]
    assert by_number.tolist() == sorted(ids)
    assert postings.n_dense == (0 if dense_share > 1 else int((np.diff(weights.indptr) >= dense_share * 400).sum()))
    number = {c: i for i, c in enumerate(by_number.tolist())}
    buf = np.empty(postings.n_docs)
    for _ in range(60):
        terms = rng.integers(0, 40, size=int(rng.integers(1, 9))).tolist()  # repeats allowed
        want = _reference(weights, terms)  # in corpus order
        got = postings.accumulate(buf, terms)
        np.testing.assert_array_equal(got[[number[c] for c in ids]], want)
        for depth in (1, 7, 50, 400):
            rows, vals = postings.top(got, terms, depth)
            pos = np.flatnonzero(want > 0)
            best = pos[order(want[pos], [ids[i] for i in pos])][:depth]
            assert by_number[rows].tolist() == [ids[i] for i in best]
            np.testing.assert_array_equal(vals, want[best])


def test_top_without_terms_or_depth_is_empty() -> None:
    _, weights, ids = _corpus(5)
    postings, _ = build_postings(_csr(weights), ids)
    buf = postings.accumulate(np.empty(postings.n_docs), [0])
    assert len(postings.top(buf, [], 10)[0]) == 0 and len(postings.top(buf, [0], 0)[0]) == 0


def test_postings_ascend_in_chunk_id_order() -> None:
    _, weights, ids = _corpus(6)
    postings, row_of_number = build_postings(_csr(weights), ids)
    by_number = np.asarray(ids, dtype=object)[row_of_number]
    for t in range(weights.shape[0]):
        docs = postings.docs[postings.indptr[t]:postings.indptr[t + 1]]
        assert np.all(np.diff(docs) > 0)
        assert sorted(by_number[docs].tolist()) == sorted(ids[i] for i in weights[t].indices)
    assert isinstance(postings, Postings) and postings.docs.dtype == np.intp
