"""Rank fusion over stored per-arm ranks, vectorised across questions and chunks.

Weighted reciprocal-rank fusion (Cormack, Clarke & Buettcher, SIGIR 2009)::

    fused(d) = sum over arms a of the config with 0 < rank_a(d) <= depth_a of
               w_a / (k + rank_a(d))
    ceiling  = sum over the config's arms of w_a / (k + 1)

Ranks start at 1. A chunk that no arm of the config ranked within its depth is
not in the fused list. Fused ties are broken by chunk id ascending
(:mod:`harness.core.ordering`). Every arm runs once per question; each config is then
fused from the stored ranks without a Python loop per chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.core.ordering import grouped_order, id_ranks
from harness.core.registry import Registry
from harness.fusion.configs import FusionConfig

FusionFn = Callable[[np.ndarray, float, np.ndarray, np.ndarray], np.ndarray]
FUSION_METHODS: Registry[FusionFn] = Registry("fusion method")


@FUSION_METHODS.register("rrf")
def rrf(ranks: np.ndarray, k: float, weights: np.ndarray, depths: np.ndarray) -> np.ndarray:
    """Weighted RRF over a (rows, arms) int matrix of ranks (0 = not ranked).

    Returns float64 scores; 0.0 exactly where no arm voted.
    """
    r = ranks.astype(np.float64)
    votes = (ranks > 0) & (ranks <= depths[None, :])
    contrib = np.where(votes, weights[None, :] / (k + np.where(votes, r, 1.0)), 0.0)
    out: np.ndarray = contrib.sum(axis=1)
    return out


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
        """Pivot an ``arm_ranks`` table (question_id, arm, chunk_id, rank) into a matrix."""
        qindex = {qid: i for i, qid in enumerate(question_ids)}
        df = arm_ranks[arm_ranks["arm"].isin(arms)]
        wide = df.pivot_table(index=["question_id", "chunk_id"], columns="arm", values="rank",
                              aggfunc="min", fill_value=0)
        wide = wide.reindex(columns=list(arms), fill_value=0).reset_index()
        wide["_q"] = wide["question_id"].map(qindex)
        if wide["_q"].isna().any():
            unknown = sorted(set(wide.loc[wide["_q"].isna(), "question_id"]))
            raise ValueError(f"arm_ranks holds unknown question ids: {unknown[:5]}")
        wide = wide.sort_values(["_q", "chunk_id"], kind="stable")
        chunk_ids = wide["chunk_id"].to_numpy(dtype=object)
        return cls(
            question_ids=np.asarray(question_ids, dtype=object),
            question_index=wide["_q"].to_numpy(dtype=np.int64),
            chunk_ids=chunk_ids,
            chunk_rank=id_ranks(chunk_ids.astype(str)) if len(chunk_ids) else np.zeros(0, np.int64),
            arms=tuple(arms),
            ranks=wide[list(arms)].to_numpy(dtype=np.int32),
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
    idx = keep[grouped_order(matrix.question_index[keep], scores[keep], matrix.chunk_rank[keep])]
    q = matrix.question_index[idx]
    starts = np.r_[0, np.flatnonzero(np.diff(q)) + 1] if len(q) else np.zeros(0, np.int64)
    fused_rank = np.arange(len(q)) - np.repeat(starts, np.diff(np.r_[starts, len(q)])) + 1
    return Fused(config, idx, q, fused_rank.astype(np.int64), scores[idx], voted[idx])
