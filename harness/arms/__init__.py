"""Search arms, registered by name in :data:`ARMS`.

Importing this package registers the built-in arms (``bm25``, ``dense``,
``boost``, ``external``) on :func:`load_builtin_arms`.

Modules, in pipeline order:

* ``base``      the Arm interface, ArmResult / Hit records, the ARMS registry
* ``bm25``      Okapi BM25 over chunks
* ``dense``     cosine similarity of sentence embeddings (exact search)
* ``flat_search`` exact top-k inner products on fixed BLAS block shapes, ties by id (``dense``)
* ``boost``     the service's doc-priority arm
* ``external``  ranked lists captured elsewhere (TREC / Parquet / JSONL)
* ``http``      a live search endpoint asked per question (``http_template`` requests,
  ``http_calls`` concurrent journaled calls, ``http_reply`` the ranked list)
* ``rrf_rounding`` rounding rules of printed fused scores, exact fused sums
* ``rrf_decode``  per-arm ranks recovered from a fused RRF score (ruling pages, ``http`` arms)
* ``termdoc``   sparse term-document matrices shared by ``bm25`` and ``boost``
* ``sqlite_fts5`` SQLite FTS5's ``bm25()`` (standard library)
* ``tantivy_bm25`` tantivy's BM25 (the ``engines`` extra)
* ``pg_cluster`` a throwaway PostgreSQL cluster on a Unix socket
* ``pg_base``   what the PostgreSQL arms share: DSN, preflight, the searched table
* ``postgres``  PostgreSQL full text (``ts_rank`` / ``ts_rank_cd``)
* ``pgvector``  PostgreSQL with pgvector (exact, HNSW)
"""

import importlib

from harness.arms.base import ARMS, Arm, ArmContext, ArmResult, Hit, hits_from_scores

__all__ = [  # noqa: RUF022 - modules first, then the re-exported names
    "base", "bm25", "boost", "dense", "external", "flat_search", "http", "http_calls",
    "http_reply", "http_template", "rrf_decode", "rrf_rounding", "termdoc", "sqlite_fts5",
    "tantivy_bm25", "pg_cluster", "pg_base", "postgres", "pgvector",
    "ARMS", "Arm", "ArmContext", "ArmResult", "Hit", "hits_from_scores", "load_builtin_arms",
]


def load_builtin_arms() -> None:
    """Import the modules that register the built-in arms (idempotent)."""
    for mod in ("bm25", "boost", "dense", "external", "http", "sqlite_fts5", "tantivy_bm25", "postgres",
                "pgvector"):
        try:
            importlib.import_module(f"harness.arms.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name != f"harness.arms.{mod}":
                raise
