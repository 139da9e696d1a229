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

from rulegauge.fusion.method import FusionMethod, register
from rulegauge.fusion.planes import Planes

if TYPE_CHECKING:
    from rulegauge.fusion.records import FusionConfig


@register
class ISR(FusionMethod):
    name = "isr"
    description = "inverse square rank: n_voted * sum of w / rank^2"
    source = "Mourao et al., CMIG 2015; ranx isr"
    rank_based = True
    axis = "arms voting x sum of w / rank^2"

    def ranx_equivalent(self, config: FusionConfig) -> tuple[str | None, str, dict[str, Any]] | None:
        """ranx ``isr`` (unweighted: ranx's ISR takes no weights)."""
        return (None, "isr", {}) if set(config.weights) == {1.0} else None

    def fuse(self, planes: Planes, config: FusionConfig) -> np.ndarray:
        """Per-arm lookup tables by rank (``w / r^2`` and the vote 1.0 within the depth)."""
        total, n = np.zeros(planes.shape), np.zeros(planes.shape)
        for arm, w, depth in zip(config.arms, config.weights, config.depths, strict=True):
            a = planes.arms.index(arm)
            term, vote = np.zeros((2, planes.max_rank[a] + 1))
            top = min(int(depth), planes.max_rank[a])
            r = np.arange(1, top + 1, dtype=np.float64)
            term[1 : top + 1] = float(w) / (r * r)
            vote[1 : top + 1] = 1.0
            total += np.take(term, planes.ranks[a])
            n += np.take(vote, planes.ranks[a])
        total *= n
        return total

    def ceiling(self, config: FusionConfig) -> float | None:
        return len(config.arms) * float(sum(config.weights))

    def tie_codes(self, ranks: np.ndarray, lengths: np.ndarray, config: FusionConfig) -> np.ndarray:
        """Equal weights: the exact score as a reduced fraction ``n * sum 1/r^2 = num / den``
        in int64 (``den`` = lcm of the squared ranks; equal codes iff equal scores, e.g. two
        arms at rank 4 and one at rank 2 are both 1/4), when it fits; otherwise the multiset
        of (weight, rank)."""
        n_arms = len(config.arms)
        if len(set(config.weights)) > 1 or int(ranks.max(initial=0)) ** (2 * n_arms) * n_arms**2 >= 2**62:
            return super().tie_codes(ranks, lengths, config)
        voted = ranks > 0
        r2 = np.where(voted, ranks.astype(np.int64) ** 2, 1)
        den = np.lcm.reduce(r2, axis=0)
        num = np.where(voted, den // r2, 0).sum(axis=0) * voted.sum(axis=0)
        g = np.gcd(num, den)
        return np.stack([num // g, den // g])

    def exact_score(self, ranks: Sequence[int], config: FusionConfig, context: Any) -> Fraction:
        total, n = Fraction(0), 0
        for r, w, d in zip(ranks, config.weights, config.depths, strict=True):
            if 0 < int(r) <= int(d):
                total += Fraction(float(w)) / (int(r) * int(r))
                n += 1
        return total * n
