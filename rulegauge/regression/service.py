"""The service's own fusion config in a run: RRF at k = 60 over bm25, dense and boost with unit
weights, the reference every comparison, headline and pool measures against.

:func:`service_config` finds it in a run's ``configs`` table by its id, else by its facts
(method, k, arm set, weights), so a grid that names it otherwise still has a reference;
None when the run has no such config.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

SERVICE_CONFIG = "rrf_k60_bm25+dense+boost"
SERVICE_ARMS = ("bm25", "boost", "dense")


def service_config(configs: pd.DataFrame) -> str | None:
    """The id of the service config in a run's ``configs`` table, or None."""
    ids = [str(c) for c in configs["config_id"]]
    if SERVICE_CONFIG in ids:
        return SERVICE_CONFIG
    for row in configs.to_dict(orient="records"):
        weights = [float(w) for w in row["weights"]]
        arms = tuple(sorted(str(a) for a in row["arms"]))
        if (row["method"] == "rrf" and float(row["k"]) == 60.0 and arms == SERVICE_ARMS
                and all(w == 1.0 for w in weights)):
            return str(row["config_id"])
    return None
