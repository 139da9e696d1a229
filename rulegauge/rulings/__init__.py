"""Production ruling pages: parse them, decode per-arm ranks, score them against gold.

Modules: ``segment`` / ``top`` / ``cells`` / ``rows`` / ``labels`` / ``merge`` /
``parse`` (page -> :class:`~rulegauge.rulings.records.Ruling`), ``joint`` (a ruling's scores
together, each decoded by :mod:`rulegauge.arms.rrf_decode`), ``records``
(frozen records), ``frames`` (Parquet shapes), ``importer`` (files -> rulings run),
``mapping`` / ``match`` / ``evaluate`` (production against a gold set), ``production``
(the ``production`` answerer over imported rulings).
See ``docs/rulings.md``.

The names below are imported lazily, so ``import rulegauge.store.ruling_tables`` stays
cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "decode_score": "rulegauge.arms.rrf_decode",
    "Decoding": "rulegauge.arms.rrf_decode",
    "decode_ranking": "rulegauge.rulings.joint",
    "parse_file": "rulegauge.rulings.parse",
    "Ruling": "rulegauge.rulings.records",
    "ParseFailure": "rulegauge.rulings.records",
    "import_rulings": "rulegauge.rulings.importer",
    "load_mapping": "rulegauge.rulings.mapping",
    "match_rulings": "rulegauge.rulings.match",
    "score_rulings": "rulegauge.rulings.evaluate",
    "score_run": "rulegauge.rulings.evaluate",
    "rulings_as_run_tables": "rulegauge.rulings.evaluate",
}

# the re-exported names
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'rulegauge.rulings' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
