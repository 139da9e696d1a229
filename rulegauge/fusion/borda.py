"""Borda count (BordaFuse), registered as ``borda``.

For a question, the candidates ``C`` are every chunk any of the config's arms ranked
within its depth (``N = |C|``). Arm ``a`` with ``n_a`` chunks gives its rank-``r``
chunk ``N - r + 1`` points and each chunk of ``C`` it did not rank the mean of the
points left, ``(N - n_a + 1) / 2``.

    fused(d) = sum_a w_a * points_a(d)

No fixed ceiling (the top score depends on the question's candidate count), so
``score_ratio`` is empty. Parameters: per-arm ``weights`` and ``depths``. Exact
order: rational scores, ties by chunk id. Equal to ranx ``bordafuse`` (unit weights)
and ``w_bordafuse``. Reference: Aslam & Montague, "Models for metasearch", SIGIR 2001.
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
class Borda(FusionMethod):
    name = "borda"
    description = "Borda count over the union of the arms' lists (BordaFuse)"
    source = "Aslam & Montague, SIGIR 2001; ranx bordafuse / w_bordafuse"
    rank_based = True
    axis = "weighted Borda points (the top depends on the question's candidate count)"

    def ranx_equivalent(self, config: FusionConfig) -> tuple[str | None, str, dict[str, Any]] | None:
        """ranx ``bordafuse`` (``w_bordafuse`` for weights)."""
        if set(config.weights) == {1.0}:
            return (None, "bordafuse", {})
        return (None, "w_bordafuse", {"weights": list(config.weights)})

    def fuse(self, planes: Planes, config: FusionConfig) -> np.ndarray:
        big_n = planes.votes(config).sum(axis=1, keepdims=True).astype(np.float64)
        total = np.zeros(planes.shape)
        for j, w in enumerate(config.weights):
            r, _, votes = planes.listed(config, j)  # points on the arm's list; column 0 = not ranked
            n_a = votes.sum(axis=1, keepdims=True).astype(np.float64)
            points = np.where(votes, big_n - r + 1.0, (big_n - n_a + 1.0) / 2.0)
            total += float(w) * planes.spread(config, j, points)
        return total

    def float_exact(self, config: FusionConfig) -> bool:
        """Integer weights: every term is a half-integer times a small integer, every sum exact."""
        return all(float(w).is_integer() and 0 < w <= 2**20 for w in config.weights)

    codes_need_lengths = True

    def tie_codes(self, ranks: np.ndarray, lengths: np.ndarray, config: FusionConfig) -> np.ndarray:
        """The sorted multiset of (weight class, points) per arm: a rank, or the arm's list
        length for a chunk it did not rank (whose points are (N - n_a + 1) / 2; N is the
        question's, the same for every candidate of it)."""
        span = int(max(ranks.max(initial=0), lengths.max(initial=0))) + 1
        wclass = {w: i + 1 for i, w in enumerate(sorted(set(config.weights)))}
        return np.sort(np.stack([(wclass[w] * 2 * span + np.where(ranks[j] > 0, ranks[j], span + lengths[j]))
                                 .astype(np.int64) for j, w in enumerate(config.weights)]), axis=0)

    def exact_context(self, planes: Planes, config: FusionConfig, q: int) -> Any:
        voted = planes.row_ranks(config, q) > 0  # (U, A), this question only
        return int(voted.any(axis=1).sum()), [int(x) for x in voted.sum(axis=0)]

    def exact_score(self, ranks: Sequence[int], config: FusionConfig, context: Any) -> Fraction:
        big_n, per_arm = context
        total = Fraction(0)
        for r, w, d, n_a in zip(ranks, config.weights, config.depths, per_arm, strict=True):
            pts = Fraction(big_n - int(r) + 1) if 0 < int(r) <= int(d) else Fraction(big_n - n_a + 1, 2)
            total += Fraction(float(w)) * pts
        return total
