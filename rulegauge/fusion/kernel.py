"""The vectorised fusion kernel: every config's fused scores and exact candidate order
on dense (arms x questions x candidates) planes, for every fusion method.

Ranks are laid out densely, candidates of a question in chunk-id order
(:func:`planes_of`). Per config, :func:`config_scores` gives two (Q, U) planes:
``score`` (the method's fused score) and ``key`` (what the top-m selection orders
on, 0.0 = not in the list), without sorting anything: only the few candidates a
question's lists need are put in exact order, by :func:`exact_rows`.

* ``rrf``, and the other rank-based methods (``borda``, ``isr``): the key is the
  fused score; neighbours within the float error bound (RRF:
  :mod:`rulegauge.fusion.exact`; others: :func:`rulegauge.fusion.order.relative_error`)
  are decided on exact rational scores (or are known ties: RRF's denominator bound,
  Borda with integer weights);
* score-based methods: the key is ``score - (lo - max(1, |lo|))`` (``lo`` a lower bound
  of the voted scores), positive and monotone in the float fused score (a larger key is
  a larger score; rounding may make two scores one key), and :func:`exact_rows` orders
  the chosen candidates by the fused score itself, desc, then chunk id.

:func:`exact_rows` puts candidate
columns in exact fused order. The scoring path (:mod:`rulegauge.pipeline.sweep`) and
the stored fused rows are both built on this kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rulegauge.fusion.exact import clusters_are_ties, float_tolerance, rrf_order
from rulegauge.fusion.matrix import RankMatrix
from rulegauge.fusion.method import FUSION_METHODS, fused_scores
from rulegauge.fusion.order import relative_error, resolve_row
from rulegauge.fusion.planes import Planes
from rulegauge.fusion.records import FusionConfig


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
    return Planes(matrix.arms, ranks, scores, max_rank, tuple(matrix.question_ids)), col.astype(np.int64)


@dataclass(frozen=True)
class Scored:
    """One config on the planes: ``key`` orders (0.0 = not in the list), ``score`` is
    the fused score; ``tol`` and ``ties`` as :func:`exact_rows` needs them."""

    key: np.ndarray
    score: np.ndarray
    tol: float
    ties: bool


def config_scores(planes: Planes, c: FusionConfig) -> Scored:
    """One config's fused scores and order keys (module docstring; the exactness rule per
    method, docs/fusion.md "Exact order, per method")."""
    method = FUSION_METHODS.get(c.method)
    score = fused_scores(method, planes, c)  # checked where the scores enter (a plug-in's wrong shape, NaN)
    if c.method == "rrf":  # the key is the score: 0.0 exactly where no arm voted
        smax = float(score.max(initial=0.0))
        return Scored(score, score, float_tolerance(len(c.arms), smax),
                      clusters_are_ties(c.k, c.weights, c.depths, smax))
    votes = planes.votes(c)
    unvoted = ~votes
    if not method.rank_based:  # a positive key, monotone in the score: score - (lo - max(1, |lo|))
        lo = float(score.min(initial=0.0))  # a lower bound of the voted scores (unvoted ones are ignored...)
        if not math.isfinite(lo):  # ... unless they are not finite
            lo = float(np.where(votes, score, np.inf).min(initial=0.0))
        key = np.subtract(score, lo - max(1.0, abs(lo)))  # >= max(1, |lo|) wherever score >= lo
        np.copyto(key, 0.0, where=unvoted)
        return Scored(key, score, 0.0, False)
    key = score.copy()  # rank-based scores are positive wherever an arm voted
    np.copyto(key, 0.0, where=unvoted)
    if method.float_exact(c):
        return Scored(key, score, 0.0, True)
    return Scored(key, score, relative_error(len(c.arms)) * float(key.max(initial=0.0)), False)


def top_columns(keys: np.ndarray, m: int) -> np.ndarray:
    """(Q, min(m, U)) columns of the ``m`` largest keys of each row of ``keys`` (Q, U), in
    column order; among keys equal to a row's ``m``-th largest, the first columns (any
    choice is a valid selection: the exact order is decided after, :func:`exact_rows`).

    The ``m``-th largest key of every row comes from one sort of the values as float32
    (numpy's vectorised sort; ``argpartition`` along rows is several times slower, the
    float64 sort 1.5x): rounding to float32 is monotone, so the ``m`` largest keys are
    among those whose float32 reaches the ``m``-th largest float32, and they are those
    when exactly ``m`` do; a row where more do (keys that round together, or ties at the
    ``m``-th key) is decided on its float64 keys. The columns come from one mask."""
    nq, u = keys.shape
    if m >= u:
        return np.tile(np.arange(u), (nq, 1))
    if m <= 0:
        return np.zeros((nq, 0), np.int64)
    k32 = keys.astype(np.float32)
    if np.isnan(k32).any():  # not a total order (NaN keys): the general selection
        return np.sort(np.argpartition(keys, u - m, axis=1)[:, u - m :], axis=1)
    pick = k32 >= np.sort(k32, axis=1)[:, u - m, None]
    over = np.flatnonzero(row_counts(pick) > m)  # float32 collisions or ties at the m-th key
    if len(over):
        k = keys[over]
        t = np.sort(k, axis=1)[:, u - m, None]
        eq = k == t
        need = m - np.count_nonzero(k > t, axis=1)
        pick[over] = (k > t) | (eq & (np.cumsum(eq, axis=1) <= need[:, None]))
    flat = np.flatnonzero(pick)
    out: np.ndarray = (flat % u).reshape(nq, m)
    return out


def row_counts(mask: np.ndarray) -> np.ndarray:
    """(R,) True values in each row of a 2-d bool ``mask`` (``np.count_nonzero(mask, axis=1)``
    as int64, summed as bytes: about 3x faster)."""
    out: np.ndarray
    if mask.shape[1] >= 1 << 16 or not mask.flags.c_contiguous:
        out = np.count_nonzero(mask, axis=1).astype(np.int64)
    else:
        out = mask.view(np.uint8).sum(axis=1, dtype=np.uint16).astype(np.int64)
    return out


def along(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``np.take_along_axis(a, idx, 1)`` for 2-d ``a`` by one flat ``take`` (several times
    faster on the short rows of a selection)."""
    out: np.ndarray = np.ravel(a).take(idx + (np.arange(len(idx)) * a.shape[1])[:, None])
    return out


def exact_rows(planes: Planes, c: FusionConfig, rows: np.ndarray, s: np.ndarray,
               cand: np.ndarray, tol: float, *, ties: bool, fused: np.ndarray | None = None,
               keys: np.ndarray | None = None) -> np.ndarray:
    """Reorder each row of candidate columns ``cand`` (keys ``s`` of those rows) into
    exact fused order: key desc, column (= chunk id) asc, near-equal keys decided by the
    method's exact rule. ``fused``: the config's (Q, U) fused scores (score-based methods;
    recomputed when not given). ``keys``: the keys of ``cand`` itself (aligned with it),
    read instead of ``s`` (a caller that keys a few columns differently, e.g. the
    condensed lists). Returns the reordered ``cand``."""
    if keys is None:
        cand = np.sort(cand, axis=1)  # id order, so the stable key sort breaks float ties by id
        cs = along(s, cand)
    else:
        by_id = np.argsort(cand, axis=1, kind="stable")
        cand, cs = along(cand, by_id), along(keys, by_id)
    method = FUSION_METHODS.get(c.method)
    if not method.rank_based:  # the key only selects; the order is the float fused score's
        f = fused_scores(method, planes, c) if fused is None else fused
        fc = np.where(cs > 0, f[rows[:, None], cand], -np.inf)  # not listed: last
        return along(cand, np.argsort(-fc, axis=1, kind="stable"))
    o = np.argsort(-cs, axis=1, kind="stable")
    cand, cs = along(cand, o), along(cs, o)
    if cs.shape[1] < 2:
        return cand
    near = (cs[:, :-1] - cs[:, 1:] <= tol) & (cs[:, 1:] > 0)
    if not near.any():
        return cand
    if ties:  # near-equal keys are exactly equal scores: order each cluster by id
        # equal floats already are (a stable sort of id-ordered columns): only rows with a
        # cluster of different floats (e.g. 1/40+1/28+1/35 and 1/21+1/24) are sorted again
        fix = np.flatnonzero((near & (cs[:, :-1] != cs[:, 1:])).any(axis=1))
        if len(fix):
            cluster = np.concatenate([np.zeros((len(fix), 1), np.int64), np.cumsum(~near[fix], axis=1)], axis=1)
            cand[fix] = along(cand[fix], np.argsort(cluster * (planes.shape[1] + 1) + cand[fix], axis=1))
        return cand
    if c.method == "rrf":
        arm_idx = [planes.arms.index(a) for a in c.arms]
        for i in np.flatnonzero(near.any(axis=1)):  # exact fallback, rare (rulegauge.fusion.exact)
            ranks = planes.ranks[arm_idx][:, rows[i], cand[i]].T
            cand[i] = cand[i][rrf_order(np.zeros(len(ranks), np.int64), ranks, c.k, c.weights, c.depths,
                                        cand[i], cs[i])]
        return cand
    # equal multisets of per-arm terms are equal exact scores (rulegauge.fusion.order); only the
    # other near pairs are decided on exact rationals
    some = np.flatnonzero(near.any(axis=1))
    codes = method.tie_codes(*planes.cut_at(c, rows[some], cand[some], lengths=method.codes_need_lengths), c)
    same = np.zeros_like(near)
    same[some] = near[some] & (codes[:, :, 1:] == codes[:, :, :-1]).all(axis=0)
    for i in np.flatnonzero((near & ~same).any(axis=1)):
        cand[i] = resolve_row(method, c, planes, int(rows[i]), cand[i], near[i], same[i],
                              planes.row_ranks(c, int(rows[i])))[0]
    return cand
