"""The pgvector arm against a real PostgreSQL with pgvector: exact search equals the dense
arm's cosine ranking, HNSW goes through its index and equals exact on a small corpus, a
team's table of vectors, preflight of a server without the extension."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rulegauge.arms import ArmContext
from rulegauge.arms.dense import DenseArm
from rulegauge.arms.pg_cluster import ThrowawayCluster
from rulegauge.arms.pgvector import PgVectorArm, vector_literal
from rulegauge.core.errors import ConfigError
from tests.helpers.common import q
from tests.helpers.embedding_fakes import shared_model_cache
from tests.helpers.engines import require_postgres

pytestmark = pytest.mark.slow  # the packaged embedding model

QUESTIONS = [q("q1", "How many points does a lit lantern score?"), q("q2", "How far does a boat move?"),
             q("q3", "Wie viele Laternen bekommt jeder Spieler?", language="de")]


@pytest.fixture(scope="module")
def pg() -> Iterator[ThrowawayCluster]:
    require_postgres(vector=True)
    with ThrowawayCluster() as c:
        yield c


@pytest.fixture(autouse=True)
def _models_converted_once(tmp_path):
    """tmp_path's ``models/`` is the machine's model cache: e5 is converted and exported once."""
    shared_model_cache(tmp_path)


def _run(corpus, cache: Path, **kw):
    arm = PgVectorArm(**kw)
    arm.prepare(corpus, ArmContext(cache))
    try:
        return arm.search(QUESTIONS, depth=5), arm.describe(), arm
    finally:
        arm.close()


def test_exact_equals_the_dense_arm_and_hnsw_equals_exact(pg, tiny_corpus, tmp_path):
    dense = DenseArm()
    dense.prepare(tiny_corpus, ArmContext(tmp_path))
    want = dense.search(QUESTIONS, depth=5)
    exact, info, _ = _run(tiny_corpus, tmp_path, dsn=pg.dsn)
    hnsw, hinfo, _ = _run(tiny_corpus, tmp_path, dsn=pg.dsn, index="hnsw")
    for w, e, h in zip(want, exact, hnsw, strict=True):
        assert [x.chunk_id for x in e.hits] == [x.chunk_id for x in w.hits]
        assert [x.score for x in e.hits] == pytest.approx([x.score for x in w.hits], abs=1e-5)
        assert [x.chunk_id for x in h.hits] == [x.chunk_id for x in e.hits]  # 5 chunks <= ef_search
    assert info["pgvector"] and info["index"] == "exact" and hinfo["hnsw"]["ef_search"] == 100


def test_hnsw_queries_go_through_the_index(pg, tiny_corpus, tmp_path):
    arm = PgVectorArm(dsn=pg.dsn, index="hnsw")
    arm.prepare(tiny_corpus, ArmContext(tmp_path))
    try:
        plan = arm._conn.execute(b"EXPLAIN " + arm.statement().as_bytes(arm._conn),
                                 {"v": vector_literal([1.0] * 384), "k": 5}).fetchall()
        assert any("Index Scan using rulegauge_chunks_embedding_idx" in row[0] for row in plan), plan
    finally:
        arm.close()


def test_a_teams_table_of_vectors(pg, tiny_corpus, tmp_path):
    import psycopg

    from rulegauge.embedding.backends import AUTO, resolve_backend
    from rulegauge.embedding.cache import EmbeddingCache, embed
    from rulegauge.embedding.models import load_model

    model = load_model("e5-small", tmp_path, resolve_backend(AUTO).name)  # as the arm embeds
    vectors = embed(model, [c.text for c in tiny_corpus.chunks], "passage", EmbeddingCache(tmp_path, model.model_id),
                    32)
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE TABLE team_vectors (cid text, emb vector(384))")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO team_vectors VALUES (%s, %s::vector)",
                            [(c.chunk_id, vector_literal(v)) for c, v in zip(tiny_corpus.chunks, vectors, strict=True)])
    table, info, _ = _run(tiny_corpus, tmp_path, dsn=pg.dsn, table="team_vectors",
                          columns={"id": "cid", "vector": "emb"})
    exact, _, _ = _run(tiny_corpus, tmp_path, dsn=pg.dsn)
    assert [r.hits for r in table] == [r.hits for r in exact]
    assert info["table"] == "team_vectors"


def test_preflight_of_a_server_without_pgvector(tiny_corpus, tmp_path, monkeypatch):
    import rulegauge.arms.pg_base as pg_base

    monkeypatch.setattr(pg_base, "has_extension", lambda bindir, ext: False)
    msg = PgVectorArm().preflight(tiny_corpus, [], ArmContext(tmp_path))
    assert msg is not None and "has no vector extension" in msg


@pytest.mark.parametrize(("kw", "match"), [({"index": "ivf"}, "index must be"), ({"hnsw": {"mm": 3}}, "unknown hnsw"),
                                           ({"hnsw": {"m": 0}}, ">= 1"), ({"model": "nosuch"}, "nosuch"),
                                           ({"dsn": "x", "table": "t"}, "columns.vector")])
def test_bad_parameters(kw, match):
    with pytest.raises(Exception, match=match) as info:
        PgVectorArm(**kw)
    assert isinstance(info.value, ConfigError) or "embedding model" in str(info.value)
