"""The bm25 arm's ``lucene`` preset against bm25s's ``method="lucene"`` (the oracle).

bm25s indexes the token lists of the preset's own analyzer (``lucene_english``), so the
two sides see the same terms and differ only in scoring. With ``dtype="float64"`` bm25s
does the arm's floating-point operations in the arm's order, so every score is equal to
the bit and every ranking identical, ties by chunk id (bm25s leaves ties in any order:
its full score array is sorted here by score descending, then chunk id). Against bm25s's
default float32 the scores agree to float32 precision.
"""

import math

import numpy as np
import pytest

from rulegauge.arms import ArmContext, load_builtin_arms
from rulegauge.arms.analyzers import lucene_english
from rulegauge.arms.bm25 import BM25Arm
from rulegauge.core.errors import ConfigError
from rulegauge.corpus.records import Chunk, Document, DocumentSpec, Page, chunk_key, make_corpus
from tests.helpers.common import SHARED, q
from tests.helpers.generated_corpus import generated_corpus, generated_questions

bm25s = pytest.importorskip("bm25s", reason="bm25s (a dev dependency) is the oracle")
load_builtin_arms()


class Bm25sLucene:
    """bm25s's lucene method over the analyzer's tokens of every chunk, in corpus order."""

    def __init__(self, corpus, k1=0.9, b=0.4, dtype="float64"):
        self.analyze = lucene_english()
        self.ids = [c.chunk_id for c in corpus.chunks]
        self.model = bm25s.BM25(k1=k1, b=b, method="lucene", dtype=dtype)
        self.model.index([self.analyze(c.text) for c in corpus.chunks], show_progress=False)

    def scores(self, question):
        ids = self.model.get_tokens_ids(self.analyze(question.question))
        if not ids:
            return np.zeros(len(self.ids))
        return np.asarray(self.model.get_scores(ids), dtype=np.float64)

    def ranking(self, question, depth):
        s = self.scores(question)
        order = sorted((i for i in range(len(s)) if s[i] > 0), key=lambda i: (-s[i], self.ids[i]))
        return [(self.ids[i], float(s[i])) for i in order[:depth]]


def arm_ranking(arm, questions, depth):
    return [[(h.chunk_id, h.score) for h in r.hits] for r in arm.search(questions, depth)]


def check_equal(corpus, questions, tmp_path, depth=100, **params):
    arm = BM25Arm(preset="lucene", **params)
    arm.prepare(corpus, ArmContext(tmp_path))
    ref = Bm25sLucene(corpus, **params)
    got = arm_ranking(arm, questions, depth)
    want = [ref.ranking(question, depth) for question in questions]
    assert got == want  # ids, order and every float
    assert sum(map(len, got)) > 0
    return arm


@pytest.fixture(scope="module")
def generated():
    corpus, vocab = generated_corpus(seed=11, n_chunks=600, vocab_size=1200)
    return corpus, generated_questions(seed=12, vocab=vocab, n=60)


@pytest.mark.parametrize("params", [{}, {"k1": 1.2, "b": 0.75}, {"k1": 0.5, "b": 0.0}])
def test_scores_and_rankings_equal_bm25s_lucene_to_the_bit(generated, tmp_path, params):
    corpus, questions = generated
    check_equal(corpus, questions, tmp_path, **params)
    check_equal(corpus, questions, tmp_path, depth=len(corpus.chunks), **params)


def test_idf_is_lucenes_and_never_floored(generated, tmp_path):
    corpus, _ = generated
    arm = BM25Arm(preset="lucene")
    arm.prepare(corpus, ArmContext(tmp_path))
    n = len(corpus.chunks)
    analyze = lucene_english()
    df: dict[str, int] = {}
    for c in corpus.chunks:
        for t in set(analyze(c.text)):
            df[t] = df.get(t, 0) + 1
    for term, f in list(df.items())[:200]:
        assert arm.idf(term) == math.log(1 + (n - f + 0.5) / (f + 0.5)) > 0
    assert arm.floored_terms == 0
    d = arm.describe()
    assert (d["preset"], d["k1"], d["b"], d["stemmer"], d["stopwords"]) == ("lucene", 0.9, 0.4, "porter", 33)


def test_float32_bm25s_agrees_to_float32_precision(generated, tmp_path):
    corpus, questions = generated
    arm = BM25Arm(preset="lucene")
    arm.prepare(corpus, ArmContext(tmp_path))
    ref = Bm25sLucene(corpus, dtype="float32")
    index = {c.chunk_id: i for i, c in enumerate(corpus.chunks)}
    for question, res in zip(questions, arm.search(questions, len(corpus.chunks)), strict=True):
        got = np.zeros(len(corpus.chunks))
        for h in res.hits:
            got[index[h.chunk_id]] = h.score
        np.testing.assert_allclose(got, ref.scores(question), rtol=2e-6, atol=1e-6)


def test_ties_empty_chunks_stop_words_and_possessives(tmp_path):
    """Two equal chunks tie and come by chunk id; a chunk of stop words has length 0 and
    counts in N and avgdl as in bm25s; a stop-word-only question finds nothing."""
    texts = {("a", 1): "The harbour's lanterns are lit.", ("a", 2): "and the of it is",
             ("b", 1): "Boats move two harbour spaces.", ("c", 1): "Boats move two harbour spaces.",
             ("c", 2): "A lantern lights the harbour at night; harbours glow."}
    docs = [Document(d, "rulebook", "G", "1", "en", d) for d in "abc"]
    corpus = make_corpus(docs, [Page(d, p, t) for (d, p), t in texts.items()],
                         [Chunk(chunk_key(d, p, 0), d, p, (), t, 0, len(t)) for (d, p), t in texts.items()])
    questions = [q("lantern", "The player's lantern", ("a#1",)), q("boats", "boats moving", ("b#1",)),
                 q("stop", "the and of it is", ("a#2",))]
    arm = check_equal(corpus, questions, tmp_path, depth=10)
    res = arm.search(questions, 10)
    assert res[2].hits == () and res[2].empty_reason == "no query term occurs in the corpus"
    boats = [(h.chunk_id, h.score) for h in res[1].hits]
    assert [c for c, _ in boats] == sorted(c for c, _ in boats) and boats[0][1] == boats[1][1]
    assert lucene_english()("The harbour's LANTERNS") == ["harbour", "lantern"]


def test_preset_parameters_are_checked():
    with pytest.raises(ConfigError, match="preset must be one of okapi, lucene"):
        BM25Arm(preset="anserini")
    with pytest.raises(ConfigError, match="stem is the okapi preset's"):
        BM25Arm(preset="lucene", stem=True)
    with pytest.raises(ConfigError, match="stemmer must be one of"):
        BM25Arm(preset="lucene", stemmer="krovetz")
    assert (BM25Arm().k1, BM25Arm().b) == (1.5, 0.75)  # the default preset is unchanged
    assert (BM25Arm(preset="lucene", k1=1.2).k1, BM25Arm(preset="lucene").b) == (1.2, 0.4)


def test_sample_gold_set_equal_to_bm25s(tmp_path):
    from rulegauge.corpus.chunking import ChunkingOptions, build_corpus
    from rulegauge.goldset.parse import load_goldset
    from tests.helpers.common import REPO

    gs = load_goldset(REPO / "goldsets" / "sample.yaml")
    check_equal(build_corpus(gs.documents, ChunkingOptions()), gs.questions, tmp_path)


@pytest.mark.shared
def test_shared_corpora_equal_to_bm25s(tmp_path):
    """Secret Hitler with its gold set, and AisleRiot's English rules (90 games) asked each
    page's first line: top 100 of every question, to the bit."""
    from rulegauge.corpus.chunking import ChunkingOptions, build_corpus
    from rulegauge.goldset.parse import load_goldset

    path = SHARED / "goldsets" / "secret-hitler.yaml"
    rules = SHARED / "corpora" / "aisleriot" / "aisleriot-en.txt"
    if not path.exists() or not rules.exists():
        pytest.skip(f"{path} or {rules} is absent")
    gs = load_goldset(path)
    check_equal(build_corpus(gs.documents, ChunkingOptions()), gs.questions, tmp_path)
    ref = DocumentSpec("aisleriot", str(rules), "rulebook", "aisleriot", "1", "en", "AisleRiot")
    corpus = build_corpus((ref,), ChunkingOptions())
    asked = [q(f"p{p.page}", p.text.split("\n")[0] + " how many cards", (f"aisleriot#{p.page}",))
             for p in corpus.pages]
    check_equal(corpus, asked, tmp_path)
