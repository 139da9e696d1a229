"""OpenSearch-style hybrid score fusion, registered as ``hybrid``.

Each arm's scores are normalised over its list (``norm``: ``min-max``, OpenSearch's
``min_max`` with 1.0 for an all-equal list and 0.001 for the lowest score, or ``l2``),
then combined by a weighted mean (``mean``):

* ``arithmetic``: ``sum_a w_a s_a / sum_a w_a`` over all the config's arms (an arm
  that did not rank the chunk contributes 0.0 with its weight);
* ``geometric``: ``exp(sum w_a ln s_a / sum w_a)`` over the arms that ranked it;
* ``harmonic``: ``sum w_a / sum (w_a / s_a)`` over the arms that ranked it
  (an arm's 0.0 score, possible under ``l2``, is left out as OpenSearch does).

Ceiling 1.0 (a weighted mean of scores in [0, 1]). Exact order: float64 score desc
(fixed operations), equal floats by chunk id. Reference: OpenSearch neural-search,
normalization processor (``min_max``, ``l2``; ``arithmetic_mean``, ``geometric_mean``,
``harmonic_mean`` with ``weights``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from harness.fusion.method import FusionMethod, Param, Planes, register
from harness.fusion.normalise import NORMS

if TYPE_CHECKING:
    from harness.fusion.records import FusionConfig

_NORM = {"min-max": "min-max-os", "l2": "l2"}


@register
class Hybrid(FusionMethod):
    name = "hybrid"
    description = "OpenSearch-style hybrid: min-max or L2 normalisation, weighted arithmetic/geometric/harmonic mean"
    source = "OpenSearch neural-search normalization processor"
    params = (Param("norm", "per-list score normalisation", ("min-max", "l2"), "min-max",
                    (("min-max", "minmax"), ("l2", "l2"))),
              Param("mean", "weighted mean of the normalised scores", ("arithmetic", "geometric", "harmonic"),
                    "arithmetic", (("arithmetic", "arith"), ("geometric", "geo"), ("harmonic", "harm"))))
    rank_based = False
    axis = "weighted mean of normalised arm scores"

    def fuse(self, planes: Planes, config: FusionConfig) -> np.ndarray:
        fn = NORMS.get(_NORM[self.option(config, "norm")])
        mean = self.option(config, "mean")
        acc, wsum = np.zeros(planes.shape), np.zeros(planes.shape)
        for j, w in enumerate(config.weights):
            _, s, votes = planes.listed(config, j)  # per-list work on the arm's list, then spread
            x = fn(s, votes)
            pos = votes & (x > 0)
            if mean == "arithmetic":
                acc = acc + float(w) * planes.spread(config, j, x)
                wsum = wsum + float(w)
                continue
            if mean == "geometric":
                term = np.where(pos, float(w) * np.log(np.where(pos, x, 1.0)), 0.0)
            else:
                term = np.where(pos, float(w) / np.where(pos, x, 1.0), 0.0)
            acc = acc + planes.spread(config, j, term)
            wsum = wsum + planes.spread(config, j, np.where(pos, float(w), 0.0))
        ok = wsum > 0
        if mean == "arithmetic":
            return np.where(ok, acc / np.where(ok, wsum, 1.0), 0.0)
        if mean == "geometric":
            return np.where(ok, np.exp(acc / np.where(ok, wsum, 1.0)), 0.0)
        return np.where(ok & (acc > 0), wsum / np.where(acc > 0, acc, 1.0), 0.0)

    def ceiling(self, config: FusionConfig) -> float | None:
        return 1.0
