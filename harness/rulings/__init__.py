"""Production ruling pages: parse them, decode per-arm ranks, score them against gold.

Modules: ``segment`` / ``top`` / ``cells`` / ``rows`` / ``labels`` / ``merge`` /
``parse`` (page -> :class:`~harness.rulings.records.Ruling`), ``joint`` (a ruling's scores
together, each decoded by :mod:`harness.arms.rrf_decode`), ``records``
(frozen records), ``frames`` (Parquet shapes), ``importer`` (files -> rulings run),
``mapping`` / ``match`` / ``evaluate`` (production against a gold set), ``production``
(the ``production`` answerer over imported rulings).
See ``docs/rulings.md``.

The names below are imported lazily, so ``import harness.store.ruling_tables`` stays
cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "decode_score": "harness.arms.rrf_decode",
    "Decoding": "harness.arms.rrf_decode",
    "decode_ranking": "harness.rulings.joint",
    "parse_file": "harness.rulings.parse",
    "Ruling": "harness.rulings.records",
    "ParseFailure": "harness.rulings.records",
    "import_rulings": "harness.rulings.importer",
    "load_mapping": "harness.rulings.mapping",
    "match_rulings": "harness.rulings.match",
    "score_rulings": "harness.rulings.evaluate",
    "score_run": "harness.rulings.evaluate",
    "rulings_as_run_tables": "harness.rulings.evaluate",
}

MODULES = ("cells", "evaluate", "frames", "importer", "joint", "labels", "mapping",
           "match", "merge", "parse", "production", "records", "rows", "segment", "top")
__all__ = [*MODULES, *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'harness.rulings' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
