"""rulegauge: retrieval-quality evaluation and regression harness for a board-game
rules question-answering service.

Public API (stable names; everything else is internal; README "Python API")::

    from rulegauge import RunOptions, run, open_run, load_goldset, load_config, compare, gate

Every name is imported on first use, so ``import rulegauge`` loads none of pandas, pyarrow or numpy.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.2.0"

__all__ = ["RunOptions", "__version__", "compare", "gate", "load_config", "load_goldset", "open_run", "run"]

_LAZY = {
    "RunOptions": ("rulegauge.pipeline.retrieval", "RunOptions"),
    "run": ("rulegauge.pipeline.retrieval", "run"),
    "open_run": ("rulegauge.store.rundir", "open_run"),
    "load_goldset": ("rulegauge.goldset.parse", "load_goldset"),
    "load_config": ("rulegauge.fusion.configs", "load_config"),
    "compare": ("rulegauge.regression.api", "compare"),
    "gate": ("rulegauge.regression.api", "gate"),
}


def __getattr__(name: str) -> Any:
    # lazy so that `import rulegauge` (and `rulegauge --help`) stays fast
    if name in _LAZY:
        mod, attr = _LAZY[name]
        return getattr(importlib.import_module(mod), attr)
    raise AttributeError(f"module 'rulegauge' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
