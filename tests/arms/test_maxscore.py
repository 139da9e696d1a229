"""MaxScore pruning: the same top depth and the same floats as scoring every posting."""

from __future__ import annotations

import numpy as np
import pytest

from harness.arms import bm25 as bm25_module
from harness.arms import maxscore
from harness.arms.base import ArmContext
from harness.arms.bm25 import BM25Arm
from tests.helpers.generated_corpus import generated_corpus, generated_questions
from tests.helpers.lexical_reference import ReferenceBM25


@pytest.fixture(scope="module")
def library():
    corpus, vocab = generated_corpus(seed=21, n_chunks=3000, n_games=6, vocab_size=2500)
    return corpus, generated_questions(seed=22, vocab=vocab, n=150, games=6)


def hits(results):
    return [(r.question_id, r.hits) for r in results]


@pytest.mark.parametrize("depth", [1, 10, 100])
def test_pruned_search_equals_the_full_gather(library, tmp_path, monkeypatch, depth):
    corpus, questions = library
    arm = BM25Arm()
    arm.prepare(corpus, ArmContext(tmp_path))
    used = []

    def counting(post, terms, d):
        out = maxscore.candidates(post, terms, d)
        used.append(out is not None)
        return out

    monkeypatch.setattr(bm25_module, "candidates", counting)
    pruned = arm.search(questions, depth)
    assert any(used)  # the pruned path is taken (and compared below with the full one)
    monkeypatch.setattr(bm25_module, "candidates", lambda post, terms, d: None)
    assert hits(pruned) == hits(arm.search(questions, depth))  # ids, ranks, scores to the bit


def test_pruned_search_equals_rank_bm25(library, tmp_path):
    corpus, questions = library
    arm, ref = BM25Arm(), ReferenceBM25()
    arm.prepare(corpus, ArmContext(tmp_path))
    ref.prepare(corpus)
    few = questions[:25]
    assert hits(arm.search(few, 10)) == hits(ref.search(few, 10))


def test_bounds_refuse_what_they_cannot_show():
    from scipy import sparse

    w = sparse.csr_matrix(np.array([[1.0, 0.0, 2.0, 0.0], [0.5, 0.5, 0.5, 0.5], [-1.0, 0.0, 0.0, 0.0]]))
    post = maxscore.Postings.of(w)
    assert not post.non_negative and maxscore.candidates(post, np.array([0, 1]), 1) is None
    post = maxscore.Postings.of(w[:2])
    assert post.row_max.tolist() == [2.0, 0.5]
    # exact scores add in query order from 0.0; absent terms add nothing
    assert maxscore.exact_scores(post, np.array([0, 1, 0]), np.array([0, 1, 3])).tolist() == [2.5, 0.5, 0.5]
