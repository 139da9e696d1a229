"""Rank fusion over stored per-arm ranks, vectorised across questions and chunks.

Weighted reciprocal-rank fusion (Cormack, Clarke & Buettcher, SIGIR 2009)::

    fused(d) = sum over arms a of the config with 0 < rank_a(d) <= depth_a of
               w_a / (k + rank_a(d))
    ceiling  = sum over the config's arms of w_a / (k + 1)

Ranks start at 1. A chunk that no arm of the config ranked within its depth is
not in the fused list. The fused order is decided on exact rational scores, ties
by chunk id ascending (:mod:`harness.fusion.exact`: float sums equal as rationals
may differ in the last bit). Every arm runs once per question; each config is then
fused from the stored ranks without a Python loop per chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.core.registry import Registry
from harness.fusion.configs import FusionConfig
from harness.fusion.exact import rrf_order, rrf_scores

FusionFn = Callable[[np.ndarray, float, np.ndarray, np.ndarray], np.ndarray]
FUSION_METHODS: Registry[FusionFn] = Registry("fusion method")


@FUSION_METHODS.register("rrf")
def rrf(ranks: np.ndarray, k: float, weights: np.ndarray, depths: np.ndarray) -> np.ndarray:
    """Weighted RRF over a (rows, arms) int matrix of ranks (0 = not ranked).

    Returns float64 scores (arms added in column order); 0.0 exactly where no arm
    voted. The order of a fused list is decided exactly (:func:`rrf_order`).
    """
    return rrf_scores(ranks, k, weights, depths)


#: exact orderings per fusion method: (groups, ranks, k, weights, depths, id_rank, scores) -> index
FUSION_ORDERS: Registry[Callable[..., np.ndarray]] = Registry("fusion order")
FUSION_ORDERS.register("rrf")(rrf_order)


@dataclass(frozen=True)
class RankMatrix:
    """Every (question, chunk) any arm ranked, with each arm's rank (0 = unranked).

    Rows are sorted by question index, then chunk id.
    """

    question_ids: np.ndarray  # question index -> id
    question_index: np.ndarray  # row -> question index
    chunk_ids: np.ndarray  # row -> chunk id (object)
    chunk_rank: np.ndarray  # row -> rank of the chunk id in ascending id order
    arms: tuple[str, ...]
    ranks: np.ndarray  # (rows, arms) int32

    @classmethod
    def from_arm_ranks(cls, arm_ranks: pd.DataFrame, question_ids: list[str],
                       arms: list[str] | tuple[str, ...]) -> RankMatrix:
        """Pivot an ``arm_ranks`` table (question_id, arm, chunk_id, rank) into a matrix
        (hash-factorised codes, no per-row Python; a chunk ranked twice by one arm keeps its best rank)."""
        df = arm_ranks[arm_ranks["arm"].isin(list(arms))]
        qcode = pd.Categorical(df["question_id"], categories=list(question_ids)).codes.astype(np.int64)
        if (qcode < 0).any():
            unknown = sorted(set(df["question_id"][qcode < 0].astype(str)))
            raise ValueError(f"arm_ranks holds unknown question ids: {unknown[:5]}")
        codes, uniques = pd.factorize(df["chunk_id"].astype(str), sort=False)
        uniq = np.asarray(uniques, dtype=str)
        by_id = np.argsort(uniq, kind="stable")
        rank_of = np.empty(len(uniq), np.int64)
        rank_of[by_id] = np.arange(len(uniq))
        ccode = rank_of[codes]  # chunk code in ascending id order
        acode = pd.Categorical(df["arm"], categories=list(arms)).codes.astype(np.int64)
        key = qcode * max(len(uniq), 1) + ccode
        ukey, row = np.unique(key, return_inverse=True)
        big = np.iinfo(np.int32).max
        ranks = np.full((len(ukey), len(arms)), big, np.int32)
        np.minimum.at(ranks, (row, acode), df["rank"].to_numpy(np.int32))
        ranks[ranks == big] = 0
        chunk_code = ukey % max(len(uniq), 1)
        return cls(
            question_ids=np.asarray(question_ids, dtype=object),
            question_index=(ukey // max(len(uniq), 1)).astype(np.int64),
            chunk_ids=uniq[by_id].astype(object)[chunk_code],
            chunk_rank=chunk_code.astype(np.int64),
            arms=tuple(arms),
            ranks=ranks,
        )

    def arm_columns(self, arms: tuple[str, ...]) -> np.ndarray:
        idx = [self.arms.index(a) for a in arms]
        return self.ranks[:, idx]


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


def fuse(matrix: RankMatrix, config: FusionConfig) -> Fused:
    """Fuse one config from the stored ranks (see module docstring)."""
    sub = matrix.arm_columns(config.arms)
    weights = np.asarray(config.weights, dtype=np.float64)
    depths = np.asarray(config.depths, dtype=np.int64)
    scores = FUSION_METHODS.get(config.method)(sub, config.k, weights, depths)
    voted = ((sub > 0) & (sub <= depths[None, :])).sum(axis=1)
    keep = np.flatnonzero(voted > 0)
    idx = keep[FUSION_ORDERS.get(config.method)(matrix.question_index[keep], sub[keep], config.k, config.weights,
                                                config.depths, matrix.chunk_rank[keep], scores[keep])]
    q = matrix.question_index[idx]
    starts = np.r_[0, np.flatnonzero(np.diff(q)) + 1] if len(q) else np.zeros(0, np.int64)
    fused_rank = np.arange(len(q)) - np.repeat(starts, np.diff(np.r_[starts, len(q)])) + 1
    return Fused(config, idx, q, fused_rank.astype(np.int64), scores[idx], voted[idx])
