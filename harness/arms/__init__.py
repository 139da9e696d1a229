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
* ``rrf_rounding`` rounding rules of printed fused scores, exact fused sums
* ``rrf_decode``  per-arm ranks recovered from a fused RRF score (ruling pages, ``http`` arms)
* ``termdoc``   sparse term-document matrices shared by ``bm25`` and ``boost``
"""

import importlib

from harness.arms.base import ARMS, Arm, ArmContext, ArmResult, Hit, hits_from_scores

__all__ = [  # noqa: RUF022 - modules first, then the re-exported names
    "base", "bm25", "boost", "dense", "external", "flat_search", "rrf_decode", "rrf_rounding",
    "termdoc",
    "ARMS", "Arm", "ArmContext", "ArmResult", "Hit", "hits_from_scores", "load_builtin_arms",
]


def load_builtin_arms() -> None:
    """Import the modules that register the built-in arms (idempotent)."""
    for mod in ("bm25", "boost", "dense", "external"):
        try:
            importlib.import_module(f"harness.arms.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name != f"harness.arms.{mod}":
                raise
