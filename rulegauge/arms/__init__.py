"""Search arms, registered by name in :data:`ARMS`.

:func:`load_builtin_arms` registers the built-in arms and those of installed plug-in
packages (entry points ``rulegauge.arms``), through :mod:`rulegauge.core.plugins`.

Modules, in pipeline order:

* ``base``      the Arm interface, the ARMS registry
* ``results``   ArmResult: hits as Hit records or HitColumns (arrays of corpus rows, ranks, scores)
* ``bm25``      Okapi BM25 over chunks (``postings``: its exact per-question sums and top);
  preset ``lucene``: Lucene's BM25 with ``analyzers``' English chain
* ``analyzers`` token chains of the lexical presets (Lucene's EnglishAnalyzer order)
* ``dense``     cosine similarity of sentence embeddings (exact search)
* ``flat_search`` exact top-k inner products on fixed BLAS block shapes, ties by id (``dense``)
* ``boost``     the service's doc-priority arm
* ``external``  ranked lists captured elsewhere (TREC / Parquet / JSONL)
* ``http``      a live search endpoint asked per question (``http_template`` requests,
  ``http_calls`` concurrent journaled calls, ``http_reply`` the ranked list)
* ``http_ranks`` an ``http`` arm's per-arm ranks, disclosed or decoded, as arms
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

from rulegauge.arms.base import ARMS, Arm, ArmContext, hits_from_scores
from rulegauge.arms.results import ArmResult, Hit
from rulegauge.core import plugins

__all__ = [  # noqa: RUF022 - modules first, then the re-exported names
    "analyzers", "base", "bm25", "boost", "dense", "external", "flat_search", "http", "http_calls",
    "http_ranks", "http_reply", "http_template", "postings", "results", "rrf_decode", "rrf_rounding", "termdoc",
    "sqlite_fts5",
    "tantivy_bm25", "pg_cluster", "pg_base", "postgres", "pgvector",
    "ARMS", "Arm", "ArmContext", "ArmResult", "Hit", "hits_from_scores", "load_builtin_arms",
]


def load_builtin_arms() -> None:
    """Register the built-in arms and the plug-in arms of installed packages (idempotent;
    :mod:`rulegauge.core.plugins`). A new built-in arm module goes into
    ``rulegauge.core.plugins.GROUPS["rulegauge.arms"]``, the one list."""
    plugins.load("rulegauge.arms")
