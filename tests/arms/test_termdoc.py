"""Term-document matrices: counts, first-occurrence ids, and the summation order."""

import numpy as np
from scipy import sparse

from harness.arms.termdoc import batch_scores, build, query_matrix


def test_counts_ids_and_lengths():
    tdm = build([["b", "a", "b"], [], ["c", "a"]])
    assert tdm.vocab == {"b": 0, "a": 1, "c": 2}  # first occurrence, never hash order
    assert tdm.counts.toarray().tolist() == [[2, 0, 0], [1, 0, 1], [0, 0, 1]]
    assert tdm.doc_len.tolist() == [3, 0, 2]
    assert tdm.df.tolist() == [1, 2, 1]
    assert tdm.entry_terms().tolist() == [0, 1, 1, 2] and tdm.entry_docs().tolist() == [0, 0, 2, 2]


def test_query_rows_keep_order_and_repeats():
    vocab = {"a": 0, "b": 1, "c": 2}
    m = query_matrix(vocab, [["c", "x", "a", "c"], []], per_occurrence=True)
    assert m.indices.tolist() == [2, 0, 2] and m.indptr.tolist() == [0, 3, 3]
    m = query_matrix(vocab, [["c", "x", "a", "c"]], per_occurrence=False)
    assert m.indices.tolist() == [0, 2]


def test_product_sums_in_query_row_order():
    """(1e16 + 1) - 1e16 = 0 but (1e16 - 1e16) + 1 = 1: the order is the query row's."""
    weights = sparse.csr_matrix(np.array([[1e16], [1.0], [-1e16]]))
    vocab = {"big": 0, "one": 1, "neg": 2}
    rows = query_matrix(vocab, [["big", "one", "neg"], ["big", "neg", "one"], ["one", "big", "neg"]],
                        per_occurrence=True)
    got = {r: (idx.tolist(), vals.tolist()) for r, idx, vals in batch_scores(rows, weights, batch=2)}
    assert got[0] == ([], [])  # exact zero: no stored entry
    assert got[1] == ([0], [1.0])
    assert got[2] == ([], [])
