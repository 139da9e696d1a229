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

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from rulegauge.fusion.comb_sum import weighted_sum
from rulegauge.fusion.method import FusionMethod, Param, register
from rulegauge.fusion.normalise import normalised
from rulegauge.fusion.planes import Planes

if TYPE_CHECKING:
    from rulegauge.fusion.records import FusionConfig

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
        norm = _NORM[self.option(config, "norm")]
        mean = self.option(config, "mean")
        # a weighted mean depends on the weights' ratios only: relative to the largest, so that
        # scaling every weight by one factor gives the same floats (no overflow or underflow either)
        top = max(float(w) for w in config.weights)
        config = dataclasses.replace(config, weights=tuple(float(w) / top for w in config.weights))
        if mean == "arithmetic":  # over all the config's arms: one not voting adds 0.0 with its weight
            wsum = 0.0
            for w in config.weights:
                wsum = wsum + float(w)
            acc = weighted_sum(planes, config, norm)
            if wsum > 0:
                acc /= wsum
            return acc if wsum > 0 else np.zeros(planes.shape)
        acc, wsums = np.zeros(planes.shape), np.zeros(planes.shape)
        for j, w in enumerate(config.weights):  # over the arms voting with a score > 0
            x = normalised(planes, config, j, norm)  # 0.0 where the arm did not vote
            pos = x > 0
            if mean == "geometric":
                acc = acc + float(w) * _log(planes, config, j, norm, x)
            else:
                acc = acc + np.where(pos, float(w) / np.where(pos, x, 1.0), 0.0)
            wsums = wsums + np.where(pos, float(w), 0.0)
        ok = wsums > 0
        if mean == "geometric":
            return np.where(ok, np.exp(acc / np.where(ok, wsums, 1.0)), 0.0)
        return np.where(ok & (acc > 0), wsums / np.where(acc > 0, acc, 1.0), 0.0)

    def ceiling(self, config: FusionConfig) -> float | None:
        return 1.0


def _log(planes: Planes, config: FusionConfig, j: int, norm: str, x: np.ndarray) -> np.ndarray:
    """``ln x`` where ``x > 0``, else 0.0, kept per (arm, norm, depth) like ``x`` itself."""
    def make() -> np.ndarray:
        pos = x > 0
        return np.where(pos, np.log(np.where(pos, x, 1.0)), 0.0)

    return planes.memo(("log-normalised", config.arms[j], norm, int(config.depths[j])), make)
