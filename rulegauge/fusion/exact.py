"""Fused order decided on exact values: weighted RRF score desc, chunk id asc.

A weighted-RRF score ``sum_a w_a / (k + r_a)`` is a rational number; its float64
value is not. Sums equal as rationals can differ in the last bit
(``1/40 + 1/28 + 1/35 == 1/21 + 1/24 == 5/56``; ``1/60 + 1/40 == 1/42 + 1/56``),
and two different rationals can round to one float. Ordering on floats then
breaks ties by rounding instead of by chunk id.

Method (vectorised; exact):

1. Sort by (group, float score desc, id asc).
2. The float error of one score is at most ``delta = (A + 2) * eps * s_max`` for
   A arms (one rounding per division, per ``k + r`` when k is not an integer,
   per addition), so two neighbours whose floats differ by more than
   ``2 * delta`` are in the right exact order. Neighbours within ``2 * delta``
   form a *cluster*.
3. Two distinct scores differ by at least ``1 / D**2``, where ``D`` bounds every
   reduced denominator: ``lcm(weight denominators) * prod_a (k_num + depth_a *
   k_den)``. When ``2 * delta < 1 / D**2`` (three arms at k=60, depth 100:
   4e-17 against 6e-14), every cluster is a set of exactly equal scores and is
   ordered by id alone. Otherwise each cluster is re-sorted on
   :class:`fractions.Fraction` values (weights taken as the exact value of their
   float, as an exact-rational oracle reads them).

Reference: Goldberg, "What every computer scientist should know about
floating-point arithmetic", ACM Computing Surveys 23(1), 1991 (error of a sum).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache

import numpy as np

EPS = np.finfo(np.float64).eps


def rrf_scores(ranks: np.ndarray, k: float, weights: Sequence[float] | np.ndarray,
               depths: Sequence[int] | np.ndarray) -> np.ndarray:
    """Float weighted RRF of a (rows, arms) rank matrix (0 = unranked), arms summed in
    column order (a fixed order, so the float is the same in every process)."""
    ranks = np.asarray(ranks)
    out = np.zeros(ranks.shape[0], np.float64)
    for j, (w, d) in enumerate(zip(weights, depths, strict=True)):
        r = ranks[:, j]
        vote = (r > 0) & (r <= d)
        out += np.where(vote, float(w) / (float(k) + np.where(vote, r, 1).astype(np.float64)), 0.0)
    return out


def exact_score(ranks: Sequence[int], k: float, weights: Sequence[float], depths: Sequence[int]) -> Fraction:
    """Exact ``sum_a w_a / (k + r_a)`` over arms with ``0 < r_a <= depth_a``."""
    kq = Fraction(float(k))
    total = Fraction(0)
    for r, w, d in zip(ranks, weights, depths, strict=True):
        if 0 < int(r) <= int(d):
            total += Fraction(float(w)) / (kq + int(r))
    return total


def float_tolerance(n_arms: int, s_max: float) -> float:
    """Twice the bound on the float error of one score (see module docstring)."""
    return 2.0 * (n_arms + 2) * float(EPS) * float(s_max)


@lru_cache(maxsize=4096)
def denominator_bound(k: float, weights: tuple[float, ...], depths: tuple[int, ...]) -> int:
    """``D``, a bound on every reduced denominator of a config's scores (module docstring,
    step 3); kept per config shape (a grid asks for each many times)."""
    kq = Fraction(k)
    den = 1
    for w in weights:
        den = math.lcm(den, Fraction(w).denominator)
    for d in depths:
        den *= kq.numerator + d * kq.denominator
    return den


def clusters_are_ties(k: float, weights: Sequence[float], depths: Sequence[int], s_max: float) -> bool:
    """True when scores within the float tolerance must be exactly equal: ``tol * D**2 <
    1/2``, on integers (the tolerance's exact ratio)."""
    den = denominator_bound(float(k), tuple(float(w) for w in weights), tuple(int(d) for d in depths))
    num, tden = float_tolerance(len(weights), s_max).as_integer_ratio()
    return 2 * num * den * den < tden


def rrf_order(groups: np.ndarray, ranks: np.ndarray, k: float, weights: Sequence[float],
              depths: Sequence[int], id_rank: np.ndarray, scores: np.ndarray | None = None) -> np.ndarray:
    """Indices ordering rows by group asc, exact weighted-RRF score desc, id asc.

    ``ranks`` is (rows, arms) aligned with ``weights``/``depths``; ``id_rank`` the
    integer rank of each row's id in ascending id order; ``scores`` the float
    scores if already computed (:func:`rrf_scores`).
    """
    groups = np.asarray(groups)
    s = rrf_scores(ranks, k, weights, depths) if scores is None else np.asarray(scores, np.float64)
    idx = np.lexsort((id_rank, -s, groups))
    if len(idx) < 2:
        return idx.astype(np.int64)
    ss, gs = s[idx], groups[idx]
    tol = float_tolerance(len(weights), float(s.max(initial=0.0)))
    near = (gs[1:] == gs[:-1]) & (ss[:-1] - ss[1:] <= tol)
    if not near.any():
        return idx.astype(np.int64)
    cluster = np.r_[0, np.cumsum(~near)]
    if clusters_are_ties(k, weights, depths, float(s.max(initial=0.0))):
        return idx[np.lexsort((id_rank[idx], cluster))].astype(np.int64)
    return _exact_clusters(idx, near, cluster, np.asarray(ranks), k, weights, depths, id_rank)


def _exact_clusters(idx: np.ndarray, near: np.ndarray, cluster: np.ndarray, ranks: np.ndarray,
                    k: float, weights: Sequence[float], depths: Sequence[int],
                    id_rank: np.ndarray) -> np.ndarray:
    """Re-sort each near-tie cluster on exact Fraction scores (rare fallback)."""
    within = np.zeros(len(idx), np.int64)
    member = np.r_[near, False] | np.r_[False, near]
    pos = np.flatnonzero(member)
    for c in np.unique(cluster[pos]):
        p = pos[cluster[pos] == c]
        rows = idx[p]
        keys = [(-exact_score(ranks[r], k, weights, depths), int(id_rank[r])) for r in rows]
        o = sorted(range(len(rows)), key=keys.__getitem__)
        within[p[o]] = np.arange(len(rows))
    return idx[np.lexsort((within, cluster))].astype(np.int64)


def rrf_tie_classes(ranks: np.ndarray, k: float, weights: Sequence[float], depths: Sequence[int],
                    scores: np.ndarray | None = None) -> np.ndarray:
    """Integer class per row such that two rows share a class iff their exact scores are
    equal; classes increase as the exact score decreases (for grouping by score)."""
    n = len(ranks)
    order_ = rrf_order(np.zeros(n, np.int64), ranks, k, weights, depths, np.arange(n), scores)
    out = np.empty(n, np.int64)
    if n == 0:
        return out
    s = rrf_scores(ranks, k, weights, depths) if scores is None else np.asarray(scores, np.float64)
    ss = s[order_]
    tol = float_tolerance(len(weights), float(s.max(initial=0.0)))
    near = ss[:-1] - ss[1:] <= tol
    if near.any() and not clusters_are_ties(k, weights, depths, float(s.max(initial=0.0))):
        fr = [exact_score(ranks[i], k, weights, depths) for i in order_]
        near = np.array([fr[i] == fr[i + 1] for i in range(n - 1)], bool)
    out[order_] = np.r_[0, np.cumsum(~near)]
    return out


def fused_row_order(fused_rank: np.ndarray, ids: Sequence[str] | np.ndarray) -> np.ndarray:
    """Order of stored ``fused`` rows of one list: ``fused_rank`` ascending (decided on
    exact scores when the run was fused), then id ascending. Re-sorting stored rows on
    their float ``fused_score`` would break exact ties by rounding instead."""
    ids = np.asarray(ids, dtype=str)
    return np.lexsort((ids, np.asarray(fused_rank, np.int64))).astype(np.int64)
