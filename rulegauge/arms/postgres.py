"""The ``postgres`` arm: PostgreSQL full-text search, ranked by ``ts_rank`` or ``ts_rank_cd``.

Definition: each chunk is indexed as ``to_tsvector(cfg, text)`` where ``cfg`` is the
text-search configuration of its document's language (:data:`LANGUAGE_CONFIGS`: ``en`` ->
``english``, ``ru`` -> ``russian``, ...; a language the server has no configuration for
uses ``simple``), or ``config`` for every chunk and question when given. A question is
parsed in its own language's configuration by ``websearch_to_tsquery`` (``query =
"websearch"``, the default: every word must occur, quoted phrases and ``-word`` as a web
search box reads them) or, with ``query = "any"``, by ``plainto_tsquery`` with its ``&``
turned into ``|`` (a chunk matches when any lexeme of the question occurs). Matching chunks
(``tsv @@ query``, through a GIN index) are scored by ``rank`` (``ts_rank``, the default,
or ``ts_rank_cd``, cover density) with ``normalization`` (PostgreSQL's bit mask: 0 ignores
the length, 1 divides by 1 + log(length), 2 by the length, 32 maps to rank/(rank+1)...).

Conventions: the engine returns every match scoring at least the ``depth``-th score, so
ties at the cut are all seen, and they are ordered here, score descending then chunk id
ascending (:func:`rulegauge.arms.base.hits_from_scores`). A question whose query has no
lexeme (stop words only) or matches nothing gets no hits and says which.

Where the database is and what table is searched: :mod:`rulegauge.arms.pg_base` (``dsn``,
``dsn_env``, ``table`` with ``columns = {id, text}`` or ``{id, tsvector}``).

Reference: PostgreSQL 15 documentation, chapter 12 "Full Text Search" (12.3.2 Parsing
Queries, 12.3.3 Ranking Search Results).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from rulegauge.arms.base import ARMS, ArmContext, hits_from_scores
from rulegauge.arms.pg_base import TEMP_TABLE, PgArmBase, table_identifier
from rulegauge.arms.results import ArmResult
from rulegauge.core.errors import ConfigError
from rulegauge.corpus.records import Corpus
from rulegauge.goldset.records import Question

LANGUAGE_CONFIGS = {
    "ar": "arabic", "ca": "catalan", "da": "danish", "de": "german", "el": "greek", "en": "english",
    "es": "spanish", "eu": "basque", "fi": "finnish", "fr": "french", "ga": "irish", "hi": "hindi",
    "hu": "hungarian", "hy": "armenian", "id": "indonesian", "it": "italian", "lt": "lithuanian",
    "ne": "nepali", "nl": "dutch", "no": "norwegian", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}
RANKS = ("ts_rank", "ts_rank_cd")
QUERIES = ("websearch", "any")
NO_LEXEME = "the question has no lexeme in its text-search configuration (stop words only)"
NO_MATCH = "no chunk matches the question's query"


@ARMS.register("postgres")
class PostgresArm(PgArmBase):
    """PostgreSQL full text (module docstring). Params: dsn, dsn_env, table, columns, rank,
    normalization, query, config."""

    name: ClassVar[str] = "postgres"  # type: ignore[misc]
    reads = ("id", "text", "tsvector")

    def __init__(self, dsn: str | None = None, dsn_env: str | None = None, table: str | None = None,
                 columns: Mapping[str, str] | None = None, rank: str = "ts_rank", normalization: int = 0,
                 query: str = "websearch", config: str | None = None) -> None:
        super().__init__(dsn, dsn_env, table, columns)
        problems = []
        if rank not in RANKS:
            problems.append(f"rank must be one of {', '.join(RANKS)}, got {rank!r}")
        if query not in QUERIES:
            problems.append(f"query must be one of {', '.join(QUERIES)}, got {query!r}")
        if not isinstance(normalization, int) or isinstance(normalization, bool) or not 0 <= normalization < 64:
            problems.append(f"normalization must be an integer bit mask 0..63, got {normalization!r}")
        if table is not None and ("text" in self.columns) == ("tsvector" in self.columns):
            problems.append("with table, name exactly one of columns.text or columns.tsvector")
        if problems:
            raise ConfigError(f"{self.name}: " + "; ".join(problems))
        self.rank, self.normalization, self.query, self.config = rank, normalization, query, config
        self.configs_used: dict[str, str] = {}
        self._known: set[str] = set()

    def _cfg(self, language: str | None) -> str:
        if self.config is not None:
            return self.config
        cfg = LANGUAGE_CONFIGS.get((language or "").lower(), "simple")
        return cfg if cfg in self._known else "simple"

    def check_server(self, conn: Any) -> str | None:
        self._known = {r[0] for r in conn.execute("SELECT cfgname::text FROM pg_ts_config").fetchall()}
        if self.config is not None and self.config not in self._known:
            return (f"{self.name}: the server has no text-search configuration {self.config!r}; "
                    f"it has: {', '.join(sorted(self._known))}")
        return None

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        try:
            conn = self.connect(corpus)
            problem = self.check_server(conn)
            if problem:
                raise ConfigError(problem)
            self.configs_used = {}
            if self.table is None:
                self._load(conn, corpus)
        except BaseException:
            self.close()
            raise

    def _load(self, conn: Any, corpus: Corpus) -> None:
        lang = {d.doc_id: d.language for d in corpus.documents}
        conn.execute(f"DROP TABLE IF EXISTS pg_temp.{TEMP_TABLE}")
        conn.execute(f"CREATE TEMP TABLE {TEMP_TABLE} (chunk_id text PRIMARY KEY, cfg regconfig NOT NULL, "
                     "body text NOT NULL, tsv tsvector)")
        with conn.cursor() as cur, cur.copy(f"COPY {TEMP_TABLE} (chunk_id, cfg, body) FROM STDIN") as copy:
            for c in corpus.chunks:
                cfg = self._cfg(lang[c.doc_id])
                self.configs_used[lang[c.doc_id] or ""] = cfg
                copy.write_row((c.chunk_id, cfg, c.search_text.replace("\x00", "")))
        conn.execute(f"UPDATE {TEMP_TABLE} SET tsv = to_tsvector(cfg, body)")
        conn.execute(f"CREATE INDEX ON {TEMP_TABLE} USING gin (tsv)")
        conn.execute(f"ANALYZE {TEMP_TABLE}")

    def _statement(self) -> tuple[Any, Any]:
        """(ranking statement, lexeme-count statement), parameters ``cfg``, ``text``, ``off``."""
        from psycopg import sql  # deferred: optional driver

        q: sql.Composable
        tsv: sql.Composable
        if self.query == "websearch":
            q = sql.SQL("websearch_to_tsquery(%(cfg)s::regconfig, %(text)s)")
        else:
            q = sql.SQL("NULLIF(replace(plainto_tsquery(%(cfg)s::regconfig, %(text)s)::text, ' & ', ' | '), "
                        "'')::tsquery")
        only: sql.Composable = sql.SQL("")
        if self.table is None:
            src, ident, tsv = sql.Identifier(TEMP_TABLE), sql.Identifier("chunk_id"), sql.SQL("t.tsv")
        else:  # a shared table may hold more than this run's chunks: only those compete for the cut
            only = sql.SQL(" AND t.{}::text = ANY(%(ids)s)").format(sql.Identifier(self.columns["id"]))
            src, ident = table_identifier(self.table), sql.Identifier(self.columns["id"])
            if "tsvector" in self.columns:
                tsv = sql.SQL("t.{}").format(sql.Identifier(self.columns["tsvector"]))
            else:
                tsv = sql.SQL("to_tsvector(%(cfg)s::regconfig, t.{})").format(sql.Identifier(self.columns["text"]))
        ranking = sql.SQL(
            "WITH q AS (SELECT {q} AS q), "
            "r AS (SELECT t.{ident}::text AS id, {rank}({tsv}, q.q, {norm}) AS s "
            "FROM {src} t, q WHERE {tsv} @@ q.q{only}), "
            "cut AS (SELECT s FROM r ORDER BY s DESC LIMIT 1 OFFSET %(off)s) "
            "SELECT id, s FROM r WHERE s >= COALESCE((SELECT s FROM cut), '-infinity'::real)").format(
            q=q, ident=ident, rank=sql.Identifier(self.rank), tsv=tsv, norm=sql.Literal(self.normalization), src=src,
            only=only)
        return ranking, sql.SQL("SELECT coalesce(numnode({q}), 0)").format(q=q)

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        if self._conn is None:
            raise RuntimeError("postgres arm: prepare() must run before search()")
        ranking, lexemes = self._statement()
        out = []
        for q in questions:
            cfg = self._cfg(q.language)
            self.configs_used.setdefault(q.language or "", cfg)
            params = {"cfg": cfg, "text": q.question.replace("\x00", ""), "off": max(depth - 1, 0),
                      "ids": self.corpus_ids}
            rows = self._conn.execute(ranking, params).fetchall() if depth > 0 else []
            found, outside = self.matched(rows)
            hits = hits_from_scores([i for i, _ in found], np.array([s for _, s in found], dtype=np.float64), depth)
            reason = None
            if not hits:
                reason = NO_MATCH if self._conn.execute(lexemes, params).fetchone()[0] else NO_LEXEME
            out.append(ArmResult(q.question_id, self.name, hits, reason,
                                 frozenset(h.chunk_id for h in hits) & outside))
        return out

    def describe(self) -> dict[str, Any]:
        return {**self.describe_base(), "rank": self.rank, "normalization": self.normalization,
                "query": self.query, "config": self.config,
                "configs_by_language": dict(sorted(self.configs_used.items()))}
