"""Inverse square rank fusion, registered as ``isr``.

    fused(d) = n(d) * sum over voting arms of w_a / rank_a(d)^2
    ceiling  = A * sum_a w_a (every one of the A arms ranks the chunk first)

``n(d)`` is the number of the config's arms that rank ``d`` within their depth (a
CombMNZ of ``1/r^2``). Parameters: per-arm ``weights`` and ``depths``. Exact order:
rational scores, ties by chunk id. With unit weights equal to ranx ``isr``.
Reference: Mourao, Martins & Magalhaes, "Multimodal medical information retrieval
with unsupervised rank fusion", Comput. Med. Imaging Graph. 39, 2015.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.fusion.method import FusionMethod, Planes, register

if TYPE_CHECKING:
    from harness.fusion.records import FusionConfig


@register
class ISR(FusionMethod):
    name = "isr"
    description = "inverse square rank: n_voted * sum of w / rank^2"
    source = "Mourao et al., CMIG 2015; ranx isr"
    rank_based = True
    axis = "arms voting x sum of w / rank^2"

    def fuse(self, planes: Planes, config: FusionConfig) -> np.ndarray:
        total, n = np.zeros(planes.shape), np.zeros(planes.shape)
        for j, w in enumerate(config.weights):
            r, _, votes = planes.arm(config, j)
            rf = np.where(votes, r, 1).astype(np.float64)
            total = total + np.where(votes, float(w) / (rf * rf), 0.0)
            n = n + votes
        return total * n

    def ceiling(self, config: FusionConfig) -> float | None:
        return len(config.arms) * float(sum(config.weights))

    def exact_score(self, ranks: Sequence[int], config: FusionConfig, context: Any) -> Fraction:
        total, n = Fraction(0), 0
        for r, w, d in zip(ranks, config.weights, config.depths, strict=True):
            if 0 < int(r) <= int(d):
                total += Fraction(float(w)) / (int(r) * int(r))
                n += 1
        return total * n
