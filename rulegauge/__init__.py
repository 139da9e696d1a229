"""rulegauge: retrieval-quality evaluation and regression harness for a board-game
rules question-answering service.

Public API (stable names; everything else is internal)::

    from rulegauge import RunOptions, run, open_run, load_goldset, load_config
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

__all__ = ["RunOptions", "__version__", "load_config", "load_goldset", "open_run", "run"]

_LAZY = {
    "RunOptions": ("rulegauge.pipeline.retrieval", "RunOptions"),
    "run": ("rulegauge.pipeline.retrieval", "run"),
    "open_run": ("rulegauge.store.rundir", "open_run"),
    "load_goldset": ("rulegauge.goldset.parse", "load_goldset"),
    "load_config": ("rulegauge.fusion.configs", "load_config"),
}


def __getattr__(name: str) -> Any:
    # lazy so that `import rulegauge` (and `rulegauge --help`) stays fast
    if name in _LAZY:
        mod, attr = _LAZY[name]
        return getattr(importlib.import_module(mod), attr)
    raise AttributeError(f"module 'rulegauge' has no attribute {name!r}")
