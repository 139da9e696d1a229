"""Exact fused order of every fusion method but RRF, as integer keys on the dense planes.

``rrf`` keeps its own vectorised rational order (:func:`rulegauge.fusion.exact.rrf_order`).
For the other methods (:mod:`rulegauge.fusion.method`, "Exactness"), per question row:

* sort the voted candidates by float score desc, column (= chunk id) asc (one stable
  ``argsort`` per row, every row at once);
* score-based methods, and rank-based ones whose floats are exact for the config
  (:meth:`~rulegauge.fusion.method.FusionMethod.float_exact`, e.g. Borda with integer
  weights: sums of half-integers): exactly equal floats are the ties;
* other rank-based configs (ISR, weighted Borda): neighbours within the float error bound
  are compared exactly. Two candidates whose multisets of per-arm terms are equal
  (:meth:`~rulegauge.fusion.method.FusionMethod.tie_codes`) have one exact score; any other
  near pair is re-sorted on the method's exact rational scores (``exact_score``), ties by
  chunk id. Rare, and exact.

:func:`order_keys` gives positive float keys, equal for tied candidates and decreasing
along the order (0.0 = not in the list), so the vectorised top-m path of the scoring
kernel (:mod:`rulegauge.fusion.kernel`) and :func:`rulegauge.fusion.fuse.fuse` treat every
method like a tie-exact RRF.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rulegauge.fusion.exact import EPS
from rulegauge.fusion.method import FusionMethod
from rulegauge.fusion.planes import Planes
from rulegauge.fusion.records import FusionConfig


def order_keys(method: FusionMethod, config: FusionConfig, planes: Planes, score: np.ndarray,
               votes: np.ndarray) -> np.ndarray:
    """(Q, U) keys: the exact order's classes from the top (largest first), 0.0 where no vote."""
    nq, u = score.shape
    big = 2.0 * float(np.abs(np.where(votes, score, 0.0)).max(initial=0.0)) + 1.0
    neg = np.where(votes, -score, big)  # unvoted last; finite, so differences stay finite
    o = np.argsort(neg, axis=1, kind="stable")
    sf = np.take_along_axis(neg, o, 1)
    valid = np.take_along_axis(votes, o, 1)
    both = valid[:, 1:] & valid[:, :-1]
    if not method.rank_based or method.float_exact(config):
        same = both & (sf[:, 1:] == sf[:, :-1])
    else:
        near = both & (sf[:, 1:] - sf[:, :-1] <= relative_error(len(config.arms)) * np.abs(sf[:, :-1]))
        ranks, lengths = planes.cut_at(config, np.arange(nq), np.arange(u)[None, :])
        codes = np.take_along_axis(method.tie_codes(ranks, lengths, config), o[None, :, :], 2)
        eq = near & (codes[:, :, 1:] == codes[:, :, :-1]).all(axis=0)
        same = eq
        hard = near & ~eq
        if hard.any():
            cut = ranks.transpose(1, 2, 0)  # (Q, U, A)
            for qi in np.flatnonzero(hard.any(axis=1)):
                o[qi], same[qi] = resolve_row(method, config, planes, int(qi), o[qi], near[qi], same[qi], cut[qi])
    cls = np.concatenate([np.ones((nq, 1), np.int64), 1 + np.cumsum(~same, axis=1)], axis=1)
    key = np.zeros((nq, u))
    np.put_along_axis(key, o, np.where(valid, float(u + 1) - cls, 0.0), 1)
    return key


def relative_error(n_arms: int) -> float:
    """Bound on the float error of the difference of two rank-based scores, relative to the
    larger: every term is positive, so a score's float error is at most c * eps * the score
    itself (Goldberg 1991; generous c = 3A + 4 for A arms, a division, a product and a sum each)."""
    return 2.0 * (3 * n_arms + 4) * float(EPS)


def resolve_row(method: FusionMethod, config: FusionConfig, planes: Planes, qi: int, o: np.ndarray,
                near: np.ndarray, same: np.ndarray, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Re-sort the near clusters of one question row on exact scores (rare fallback).

    ``o``: the row's columns in float order; ``near[i]``: columns ``i`` and ``i + 1`` are
    within the float error; ``same[i]``: known to be exactly equal already; ``ranks``:
    (U, A) cut ranks of the row. Returns (``o`` with every cluster holding a pair not known
    equal sorted by exact score desc, column asc; ``same`` updated)."""
    o, same = o.copy(), same.copy()
    ctx = method.exact_context(planes, config, qi)
    cluster = np.r_[0, np.cumsum(~near)]
    hard_clusters = set(cluster[1:][near & ~same].tolist())
    for c in sorted(hard_clusters):
        pos = np.flatnonzero(cluster == c)
        cols = o[pos]
        seen: dict[tuple[int, ...], Any] = {}  # one exact score per rank tuple
        exact = []
        for col in cols:
            t = tuple(int(x) for x in ranks[col])
            if t not in seen:
                seen[t] = method.exact_score(ranks[col], config, ctx)
            exact.append(seen[t])
        order = sorted(range(len(cols)), key=lambda i: (-exact[i], int(cols[i])))
        o[pos] = cols[order]
        ordered = [exact[i] for i in order]
        same[pos[1:] - 1] = [ordered[i] == ordered[i - 1] for i in range(1, len(order))]
    return o, same
