"""CombMNZ over normalised arm scores, registered as ``combmnz``.

    fused(d) = n(d) * sum over voting arms of w_a * norm_a(s_a(d))

``n(d)`` is the number of the config's arms voting for ``d``; ``norm`` as for CombSUM
(``min-max`` default, ``z-score``, ``sum``). Ceiling: ``A * sum_a w_a`` for ``min-max``
and ``sum`` (A arms); none for ``z-score``. Exact order: float64 score desc (fixed
operations), equal floats by chunk id. Equal to ranx ``fuse(norm=..., method="mnz")``
with unit weights. Reference: Fox & Shaw, TREC-2, 1993.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from rulegauge.fusion.comb_sum import COMB_NORM, RANX_NORMS, weighted_sum
from rulegauge.fusion.method import FusionMethod, register
from rulegauge.fusion.planes import Planes

if TYPE_CHECKING:
    from rulegauge.fusion.records import FusionConfig


@register
class CombMNZ(FusionMethod):
    name = "combmnz"
    description = "CombMNZ: arms voting x weighted sum of normalised arm scores"
    source = "Fox & Shaw, TREC-2 1993; ranx mnz"
    params = (COMB_NORM,)
    rank_based = False
    axis = "arms voting x sum of weighted normalised arm scores"

    def ranx_equivalent(self, config: FusionConfig) -> tuple[str | None, str, dict[str, Any]] | None:
        """ranx ``mnz`` (unweighted: ranx's CombMNZ takes no weights)."""
        norm = RANX_NORMS.get(str(self.option(config, "norm")))
        return (norm, "mnz", {}) if norm is not None and set(config.weights) == {1.0} else None

    def fuse(self, planes: Planes, config: FusionConfig) -> np.ndarray:
        n = np.zeros(planes.shape)
        for j in range(len(config.arms)):
            n += planes.voted(config, j)
        total = weighted_sum(planes, config, self.option(config, "norm"))
        total *= n
        return total

    def ceiling(self, config: FusionConfig) -> float | None:
        if self.option(config, "norm") == "z-score":
            return None
        return len(config.arms) * float(sum(config.weights))
