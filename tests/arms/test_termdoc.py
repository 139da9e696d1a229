"""Term-document matrices: counts, first-occurrence ids, and the summation order; the own CSR
build equals scipy's (scipy is a development dependency, the reference here)."""

import numpy as np
from scipy import sparse

from rulegauge.arms.termdoc import build
from tests.helpers.sparse_reference import batch_scores, query_matrix, to_scipy


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


def build_reference(token_lists):
    """build's vocabulary and counts before 2026-11-30 (a dict.setdefault loop)."""
    vocab, term_ids, lengths = {}, [], []
    for toks in token_lists:
        lengths.append(len(toks))
        term_ids += [vocab.setdefault(t, len(vocab)) for t in toks]
    docs = np.repeat(np.arange(len(lengths)), lengths)
    counts = sparse.coo_matrix((np.ones(len(term_ids)), (term_ids, docs)),
                               shape=(len(vocab), len(lengths))).tocsr()
    return vocab, counts, lengths


def test_build_equals_the_dict_loop_on_seeded_tokens():
    rng = np.random.default_rng(21)
    words = ["nan", "None", "", "é", "e\u0301", "0", "a", "A", "ß", "ss"] + [f"w{i}" for i in range(300)]
    for n_docs in (0, 1, 50, 400):
        lists = [list(rng.choice(words, int(rng.integers(0, 30)))) for _ in range(n_docs)]
        tdm = build(lists)
        vocab, counts, lengths = build_reference(lists)
        assert tdm.vocab == vocab and list(tdm.vocab) == list(vocab)
        assert tdm.doc_len.tolist() == lengths
        ours = to_scipy(tdm.counts)
        assert (ours != counts).nnz == 0 and tdm.counts.shape == counts.shape
        counts.sort_indices()  # scipy's canonical CSR: the same three arrays, entry for entry
        assert tdm.counts.indptr.tolist() == counts.indptr.tolist()
        assert tdm.counts.indices.tolist() == counts.indices.tolist()
        assert tdm.counts.data.tolist() == counts.data.tolist()
