"""CombSUM over normalised arm scores, registered as ``combsum``.

    fused(d) = sum over voting arms of w_a * norm_a(s_a(d))

``norm`` is ``min-max`` (default), ``z-score`` or ``sum`` (:mod:`rulegauge.fusion.normalise`,
as ranx normalises). Ceiling: ``sum_a w_a`` for ``min-max`` and ``sum`` (each normalised
score is at most 1); none for ``z-score``. Exact order: float64 score desc (fixed
operations), equal floats by chunk id. Equal to ranx ``fuse(norm=..., method="sum")``
(unit weights) and ``method="wsum"``. Reference: Fox & Shaw, "Combination of multiple
searches", TREC-2, 1993.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from rulegauge.fusion.method import FusionMethod, Param, register
from rulegauge.fusion.normalise import normalised
from rulegauge.fusion.planes import Planes

if TYPE_CHECKING:
    from rulegauge.fusion.records import FusionConfig

COMB_NORM = Param("norm", "per-list score normalisation", ("min-max", "z-score", "sum"), "min-max",
                  (("min-max", "minmax"), ("z-score", "zscore"), ("sum", "sum")))


def weighted_sum(planes: Planes, config: FusionConfig, norm: str) -> np.ndarray:
    """Sum of w_a * normalised score (:func:`rulegauge.fusion.normalise.normalised`: over
    each arm's own list), arms in config order."""
    total = np.zeros(planes.shape)
    term = np.empty(planes.shape)
    for j, w in enumerate(config.weights):
        total += np.multiply(normalised(planes, config, j, norm), float(w), out=term)
    return total


RANX_NORMS = {"min-max": "min-max", "z-score": "zmuv", "sum": "sum"}
"""Our normalisations -> ranx's names of the same (``ranx.fuse(norm=...)``)."""


@register
class CombSUM(FusionMethod):
    name = "combsum"
    description = "CombSUM: weighted sum of normalised arm scores"
    source = "Fox & Shaw, TREC-2 1993; ranx sum / wsum"
    params = (COMB_NORM,)
    rank_based = False
    axis = "sum of weighted normalised arm scores"

    def ranx_equivalent(self, config: FusionConfig) -> tuple[str | None, str, dict[str, Any]] | None:
        """ranx ``sum`` (``wsum`` for weights, min-max only) after ranx's name of the norm."""
        norm = RANX_NORMS.get(str(self.option(config, "norm")))
        if norm is None:
            return None
        if set(config.weights) == {1.0}:
            return (norm, "sum", {})
        return (norm, "wsum", {"weights": list(config.weights)}) if norm == "min-max" else None

    def fuse(self, planes: Planes, config: FusionConfig) -> np.ndarray:
        return weighted_sum(planes, config, self.option(config, "norm"))

    def ceiling(self, config: FusionConfig) -> float | None:
        return None if self.option(config, "norm") == "z-score" else float(sum(config.weights))
