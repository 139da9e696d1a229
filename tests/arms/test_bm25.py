"""The sparse bm25 arm against rank-bm25 (the reference), both ``idf_floor`` modes.

(k1 = 0 is left out: rank-bm25 divides 0 by 0 there for every chunk without the
term, and its scores are NaN.) No tolerance is needed: the arm repeats rank-bm25's floating-point operations in
rank-bm25's order (``math.log`` idfs, the running idf sum in first-occurrence
order, the per-token sum in query order), so scores are equal to the bit and
rankings identical, ties included (both sides break them by chunk id).
"""

import numpy as np
import pytest

from rulegauge.arms import ArmContext, load_builtin_arms
from rulegauge.arms.bm25 import BM25Arm
from rulegauge.goldset.records import Question
from tests.helpers.generated_corpus import generated_corpus, generated_questions
from tests.helpers.lexical_reference import ReferenceBM25, outputs_across_hash_seeds

load_builtin_arms()


def hits(results):
    return [(r.question_id, r.hits) for r in results]


@pytest.fixture(scope="module")
def generated():
    corpus, vocab = generated_corpus(seed=7, n_chunks=700, vocab_size=1500)
    return corpus, generated_questions(seed=8, vocab=vocab, n=80)


@pytest.mark.parametrize("idf_floor", ["epsilon", "rank_bm25"])
@pytest.mark.parametrize("params", [{}, {"k1": 1.2, "b": 0.5, "epsilon": 0.5}, {"k1": 0.3, "b": 0.0}])
def test_rankings_and_scores_identical_to_rank_bm25(generated, tmp_path, idf_floor, params):
    corpus, questions = generated
    arm = BM25Arm(idf_floor=idf_floor, **params)
    arm.prepare(corpus, ArmContext(tmp_path))
    ref = ReferenceBM25(idf_floor=idf_floor, **params)
    ref.prepare(corpus)
    if idf_floor == "epsilon":
        assert arm.floored_terms == ref.floored_terms > 0
    for term, value in ref.bm25.idf.items():
        assert arm.idf(term) == value, term
    assert hits(arm.search(questions, 10)) == hits(ref.search(questions, 10))
    full = arm.search(questions, len(corpus.chunks))
    assert hits(full) == hits(ref.search(questions, len(corpus.chunks)))
    # every positive rank-bm25 score, to the bit
    index = {c.chunk_id: i for i, c in enumerate(corpus.chunks)}
    for q, res in zip(questions, full, strict=True):
        expect = ref.scores(q)
        got = np.zeros(len(corpus.chunks))
        for h in res.hits:
            got[index[h.chunk_id]] = h.score
        np.testing.assert_array_equal(got, np.where(expect > 0, expect, 0.0))


def test_ties_and_repeated_terms_match_rank_bm25(tmp_path):
    from tests.helpers.common import make_tiny_corpus

    corpus = make_tiny_corpus()
    arm, ref = BM25Arm(), ReferenceBM25()
    arm.prepare(corpus, ArmContext(tmp_path))
    ref.prepare(corpus)
    qs = [Question("a", "boat boat lantern boat harbour", "en", ()),
          Question("b", "lantern lantern", "en", ()), Question("c", "nothing here", "en", ())]
    assert hits(arm.search(qs, 10)) == hits(ref.search(qs, 10))


def test_stemmed_per_language(tmp_path):
    from rulegauge.corpus.records import Chunk, Document, Page, chunk_key, make_corpus

    docs = [Document("en", "rulebook", "G", "1", "en", "en"), Document("de", "rulebook", "G", "1", "de", "de")]
    texts = {("en", 1): "Players draw cards; each player draws two cards.",
             ("en", 2): "The drawing player scores.", ("de", 1): "Die Spieler ziehen Karten.",
             ("de", 2): "Jeder Spieler zieht zwei Karten und spielt."}
    corpus = make_corpus(docs, [Page(d, p, t) for (d, p), t in texts.items()],
                         [Chunk(chunk_key(d, p, 0), d, p, (), t, 0, len(t)) for (d, p), t in texts.items()])
    arm, ref = BM25Arm(stem=True), ReferenceBM25(stem=True)
    arm.prepare(corpus, ArmContext(tmp_path))
    ref.prepare(corpus)
    qs = [Question("e", "How many cards does a player draw?", "en", ()),
          Question("d", "Wie viele Karten zieht ein Spieler?", "de", ())]
    got = arm.search(qs, 10)
    assert hits(got) == hits(ref.search(qs, 10))
    assert got[0].hits and got[1].hits


def test_empty_results_say_why(tmp_path, tiny_corpus):
    arm = BM25Arm()
    arm.prepare(tiny_corpus, ArmContext(tmp_path))
    [res] = arm.search([Question("x", "zebra quokka", "en", ())], 10)
    assert res.hits == () and res.empty_reason == "no query term occurs in the corpus"


@pytest.mark.shared
@pytest.mark.parametrize("idf_floor", ["epsilon", "rank_bm25"])
def test_real_gold_set_identical_to_rank_bm25(tmp_path, idf_floor):
    """Secret Hitler (../shared): top 100 of every question, to the bit."""
    from rulegauge.corpus.chunking import ChunkingOptions, build_corpus
    from rulegauge.goldset.parse import load_goldset
    from tests.helpers.common import SHARED

    path = SHARED / "goldsets" / "secret-hitler.yaml"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    gs = load_goldset(path)
    corpus = build_corpus(gs.documents, ChunkingOptions())
    arm, ref = BM25Arm(idf_floor=idf_floor), ReferenceBM25(idf_floor=idf_floor)
    arm.prepare(corpus, ArmContext(tmp_path))
    ref.prepare(corpus)
    assert hits(arm.search(gs.questions, 100)) == hits(ref.search(gs.questions, 100))


def test_a_question_does_not_depend_on_its_batch(generated, tmp_path):
    """Each question alone, all together, and in shuffled batches: the same hits, every bit."""
    corpus, questions = generated
    arm = BM25Arm()
    arm.prepare(corpus, ArmContext(tmp_path))
    together = {r.question_id: r for r in arm.search(questions, 25)}
    for q in questions[:20]:
        assert arm.search([q], 25) == [together[q.question_id]]
    shuffled = list(reversed(questions))
    for start in range(0, len(shuffled), 7):
        for r in arm.search(shuffled[start:start + 7], 25):
            assert r == together[r.question_id]
    assert arm.search([], 25) == []


_SCRIPT = """
import hashlib, sys
sys.path.insert(0, {repo!r})
from rulegauge.arms import ArmContext
from rulegauge.arms.bm25 import BM25Arm
from tests.helpers.generated_corpus import generated_corpus, generated_questions
corpus, vocab = generated_corpus(seed=13, n_chunks=900, vocab_size=1500)
questions = generated_questions(seed=14, vocab=vocab, n=120)
out = []
for floor in ("epsilon", "rank_bm25"):
    arm = BM25Arm(idf_floor=floor)
    arm.prepare(corpus, ArmContext("."))
    res = arm.search(questions, 100)
    out.append(hashlib.sha256(repr([(r.question_id, r.hits, r.empty_reason) for r in res]).encode()).hexdigest())
print(" ".join(out))
"""


def test_bit_identical_across_hash_seeds():
    """Two processes with different PYTHONHASHSEED: hits (scores as repr: every bit) agree."""
    first, second = outputs_across_hash_seeds(_SCRIPT)
    assert first == second and len(first) == 2
