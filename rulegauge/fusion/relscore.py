"""Weaviate-style relative-score fusion, registered as ``relscore``.

Each arm's scores are min-max normalised over its list (the best 1.0, the worst 0.0;
an all-equal list 1.0), then summed with the weights:

    fused(d) = sum over voting arms of w_a * (s_a(d) - min_a) / (max_a - min_a)

Weaviate's ``alpha`` is the weight pair ``{dense = alpha, bm25 = 1 - alpha}``.
Ceiling ``sum_a w_a``. Exact order: float64 score desc (fixed operations), equal
floats by chunk id. Reference: Weaviate hybrid search, ``relativeScoreFusion``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rulegauge.fusion.comb_sum import weighted_sum
from rulegauge.fusion.method import FusionMethod, register
from rulegauge.fusion.planes import Planes

if TYPE_CHECKING:
    from rulegauge.fusion.records import FusionConfig


@register
class RelativeScore(FusionMethod):
    name = "relscore"
    description = "Weaviate-style relative-score fusion: weighted sum of min-max scores"
    source = "Weaviate hybrid search, relativeScoreFusion"
    rank_based = False
    axis = "sum of weighted min-max arm scores"

    def fuse(self, planes: Planes, config: FusionConfig) -> np.ndarray:
        return weighted_sum(planes, config, "relative")

    def ceiling(self, config: FusionConfig) -> float | None:
        return float(sum(config.weights))
