"""The dense arm: ranking, deterministic ties, caching, and the real model (slow)."""

from __future__ import annotations

import pytest

from rulegauge.arms import ARMS, Arm, ArmContext, load_builtin_arms
from rulegauge.arms.dense import DEFAULT_MODEL, DenseArm
from rulegauge.core.errors import ConfigError, RegistryError, RulegaugeError
from rulegauge.corpus.records import Chunk, Document, Page, chunk_key, make_corpus
from tests.helpers.common import q
from tests.helpers.embedding_fakes import INSTANCES, shared_model_cache

TEXTS = {
    ("rb", 1): "Setup: shuffle the deck and deal seven cards to each player.",
    ("rb", 2): "On your turn roll both dice and move your pawn that many squares.",
    ("rb", 3): "Scoring: at the end of the game each gold coin is worth one point.",
    ("rb", 4): "Trading: you may trade cards with any other player once per round.",
}


def corpus(texts=TEXTS):
    docs = [Document("rb", "rulebook", "G", "en-1", "en", "Rulebook")]
    pages = [Page(d, p, t) for (d, p), t in texts.items()]
    chunks = [Chunk(chunk_key(d, p, 0), d, p, (), t, 0, len(t)) for (d, p), t in texts.items()]
    return make_corpus(docs, pages, chunks)


def prepared(tmp_path, model="fake-bow", texts=TEXTS, **params):
    arm = DenseArm(model=model, **params)
    arm.prepare(corpus(texts), ArmContext(cache_dir=tmp_path))
    return arm


def test_registered_and_implements_the_interface():
    load_builtin_arms()
    assert ARMS.get("dense") is DenseArm
    assert isinstance(DenseArm(model="fake-bow"), Arm)
    assert DEFAULT_MODEL == "e5-small"


def test_bad_parameters_fail_early():
    with pytest.raises(RegistryError, match="e5-small, minilm-en"):
        DenseArm(model="no-such-model")
    with pytest.raises(ConfigError, match="batch_size"):
        DenseArm(model="fake-bow", batch_size=0)
    with pytest.raises(RulegaugeError, match="prepare"):
        DenseArm(model="fake-bow").search([q("q1", "dice")], 3)


def test_matching_chunk_first(tmp_path):
    arm = prepared(tmp_path)
    [res] = arm.search([q("q1", "How many cards are dealt to each player at setup?")], 4)
    assert res.arm == "dense" and res.question_id == "q1"
    assert res.hits[0].chunk_id == chunk_key("rb", 1, 0)
    assert [h.rank for h in res.hits] == [1, 2, 3, 4]
    assert all(a.score >= b.score for a, b in zip(res.hits, res.hits[1:], strict=False))
    assert -1.0 - 1e-6 <= res.hits[-1].score <= res.hits[0].score <= 1.0 + 1e-6


def test_ties_are_broken_by_chunk_id(tmp_path):
    texts = {("rb", p): f"text {p}" for p in range(30, 0, -1)}  # 30 identical vectors
    arm = prepared(tmp_path, model="fake-constant", texts=texts)
    [res] = arm.search([q("q1", "anything")], 5)
    # every chunk ties: the smallest ids win, decided inside the search
    assert [h.chunk_id for h in res.hits] == [chunk_key("rb", p, 0) for p in range(1, 6)]
    assert len({h.score for h in res.hits}) == 1
    [res] = arm.search([q("q1", "anything")], 100)
    assert [h.chunk_id for h in res.hits] == [chunk_key("rb", p, 0) for p in range(1, 31)]


def test_depth_edges(tmp_path):
    arm = prepared(tmp_path)
    assert arm.search([q("q1", "dice")], 0)[0].hits == ()
    assert len(arm.search([q("q1", "dice")], 99)[0].hits) == len(TEXTS)
    empty = prepared(tmp_path, texts={})
    assert empty.search([q("q1", "dice")], 5)[0].hits == ()


def test_second_prepare_embeds_nothing_and_describe(tmp_path):
    prepared(tmp_path)
    first_calls = INSTANCES["fake-bow"].calls
    arm = prepared(tmp_path)
    assert first_calls == 1 and INSTANCES["fake-bow"].calls == 0
    arm.search([q("q1", "dice"), q("q2", "cards")], 2)
    d = arm.describe()
    assert d["model"] == "fake-bow" and d["model_describe"]["model_id"] == "fake-bow"
    assert d["search"]["kernel"] in ("blas sgemm on fixed blocks", "one product per query")
    assert d["cache"]["hits"] == len(TEXTS) and d["cache"]["misses"] == 2


def test_progress_goes_through_the_context(tmp_path):
    seen = []
    arm = DenseArm(model="fake-bow", batch_size=3)
    arm.prepare(corpus(), ArmContext(cache_dir=tmp_path,
                                     progress=lambda d, n: (seen.append(n), seen.append)[1]))
    assert seen == [len(TEXTS), 3, 1]


@pytest.mark.slow
def test_real_model_finds_the_matching_chunk_across_languages(tmp_path):
    """e5-small from the model cache (converted once per machine)."""
    arm = DenseArm()
    arm.prepare(corpus(), ArmContext(cache_dir=shared_model_cache(tmp_path)))
    questions = [q("en", "How many points is a gold coin worth?"),
                 q("de", "Wie weit bewegt sich meine Spielfigur?", language="de"),
                 q("es", "¿Se pueden intercambiar cartas con otros jugadores?", language="es"),
                 q("ru", "Сколько очков стоит золотая монета?", language="ru")]
    expected = {"en": ("rb", 3), "de": ("rb", 2), "es": ("rb", 4), "ru": ("rb", 3)}
    for res in arm.search(questions, 4):
        assert res.hits[0].chunk_id == chunk_key(*expected[res.question_id], 0), res
    assert arm.describe()["model_describe"]["name"] == "e5-small"
    again = DenseArm()
    again.prepare(corpus(), ArmContext(cache_dir=tmp_path))
    assert again.search(questions, 4) == arm.search(questions, 4)
    assert again._model._st is None  # everything was cached: the network never loaded


def full_scores(arm, questions):
    """Every chunk's score for every question (float64 products of the cached vectors)."""
    import numpy as np

    from rulegauge.embedding.cache import embed

    queries = embed(arm._model, [x.question for x in questions], "query", arm._cache, arm.batch_size)
    return queries.astype(np.float64) @ arm._flat.vectors.astype(np.float64).T


def reference_search(arm, questions, depth):
    """Every chunk scored in float64, ordered by hits_from_scores."""
    from rulegauge.arms.base import ArmResult, hits_from_scores

    return [ArmResult(x.question_id, "dense", hits_from_scores(arm._ids, row, depth) if depth else ())
            for x, row in zip(questions, full_scores(arm, questions), strict=True)]


def same_ranking(arm, got, questions, depth):
    """The reference's ranking up to the kernel's rounding: at every rank, the chunk found
    scores (in float64) what the reference's chunk at that rank scores, within 1e-6; and
    the ids agree wherever no other chunk comes that close."""
    pos = {c: i for i, c in enumerate(arm._ids)}
    for res, want, row in zip(got, reference_search(arm, questions, depth), full_scores(arm, questions),
                              strict=True):
        assert len(res.hits) == len(want.hits)
        for g, w in zip(res.hits, want.hits, strict=True):
            assert abs(row[pos[g.chunk_id]] - w.score) < 1e-6 and abs(g.score - w.score) < 1e-6
            if (abs(row - w.score) < 1e-6).sum() == 1:
                assert g.chunk_id == w.chunk_id
    return True


def test_batched_search_equals_one_call_per_question(tmp_path):
    import numpy as np

    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(40)]
    texts = {("rb", p): " ".join(rng.choice(words, int(rng.integers(1, 6)))) for p in range(1, 601)}
    arm = prepared(tmp_path, texts=texts)
    questions = [q(f"q{i}", " ".join(rng.choice(words, int(rng.integers(1, 4))))) for i in range(700)]
    for depth in (1, 10, 100):
        got = arm.search(questions, depth)
        assert got == [r for x in questions[:60] for r in arm.search([x], depth)] + got[60:]  # bit for bit
        assert same_ranking(arm, got, questions, depth)


@pytest.mark.slow
def test_batched_search_on_a_large_corpus(tmp_path):
    """20,000 chunks of 384 dimensions (two corpus blocks), ids not in corpus order."""
    from types import SimpleNamespace

    import numpy as np

    from rulegauge.arms.flat_search import FlatSearch
    from rulegauge.core.ordering import id_ranks
    from rulegauge.corpus.chunk_columns import ChunkColumns
    from tests.helpers.embedding_fakes import FakeModel

    rng = np.random.default_rng(13)
    words = [f"w{i}" for i in range(300)]
    model = FakeModel("fake-bow-384", dimension=384)
    arm = DenseArm(model="fake-bow")
    texts = [" ".join(rng.choice(words, int(rng.integers(1, 4)))) for _ in range(20_000)]
    arm._model = model
    arm._ids = [f"c{i:05d}" for i in rng.permutation(20_000)]
    arm._chunks = ChunkColumns.of([SimpleNamespace(chunk_id=i, doc_id="d", page=1) for i in arm._ids])
    arm._flat = FlatSearch(model.encode_passages(texts), id_ranks(arm._ids))
    questions = [q(f"q{i}", " ".join(rng.choice(words, 2))) for i in range(400)]
    got = arm.search(questions, 20)
    assert got[:30] == [r for x in questions[:30] for r in arm.search([x], 20)]
    assert same_ranking(arm, got, questions, 20)
