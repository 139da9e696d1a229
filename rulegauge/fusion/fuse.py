"""Rank fusion over stored per-arm ranks, vectorised across questions and chunks.

:func:`fuse` gives one config's fused lists for every question, in exact fused
order, by the config's method (:data:`rulegauge.fusion.method.FUSION_METHODS`; one
method per module: ``rrf``, ``combsum``, ``combmnz``, ``hybrid``, ``relscore``,
``borda``, ``isr``; docs/fusion.md). Weighted RRF (Cormack, Clarke & Buettcher,
SIGIR 2009), the service's method::

    fused(d) = sum over arms a of the config with 0 < rank_a(d) <= depth_a of
               w_a / (k + rank_a(d))
    ceiling  = sum over the config's arms of w_a / (k + 1)

Ranks start at 1. A chunk that no arm of the config ranked within its depth is
not in the fused list. RRF's order is decided on exact rational scores, ties by
chunk id ascending (:mod:`rulegauge.fusion.exact`: float sums equal as rationals may
differ in the last bit); every other method's as :mod:`rulegauge.fusion.order` says.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rulegauge.fusion.exact import rrf_order, rrf_scores
from rulegauge.fusion.matrix import RankMatrix
from rulegauge.fusion.method import FUSION_METHODS, fused_scores
from rulegauge.fusion.records import FusionConfig

__all__ = ["FUSION_METHODS", "Fused", "RankMatrix", "fuse", "rrf"]


def rrf(ranks: np.ndarray, k: float, weights: np.ndarray, depths: np.ndarray) -> np.ndarray:
    """Weighted RRF over a (rows, arms) int matrix of ranks (0 = not ranked).

    Returns float64 scores (arms added in column order); 0.0 exactly where no arm
    voted. The order of a fused list is decided exactly (:func:`rrf_order`).
    """
    return rrf_scores(ranks, k, weights, depths)


@dataclass(frozen=True)
class Fused:
    """One config's fused lists for all questions, in fused order.

    ``rows`` index the :class:`RankMatrix`; ``fused_rank`` restarts at 1 per question.
    """

    config: FusionConfig
    rows: np.ndarray
    question_index: np.ndarray
    fused_rank: np.ndarray
    score: np.ndarray
    arms_voted: np.ndarray


def _ranks_of(q: np.ndarray) -> np.ndarray:
    starts = np.r_[0, np.flatnonzero(np.diff(q)) + 1] if len(q) else np.zeros(0, np.int64)
    out: np.ndarray = (np.arange(len(q)) - np.repeat(starts, np.diff(np.r_[starts, len(q)])) + 1).astype(np.int64)
    return out


def fuse(matrix: RankMatrix, config: FusionConfig) -> Fused:
    """Fuse one config from the stored ranks (see module docstring)."""
    sub = matrix.arm_columns(config.arms)
    depths = np.asarray(config.depths, dtype=np.int64)
    voted = ((sub > 0) & (sub <= depths[None, :])).sum(axis=1)
    if config.method == "rrf":
        weights = np.asarray(config.weights, dtype=np.float64)
        scores = rrf(sub, config.k, weights, depths)
        keep = np.flatnonzero(voted > 0)
        idx = keep[rrf_order(matrix.question_index[keep], sub[keep], config.k, config.weights,
                             config.depths, matrix.chunk_rank[keep], scores[keep])]
        q = matrix.question_index[idx]
        return Fused(config, idx, q, _ranks_of(q), scores[idx], voted[idx])
    from rulegauge.fusion.kernel import planes_of  # the dense planes every method scores on
    from rulegauge.fusion.order import order_keys

    method = FUSION_METHODS.get(config.method)
    planes, col = planes_of(matrix)
    plane = fused_scores(method, planes, config)
    key = order_keys(method, config, planes, plane, planes.votes(config))
    keep = np.flatnonzero(voted > 0)
    qk, ck = matrix.question_index[keep], col[keep]
    idx = keep[np.lexsort((ck, -key[qk, ck], qk))]
    q = matrix.question_index[idx]
    return Fused(config, idx, q, _ranks_of(q), plane[q, col[idx]], voted[idx])
