"""From one config's full fused chunk lists to its ``metrics`` rows (the full path the
scoring kernel is tested against; ``rulegauge run`` scores through
:mod:`rulegauge.pipeline.sweep` and builds the ``fused`` table in
:mod:`rulegauge.pipeline.fused_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rulegauge.fusion.fuse import Fused
from rulegauge.metrics.family import Metric
from rulegauge.metrics.gold import Gold
from rulegauge.metrics.ranking import score


def metrics_frame(fused: Fused, gold: Gold, specs: Sequence[Metric]) -> pd.DataFrame:
    """Every question x metric row of one config (defaults where nothing was retrieved)."""
    values = score(specs, fused, gold)
    nq = len(gold.questions)
    qids = np.array([q.question_id for q in gold.questions], dtype=object)
    answerable = np.array([q.answerable for q in gold.questions])
    frames = [pd.DataFrame({"question_id": qids.astype(str), "config_id": fused.config.config_id,
                            "metric": s.name, "value": values[s.name], "answerable": answerable})
              for s in specs]
    out = pd.concat(frames, ignore_index=True)
    if len(out) != nq * len(specs):
        raise RuntimeError("metrics: a question or metric row went missing")
    return out
