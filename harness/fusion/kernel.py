"""The vectorised fusion kernel: every config's fused scores and exact candidate order
on dense (arms x questions x candidates) planes, for every fusion method.

Ranks are laid out densely, candidates of a question in chunk-id order
(:func:`planes_of`). Per config, :func:`config_scores` gives two (Q, U) planes:
``score`` (the method's fused score) and ``key`` (what the top-m selection orders
on, 0.0 = not in the list). For ``rrf`` the key is the score itself (near-equal
floats are resolved exactly by :mod:`harness.fusion.exact`); for every other method
the key is the integer class of the exact order (:mod:`harness.fusion.order`), so
equal keys are exact ties, ordered by chunk id. :func:`exact_rows` puts candidate
columns in exact fused order. The scoring path (:mod:`harness.pipeline.sweep`) and
the stored fused rows are both built on this kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.fusion.exact import clusters_are_ties, float_tolerance, rrf_order
from harness.fusion.matrix import RankMatrix
from harness.fusion.method import FUSION_METHODS, Planes
from harness.fusion.order import order_keys
from harness.fusion.records import FusionConfig


def planes_of(matrix: RankMatrix) -> tuple[Planes, np.ndarray]:
    """(planes, column of each matrix row); candidates of a question in chunk-id order."""
    nq = len(matrix.question_ids)
    counts = np.bincount(matrix.question_index, minlength=nq)
    u = int(counts.max(initial=0)) or 1
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    col = np.arange(len(matrix.question_index)) - starts[matrix.question_index]
    n_arms = len(matrix.arms)
    ranks = np.zeros((n_arms, nq, u), np.int32)
    scores = np.zeros((n_arms, nq, u), np.float64)
    for a in range(n_arms):
        ranks[a, matrix.question_index, col] = matrix.ranks[:, a]
        if matrix.scores is not None:
            scores[a, matrix.question_index, col] = np.where(matrix.ranks[:, a] > 0,
                                                             np.nan_to_num(matrix.scores[:, a]), 0.0)
    max_rank = tuple(int(ranks[a].max(initial=0)) for a in range(n_arms))
    return Planes(matrix.arms, ranks, scores, max_rank), col.astype(np.int64)


@dataclass(frozen=True)
class Scored:
    """One config on the planes: ``key`` orders (0.0 = not in the list), ``score`` is
    the fused score; ``tol`` and ``ties`` as :func:`exact_rows` needs them."""

    key: np.ndarray
    score: np.ndarray
    tol: float
    ties: bool


def config_scores(planes: Planes, c: FusionConfig) -> Scored:
    method = FUSION_METHODS.get(c.method)
    score = method.fuse(planes, c)
    if c.method == "rrf":  # the key is the score: 0.0 exactly where no arm voted
        smax = float(score.max(initial=0.0))
        return Scored(score, score, float_tolerance(len(c.arms), smax),
                            clusters_are_ties(c.k, c.weights, c.depths, smax))
    key = order_keys(method, c, planes, score, planes.votes(c))
    return Scored(key, score, float_tolerance(len(c.arms), float(key.max(initial=0.0))), True)


def exact_rows(planes: Planes, c: FusionConfig, rows: np.ndarray, s: np.ndarray,
               cand: np.ndarray, tol: float, *, ties: bool) -> np.ndarray:
    """Reorder each row of candidate columns ``cand`` (keys ``s`` of those rows) into
    exact fused order: key desc, column (= chunk id) asc. Returns the reordered ``cand``."""
    cand = np.sort(cand, axis=1)  # id order, so the stable key sort breaks float ties by id
    cs = np.take_along_axis(s, cand, 1)
    o = np.argsort(-cs, axis=1, kind="stable")
    cand, cs = np.take_along_axis(cand, o, 1), np.take_along_axis(cs, o, 1)
    if cs.shape[1] < 2:
        return cand
    near = (cs[:, :-1] - cs[:, 1:] <= tol) & (cs[:, 1:] > 0)
    if not near.any():
        return cand
    if ties:  # near-equal keys are exactly equal scores: order each cluster by id
        cluster = np.concatenate([np.zeros((len(cs), 1), np.int64), np.cumsum(~near, axis=1)], axis=1)
        o = np.argsort(cluster * (planes.shape[1] + 1) + cand, axis=1)
        return np.take_along_axis(cand, o, 1)
    arm_idx = [planes.arms.index(a) for a in c.arms]
    for i in np.flatnonzero(near.any(axis=1)):  # exact fallback, rare (see harness.fusion.exact)
        ranks = planes.ranks[arm_idx][:, rows[i], cand[i]].T
        o = rrf_order(np.zeros(len(ranks), np.int64), ranks, c.k, c.weights, c.depths, cand[i], cs[i])
        cand[i] = cand[i][o]
    return cand
