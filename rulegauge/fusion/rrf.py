"""Weighted reciprocal-rank fusion (the service's method), registered as ``rrf``.

    fused(d) = sum over arms a of the config with 0 < rank_a(d) <= depth_a of w_a / (k + rank_a(d))
    ceiling  = sum over the config's arms of w_a / (k + 1)

Parameters: ``k`` (> 0, default 60), per-arm ``weights`` and ``depths``. Exact order:
rational scores (:func:`rulegauge.fusion.exact.rrf_order`), ties by chunk id.
Reference: Cormack, Clarke & Buettcher, "Reciprocal rank fusion outperforms Condorcet
and individual rank learning methods", SIGIR 2009; ranx ``rrf``.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from rulegauge.fusion.exact import exact_score
from rulegauge.fusion.method import FusionMethod, Param, register
from rulegauge.fusion.planes import Planes

if TYPE_CHECKING:
    from rulegauge.fusion.records import FusionConfig


@register
class RRF(FusionMethod):
    name = "rrf"
    description = "weighted reciprocal-rank fusion: sum of w / (k + rank)"
    source = "Cormack, Clarke & Buettcher, SIGIR 2009; ranx rrf"
    params = (Param("k", "RRF constant k (> 0)", default=60.0),)
    rank_based = True
    takes_k = True

    def ranx_equivalent(self, config: FusionConfig) -> tuple[str | None, str, dict[str, Any]] | None:
        """ranx ``rrf`` (unweighted only: ranx's RRF takes no weights)."""
        return (None, "rrf", {"k": config.k}) if set(config.weights) == {1.0} else None

    def fuse(self, planes: Planes, config: FusionConfig) -> np.ndarray:
        """Per-arm lookup tables ``w / (k + r)``: the same float64 operations as
        :func:`rulegauge.fusion.exact.rrf_scores`, terms added in config arm order. An arm's
        (Q, U) term plane is kept for the grid's next configs with the same arm, weight, k
        and depth (:meth:`Planes.memo`: configs that differ in their other arms reuse it)."""
        terms = [self._term(planes, arm, float(w), float(config.k), int(depth))
                 for arm, w, depth in zip(config.arms, config.weights, config.depths, strict=True)]
        if not terms:
            return np.zeros(planes.shape)
        if len(terms) == 1:
            return terms[0].copy()
        total: np.ndarray = np.add(terms[0], terms[1])  # a new array: the next terms are added in place
        for term in terms[2:]:
            np.add(total, term, out=total)
        return total

    @staticmethod
    def _term(planes: Planes, arm: str, w: float, k: float, depth: int) -> np.ndarray:
        a = planes.arms.index(arm)
        top = min(depth, planes.max_rank[a])

        def make() -> np.ndarray:
            lut = np.zeros(planes.max_rank[a] + 1)
            lut[1 : top + 1] = w / (k + np.arange(1, top + 1, dtype=np.float64))
            out: np.ndarray = np.take(lut, planes.ranks[a])
            return out

        return planes.memo(("rrf-term", a, w, k, top), make)

    def ceiling(self, config: FusionConfig) -> float | None:
        return sum(w / (config.k + 1) for w in config.weights)

    def score_axis(self, config: FusionConfig) -> str:
        return (f"weighted RRF score sum w/(k+rank); ceiling sum w/(k+1) = {self.ceiling(config):.6g} "
                f"(k={config.k:g})")

    def exact_score(self, ranks: Sequence[int], config: FusionConfig, context: Any) -> Fraction:
        return exact_score(ranks, config.k, config.weights, config.depths)
