"""The ``pgvector`` arm: vector search in PostgreSQL with the pgvector extension, exact or HNSW.

Definition: chunks (passage role) and questions (query role) are embedded by a packaged
model exactly as the ``dense`` arm embeds them (:mod:`rulegauge.embedding`, default
``e5-small``, the same on-disk cache), stored as ``vector(d)`` and searched by cosine
distance ``<=>``; the score is ``1 - distance`` (the cosine). ``index = "exact"`` (the
default) scans every row: the engine returns every chunk at most as far as the
``depth``-th, ties at the cut included. ``index = "hnsw"`` builds pgvector's HNSW index
(``hnsw = {m = 16, ef_construction = 64, ef_search = 100}``, pgvector's defaults except
``ef_search``, raised to rulegauge's default depth, and to the run's depth when that is
larger, up to pgvector's 1000) and queries through it (sequential
scans are switched off for the session, so the planner cannot silently answer exactly): an
approximate top ``depth``. HNSW's graph depends on random level draws made when the index is
built, so on a corpus much larger than ``ef_search`` two builds may return different lists;
on a corpus of at most ``ef_search`` chunks it returns the exact list.

Conventions: the rows are ordered here, score descending then chunk id ascending
(:func:`rulegauge.arms.base.hits_from_scores`). Where the database is, and table mode
(``columns = {id, vector}``: a ``vector`` column embedded by the same model):
:mod:`rulegauge.arms.pg_base`.

Reference: pgvector README (github.com/pgvector/pgvector), "HNSW"; Malkov & Yashunin (2018),
"Efficient and robust approximate nearest neighbor search using HNSW graphs".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from rulegauge.arms.base import ARMS, ArmContext, hits_from_scores
from rulegauge.arms.pg_base import TEMP_TABLE, PgArmBase, table_identifier
from rulegauge.arms.results import ArmResult
from rulegauge.core.errors import ConfigError
from rulegauge.corpus.records import Corpus
from rulegauge.embedding.backends import AUTO, resolve_backend
from rulegauge.embedding.cache import EmbeddingCache, embed
from rulegauge.embedding.models import EMBEDDING_MODELS, EmbeddingModel, load_model
from rulegauge.goldset.records import Question

INDEXES = ("exact", "hnsw")
HNSW_DEFAULTS = {"m": 16, "ef_construction": 64, "ef_search": 100}
BATCH = 32
EF_SEARCH_MAX = 1000  # pgvector's upper bound of hnsw.ef_search


def vector_literal(v: np.ndarray) -> str:
    """pgvector's text form of a float32 vector; each value printed so it parses back exactly."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(v, dtype=np.float32)) + "]"


@ARMS.register("pgvector")
class PgVectorArm(PgArmBase):
    """pgvector cosine search (module docstring). Params: dsn, dsn_env, table, columns,
    model, index, hnsw, cache_dir."""

    name: ClassVar[str] = "pgvector"  # type: ignore[misc]
    extension = "vector"
    reads = ("id", "vector")

    def __init__(self, dsn: str | None = None, dsn_env: str | None = None, table: str | None = None,
                 columns: Mapping[str, str] | None = None, model: str = "e5-small", index: str = "exact",
                 hnsw: Mapping[str, int] | None = None, cache_dir: str | None = None) -> None:
        super().__init__(dsn, dsn_env, table, columns)
        EMBEDDING_MODELS.get(model)  # unknown names fail here, listing the choices
        if index not in INDEXES:
            raise ConfigError(f"pgvector: index must be one of {', '.join(INDEXES)}, got {index!r}")
        given = dict(hnsw or {})
        bad = sorted(set(given) - set(HNSW_DEFAULTS))
        if bad:
            raise ConfigError(f"pgvector: unknown hnsw key(s) {', '.join(bad)}; known: {', '.join(HNSW_DEFAULTS)}")
        self.hnsw = {**HNSW_DEFAULTS, **given}
        if any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in self.hnsw.values()):
            raise ConfigError(f"pgvector: hnsw values must be integers >= 1, got {self.hnsw}")
        if table is not None and "vector" not in self.columns:
            raise ConfigError("pgvector: with table, name the vector column (columns.vector)")
        self.model_name, self.index, self.cache_dir = model, index, cache_dir
        self._model: EmbeddingModel | None = None
        self._cache: EmbeddingCache | None = None
        self.extension_version: str | None = None
        self.ef_search_used: int | None = None

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        try:
            self._prepare(corpus, context)
        except BaseException:
            self.close()
            raise

    def _prepare(self, corpus: Corpus, context: ArmContext) -> None:
        conn = self.connect(corpus)
        if self.table is None:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        self.extension_version = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
        root = Path(self.cache_dir) if self.cache_dir is not None else Path(context.cache_dir)
        self._model = load_model(self.model_name, root, resolve_backend(AUTO, self.model_name).name)
        self._cache = EmbeddingCache(root, self._model.model_id)
        if self.table is None:
            vectors = embed(self._model, [c.search_text for c in corpus.chunks], "passage", self._cache, BATCH,
                            context.progress)
            self._load(conn, corpus, vectors)
        if self.index == "hnsw":
            conn.execute("SET enable_seqscan = off")  # through the index, never a silent exact scan

    def _load(self, conn: Any, corpus: Corpus, vectors: np.ndarray) -> None:
        dim = self._model.dimension if self._model is not None else vectors.shape[1]
        conn.execute(f"DROP TABLE IF EXISTS pg_temp.{TEMP_TABLE}")
        conn.execute(f"CREATE TEMP TABLE {TEMP_TABLE} (chunk_id text PRIMARY KEY, embedding vector({int(dim)}))")
        with conn.cursor() as cur, cur.copy(f"COPY {TEMP_TABLE} (chunk_id, embedding) FROM STDIN") as copy:
            for c, v in zip(corpus.chunks, vectors, strict=True):
                copy.write_row((c.chunk_id, vector_literal(v)))
        if self.index == "hnsw":
            conn.execute(f"CREATE INDEX ON {TEMP_TABLE} USING hnsw (embedding vector_cosine_ops) "
                         f"WITH (m = {int(self.hnsw['m'])}, ef_construction = {int(self.hnsw['ef_construction'])})")
        conn.execute(f"ANALYZE {TEMP_TABLE}")

    def statement(self) -> Any:
        """The search statement (parameters ``v``, ``off``, ``k``, ``ids``)."""
        from psycopg import sql  # deferred: optional driver

        only: sql.Composable = sql.SQL("")
        if self.table is None:
            src, ident, vec = sql.Identifier(TEMP_TABLE), sql.Identifier("chunk_id"), sql.Identifier("embedding")
        else:
            src, ident = table_identifier(self.table), sql.Identifier(self.columns["id"])
            vec = sql.Identifier(self.columns["vector"])
            only = sql.SQL(" WHERE t.{}::text = ANY(%(ids)s)").format(ident)
        if self.index == "hnsw":
            return sql.SQL("SELECT t.{ident}::text, t.{vec} <=> %(v)s::vector AS d FROM {src} t{only} "
                           "ORDER BY t.{vec} <=> %(v)s::vector LIMIT %(k)s").format(
                ident=ident, vec=vec, src=src, only=only)
        return sql.SQL("WITH r AS (SELECT t.{ident}::text AS id, t.{vec} <=> %(v)s::vector AS d FROM {src} t{only}), "
                       "cut AS (SELECT d FROM r ORDER BY d LIMIT 1 OFFSET %(off)s) "
                       "SELECT id, d FROM r WHERE d <= COALESCE((SELECT d FROM cut), 'infinity'::float8)").format(
            ident=ident, vec=vec, src=src, only=only)

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        if self._conn is None or self._model is None:
            raise RuntimeError("pgvector arm: prepare() must run before search()")
        queries = embed(self._model, [q.question for q in questions], "query", self._cache, BATCH)
        stmt = self.statement()
        if self.index == "hnsw":  # HNSW returns at most ef_search rows: never fewer than depth
            self.ef_search_used = min(EF_SEARCH_MAX, max(int(self.hnsw["ef_search"]), depth))
            self._conn.execute(f"SET hnsw.ef_search = {self.ef_search_used}")
        out = []
        for q, v in zip(questions, queries, strict=True):
            params = {"v": vector_literal(v), "off": max(depth - 1, 0), "k": depth, "ids": self.corpus_ids}
            rows = self._conn.execute(stmt, params).fetchall() if depth > 0 else []
            found, outside = self.matched([(i, 1.0 - float(d)) for i, d in rows])
            hits = hits_from_scores([i for i, _ in found], np.array([s for _, s in found], dtype=np.float64), depth)
            out.append(ArmResult(q.question_id, self.name, hits, None if hits else "the table has no vectors",
                                 frozenset(h.chunk_id for h in hits) & outside))
        return out

    def describe(self) -> dict[str, Any]:
        out = {**self.describe_base(), "pgvector": self.extension_version, "model": self.model_name,
               "index": self.index, "distance": "cosine (<=>), score = 1 - distance",
               "hnsw": self.hnsw if self.index == "hnsw" else None, "ef_search_used": self.ef_search_used}
        if self._model is not None:
            out["model_describe"] = self._model.describe()
        return out
