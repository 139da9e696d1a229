"""The scoring path of ``harness run``: every config of a grid -> per-question metrics.

Ranks are laid out densely as (arms x questions x candidates), candidates of a
question in chunk-id order. Each config is scored with per-arm lookup tables
``w / (k + r)`` (the same float64 operations as :func:`harness.fusion.exact.rrf_scores`)
into a :class:`ConfigScores`, which puts candidate columns in exact fused order (score
desc, chunk id asc; near-equal floats resolved exactly by :mod:`harness.fusion.exact`).
The page lists the metrics need (:func:`harness.metrics.ranking.score`: top-m pages,
the whole list for ``first_rel_rank``, the condensed list for ``judged_only`` metrics)
are built from it by :func:`harness.metrics.page_lists.page_lists`; every metric value
equals the full path (:mod:`harness.metrics.pages` over :func:`harness.fusion.fuse.fuse`);
tests compare both on every metric.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.fusion.configs import FusionConfig
from harness.fusion.exact import clusters_are_ties, float_tolerance, rrf_order
from harness.fusion.fuse import RankMatrix
from harness.metrics.family import Metric
from harness.metrics.gold import Gold
from harness.metrics.page_lists import Candidates
from harness.metrics.ranking import parse, score


@dataclass(frozen=True)
class DenseRanks:
    """(A, Q, U) ranks (0 = unranked): a question's candidates in chunk-id order, padded."""

    arms: tuple[str, ...]
    ranks: np.ndarray  # (A, Q, U) int32, one contiguous plane per arm
    max_rank: tuple[int, ...] = ()  # per arm, the largest stored rank (sizes the lookup tables)

    @classmethod
    def build(cls, matrix: RankMatrix) -> DenseRanks:
        nq = len(matrix.question_ids)
        counts = np.bincount(matrix.question_index, minlength=nq)
        u = int(counts.max(initial=0)) or 1
        starts = np.r_[0, np.cumsum(counts)[:-1]]
        col = np.arange(len(matrix.question_index)) - starts[matrix.question_index]
        ranks = np.zeros((len(matrix.arms), nq, u), np.int32)
        for a in range(len(matrix.arms)):
            ranks[a, matrix.question_index, col] = matrix.ranks[:, a]
        max_rank = tuple(int(ranks[a].max(initial=0)) for a in range(len(matrix.arms)))
        return cls(matrix.arms, ranks, max_rank)


def _scores(d: DenseRanks, c: FusionConfig) -> np.ndarray:
    """Fused scores (Q, U); 0.0 exactly where no arm of the config voted. Terms are
    added in config arm order, as :func:`harness.fusion.exact.rrf_scores` does."""
    total: np.ndarray | None = None
    for arm, w, depth in zip(c.arms, c.weights, c.depths, strict=True):
        a = d.arms.index(arm)
        lut = np.zeros(d.max_rank[a] + 1)
        top = min(depth, len(lut) - 1)
        lut[1 : top + 1] = float(w) / (float(c.k) + np.arange(1, top + 1, dtype=np.float64))
        term = lut[d.ranks[a]]
        total = term if total is None else total + term
    return total if total is not None else np.zeros(d.ranks.shape[1:])


def _exact_rows(d: DenseRanks, c: FusionConfig, rows: np.ndarray, s: np.ndarray,
                cand: np.ndarray, tol: float, *, ties: bool) -> np.ndarray:
    """Reorder each row of candidate columns ``cand`` (scores ``s`` of those rows) into
    exact fused order: score desc, column (= chunk id) asc. Returns the reordered ``cand``."""
    cand = np.sort(cand, axis=1)  # id order, so the stable score sort breaks float ties by id
    cs = np.take_along_axis(s, cand, 1)
    o = np.argsort(-cs, axis=1, kind="stable")
    cand, cs = np.take_along_axis(cand, o, 1), np.take_along_axis(cs, o, 1)
    if cs.shape[1] < 2:
        return cand
    near = (cs[:, :-1] - cs[:, 1:] <= tol) & (cs[:, 1:] > 0)
    if not near.any():
        return cand
    if ties:  # near-equal floats are exactly equal scores: order each cluster by id
        cluster = np.concatenate([np.zeros((len(cs), 1), np.int64), np.cumsum(~near, axis=1)], axis=1)
        o = np.argsort(cluster * (d.ranks.shape[2] + 1) + cand, axis=1)
        return np.take_along_axis(cand, o, 1)
    arm_idx = [d.arms.index(a) for a in c.arms]
    for i in np.flatnonzero(near.any(axis=1)):  # exact fallback, rare (see harness.fusion.exact)
        ranks = d.ranks[arm_idx][:, rows[i], cand[i]].T
        o = rrf_order(np.zeros(len(ranks), np.int64), ranks, c.k, c.weights, c.depths, cand[i], cs[i])
        cand[i] = cand[i][o]
    return cand


@dataclass(frozen=True)
class ConfigScores:
    """One config's fused scores over the dense candidates (a :class:`~harness.metrics.page_lists.Ordering`)."""

    dense: DenseRanks
    config: FusionConfig
    candidates: Candidates
    scores: np.ndarray
    tol: float
    ties: bool

    @classmethod
    def of(cls, d: DenseRanks, candidates: Candidates, c: FusionConfig) -> ConfigScores:
        s = _scores(d, c)  # 0.0 = unvoted or padding: never enters a list
        smax = float(s.max(initial=0.0))
        return cls(d, c, candidates, s, float_tolerance(len(c.arms), smax),
                   clusters_are_ties(c.k, c.weights, c.depths, smax))

    @property
    def ceiling(self) -> float:
        return self.config.ceiling

    def exact(self, rows: np.ndarray, s: np.ndarray, cand: np.ndarray) -> np.ndarray:
        return _exact_rows(self.dense, self.config, rows, s, cand, self.tol, ties=self.ties)


def score_configs(matrix: RankMatrix, gold: Gold, configs: Sequence[FusionConfig],
                  specs: Sequence[Metric], workers: int | None = None) -> list[dict[str, np.ndarray]]:
    """Per config (in order), ``{metric name: (Q,) values}`` exactly as the full path gives.

    Ranking metrics of unanswerable questions take the metric's default. Configs run on
    ``workers`` threads (default: cores, at most 4); each config is independent, so the
    result does not depend on the thread count."""
    dense, candidates = DenseRanks.build(matrix), Candidates.build(matrix, gold)

    def one(c: FusionConfig) -> dict[str, np.ndarray]:  # the page lists the metrics need
        return score(specs, ConfigScores.of(dense, candidates, c), gold)

    n = workers or min(4, os.cpu_count() or 1)
    if n <= 1 or len(configs) < 2:
        return [one(c) for c in configs]
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(one, configs))


def sweep(matrix: RankMatrix, gold: Gold, configs: Sequence[FusionConfig],
          metrics: Sequence[str], workers: int | None = None) -> pd.DataFrame:
    """Mean of each metric per config over answerable questions (configs x metrics)."""
    specs = [parse(x) for x in metrics]
    answerable = gold.n_req > 0
    per = score_configs(matrix, gold, configs, specs, workers)
    return pd.DataFrame([{"config_id": c.config_id,
                          **{k: float(v[answerable].mean()) if answerable.any() else float("nan")
                             for k, v in vals.items()}} for c, vals in zip(configs, per, strict=True)])
