"""The postgres arm against a real PostgreSQL (a throwaway cluster on a Unix socket):
websearch vs any-lexeme queries, ts_rank / ts_rank_cd and normalization, per-language
configurations, ties, a team's read-only table, preflight of bad databases."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rulegauge.arms import ArmContext
from rulegauge.arms.pg_cluster import ThrowawayCluster
from rulegauge.arms.postgres import NO_LEXEME, NO_MATCH, PostgresArm
from rulegauge.core.errors import ConfigError, RulegaugeError
from rulegauge.corpus.records import Chunk, Document, Page, chunk_key, make_corpus
from tests.helpers.common import q
from tests.helpers.engines import cluster, require_postgres


@pytest.fixture(scope="module")
def pg() -> Iterator[ThrowawayCluster]:
    yield from cluster()


def _search(corpus, question, **kw):
    arm = PostgresArm(**kw)
    arm.prepare(corpus, ArmContext(Path(".")))
    try:
        [res] = arm.search([question], depth=10)
        return res, arm.describe()
    finally:
        arm.close()


def test_websearch_needs_every_word_any_needs_one(pg, tiny_corpus):
    res, info = _search(tiny_corpus, q("q", "lit lantern scores"), dsn=pg.dsn)
    assert {h.chunk_id for h in res.hits} == {"rb#p0003.c000", "er#p0001.c000"}
    none, _ = _search(tiny_corpus, q("q", "lit lantern harbour"), dsn=pg.dsn)
    assert (none.hits, none.empty_reason) == ((), NO_MATCH)
    anyq, _ = _search(tiny_corpus, q("q", "lit lantern harbour"), dsn=pg.dsn, query="any")
    assert {h.chunk_id for h in anyq.hits} == {"rb#p0001.c000", "rb#p0002.c000", "rb#p0003.c000",
                                               "er#p0001.c000"}
    stop, _ = _search(tiny_corpus, q("q", "the and of"), dsn=pg.dsn, query="any")
    assert stop.empty_reason == NO_LEXEME
    assert info["server_version_num"] >= 150000 and "host=/" in info["where"]
    assert info["configs_by_language"] == {"en": "english"}


def test_rank_functions_and_normalization(pg, tiny_corpus):
    question = q("q", "lantern boat scores points")
    plain, _ = _search(tiny_corpus, question, dsn=pg.dsn, query="any")
    norm32, _ = _search(tiny_corpus, question, dsn=pg.dsn, query="any", normalization=32)
    cd, _ = _search(tiny_corpus, question, dsn=pg.dsn, query="any", rank="ts_rank_cd")
    s0 = {h.chunk_id: h.score for h in plain.hits}
    # normalization 32 is rank / (rank + 1) (PostgreSQL 12.3.3), in float4
    assert {h.chunk_id: h.score for h in norm32.hits} == pytest.approx({c: s / (s + 1) for c, s in s0.items()},
                                                                     rel=1e-6)
    assert {h.chunk_id for h in cd.hits} == set(s0)
    assert [h.score for h in cd.hits] != [h.score for h in plain.hits]
    for res in (plain, norm32, cd):
        keys = [(-h.score, h.chunk_id) for h in res.hits]
        assert keys == sorted(keys)


def test_ties_break_by_chunk_id_at_the_cut(pg):
    docs = [Document("d", "rulebook", "G", "e", "en", "D")]
    text = "identical harbour text"
    pages = [Page("d", p, text) for p in range(1, 13)]
    chunks = [Chunk(chunk_key("d", p, 0), "d", p, ("H",), text, 0, len(text)) for p in range(12, 0, -1)]
    res, _ = _search(make_corpus(docs, pages, chunks), q("q", "harbour"), dsn=pg.dsn)
    assert [h.chunk_id for h in res.hits] == sorted(chunk_key("d", p, 0) for p in range(1, 13))[:10]


def test_each_language_uses_its_configuration(pg):
    docs = [Document("ru", "rulebook", "G", "e", "ru", "R")]
    text = "Каждый игрок берёт пять карт."
    corpus = make_corpus(docs, [Page("ru", 1, text)], [Chunk(chunk_key("ru", 1, 0), "ru", 1, (), text, 0, len(text))])
    stemmed, info = _search(corpus, q("q", "карты игроков", language="ru"), dsn=pg.dsn)
    assert [h.chunk_id for h in stemmed.hits] == ["ru#p0001.c000"]
    assert info["configs_by_language"] == {"ru": "russian"}
    simple, _ = _search(corpus, q("q", "карты игроков", language="ru"), dsn=pg.dsn, config="simple")
    assert simple.hits == ()
    with pytest.raises(RulegaugeError, match="no text-search configuration 'klingon'"):
        _search(corpus, q("q", "x"), dsn=pg.dsn, config="klingon")


def _team_table(pg, corpus, name: str) -> str:
    """A team's own table (chunks plus a row of another corpus) and a read-only role's DSN."""
    import psycopg

    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {name} (id text, body text, extra int)")
        rows = [(c.chunk_id, c.text) for c in corpus.chunks] + [("other#p0001.c000", "lantern lantern lit")]
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {name} (id, body) VALUES (%s, %s)", rows)
        conn.execute("DO $$ BEGIN CREATE ROLE reader LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        conn.execute(f"GRANT SELECT ON {name} TO reader")
        conn.execute("REVOKE TEMP ON DATABASE postgres FROM PUBLIC")
    return pg.dsn.replace("user=postgres", "user=reader")


def test_a_read_only_role_searches_the_teams_table(pg, tiny_corpus, tmp_path):
    reader = _team_table(pg, tiny_corpus, "team_chunks")
    question = q("q", "lit lantern")
    loaded, _ = _search(tiny_corpus, question, dsn=pg.dsn, config="english")
    table, info = _search(tiny_corpus, question, dsn=reader, table="team_chunks", config="english",
                          columns={"id": "id", "text": "body"})
    assert table.hits == loaded.hits  # the other corpus's row never competes
    assert info["table"] == "team_chunks"
    # the reader may not create TEMP tables: loading the chunks itself is refused in preflight
    msg = PostgresArm(dsn=reader).preflight(tiny_corpus, [question], ArmContext(tmp_path))
    assert msg is not None and "TEMP" in msg


def test_preflight_names_what_is_wrong(pg, tiny_corpus, tmp_path):
    ctx = ArmContext(tmp_path)
    assert PostgresArm(dsn=pg.dsn).preflight(tiny_corpus, [], ctx) is None
    assert PostgresArm().preflight(tiny_corpus, [], ctx) is None  # a throwaway cluster can start
    refused = PostgresArm(dsn=f"host={tmp_path} port=5432 user=x password=hunter2 dbname=postgres")
    msg = refused.preflight(tiny_corpus, [], ctx)
    assert msg is not None and "cannot connect" in msg and "hunter2" not in msg and "***" in msg
    missing = PostgresArm(dsn=pg.dsn, table="nosuch", columns={"text": "body"}).preflight(tiny_corpus, [], ctx)
    assert missing is not None and "'nosuch' does not exist" in missing
    _team_table(pg, tiny_corpus, "team_cols")
    nocol = PostgresArm(dsn=pg.dsn, table="team_cols", columns={"id": "id", "text": "txt"})
    assert "lacks column(s) text = 'txt'" in str(nocol.preflight(tiny_corpus, [], ctx))
    wrong_ids = PostgresArm(dsn=pg.dsn, table="team_cols", columns={"text": "body"})  # id column: chunk_id
    assert "lacks column(s) id = 'chunk_id'" in str(wrong_ids.preflight(tiny_corpus, [], ctx))


def test_a_throwaway_cluster_is_started_and_removed(tiny_corpus, tmp_path):
    arm = PostgresArm()
    arm.prepare(tiny_corpus, ArmContext(tmp_path))
    folder = arm._cluster.folder if arm._cluster else None
    assert folder is not None and folder.is_dir()
    assert arm.search([q("q", "boat")], 5)[0].hits
    assert arm.describe()["database"] == "throwaway cluster"
    arm.close()
    assert not folder.exists()


@pytest.mark.parametrize(("kw", "match"), [
    ({"rank": "bm25"}, "rank must be one of"), ({"query": "all"}, "query must be one of"),
    ({"normalization": 64}, "bit mask"), ({"table": "t"}, "give dsn or dsn_env too"),
    ({"dsn": "x", "dsn_env": "Y"}, "not both"), ({"dsn": "x", "table": "a.b.c"}, "SCHEMA.NAME"),
    ({"dsn": "x", "table": "t", "columns": {"text": "a", "tsvector": "b"}}, "exactly one"),
    ({"columns": {"vector": "v"}}, "unknown columns key"),
])
def test_bad_parameters_are_config_errors(kw, match):
    with pytest.raises(ConfigError, match=match):
        PostgresArm(**kw)


def test_a_dsn_env_that_is_not_set_fails_the_preflight(tiny_corpus, tmp_path, monkeypatch):
    monkeypatch.delenv("RULEGAUGE_TEST_NO_DSN", raising=False)
    msg = PostgresArm(dsn_env="RULEGAUGE_TEST_NO_DSN").preflight(tiny_corpus, [], ArmContext(tmp_path))
    assert msg is not None and "RULEGAUGE_TEST_NO_DSN is not set" in msg
    with pytest.raises(RulegaugeError):
        PostgresArm(dsn_env="RULEGAUGE_TEST_NO_DSN").prepare(tiny_corpus, ArmContext(tmp_path))


def test_rulegauge_run_exits_2_before_any_folder_on_a_refused_database_or_missing_table(pg, tmp_path):
    from typer.testing import CliRunner

    from rulegauge.cli import app

    runs = tmp_path / "runs"
    for n, params in enumerate([f'dsn = "host={tmp_path} port=5432 user=x password=hunter2"',
                                f'dsn = "{pg.dsn}"\ntable = "no_such_table"\ncolumns = {{text = "body"}}']):
        cfg = tmp_path / f"pg{n}.toml"
        cfg.write_text(f'[arms.bm25]\n[arms.db]\nkind = "postgres"\n{params}\n[grid]\narms = [["bm25", "db"]]\n',
                       encoding="utf-8")
        res = CliRunner().invoke(app, ["run", "-c", str(cfg), "--out", str(runs), "--run-id", f"r{n}"])
        assert res.exit_code == 2, res.output
        assert "arm db (postgres)" in res.output and "hunter2" not in res.output
        assert ("cannot connect" if n == 0 else "'no_such_table' does not exist") in res.output
        assert "Traceback" not in res.output
        assert not (runs / f"r{n}").exists()


def test_a_dsn_is_shown_without_its_password():
    from rulegauge.arms.pg_base import redact

    require_postgres()
    assert "s3cret" not in redact("postgresql://reader:s3cret@db.example:5432/search")
    assert "reader" in redact("postgresql://reader:s3cret@db.example:5432/search")
    assert "s3cret" not in redact("host=db user=reader password=s3cret dbname=search")
    assert redact("not a dsn ' = =") == "<dsn not shown>"
    arm = PostgresArm(dsn="host=db user=reader password=s3cret dbname=search")
    assert "s3cret" not in str(arm.describe())
