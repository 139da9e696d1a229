"""Exact fused order of every fusion method over flat rows (question, candidate).

``rrf`` keeps its own vectorised rational order (:func:`harness.fusion.exact.rrf_order`).
For the other methods (:mod:`harness.fusion.method`, "Exactness"):

* score-based: sort by (question, float score desc, chunk id asc); exactly equal
  floats are ties;
* rank-based (Borda, ISR): sort on floats, then neighbours within the float error
  bound form clusters. A cluster whose members have the same per-arm ranks has one
  exact score (the score is a function of the ranks within a question); any other
  cluster is re-sorted on the method's exact rational scores (``exact_score``),
  ties by chunk id. Rare, and exact.

:func:`order_keys` turns an order into positive integer keys, equal for tied rows
and decreasing along the order, so the vectorised top-m path of the scoring kernel
(:mod:`harness.fusion.kernel`) treats every method like a tie-exact RRF.
"""

from __future__ import annotations

import numpy as np

from harness.fusion.exact import EPS
from harness.fusion.method import FusionMethod, Planes
from harness.fusion.records import FusionConfig


def rank_rows(planes: Planes, config: FusionConfig, q: np.ndarray, col: np.ndarray) -> np.ndarray:
    """(rows, arms) ranks of the config's arms, cut to depth (0 = no vote)."""
    out = np.zeros((len(q), len(config.arms)), np.int64)
    for j in range(len(config.arms)):
        out[:, j] = planes.arm(config, j)[0][q, col]
    return out


def exact_order(method: FusionMethod, config: FusionConfig, planes: Planes, q: np.ndarray,
                col: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order of the rows, ``same``): ``same[i]`` is True when the ``i``-th row in order
    has the exact score of the row before it in the same question. Rows are given by
    question ``q`` and candidate column ``col`` (columns are in chunk-id order)."""
    idx = np.lexsort((col, -scores, q)).astype(np.int64)
    if len(idx) < 2:
        return idx, np.zeros(len(idx), bool)
    ss, gs = scores[idx], q[idx]
    same_q = gs[1:] == gs[:-1]
    if not method.rank_based:
        return idx, np.r_[False, same_q & (ss[1:] == ss[:-1])]
    tol = 2.0 * (3 * len(config.arms) + 4) * float(EPS) * float(np.abs(scores).max(initial=0.0))
    near = same_q & (ss[:-1] - ss[1:] <= tol)
    ranks = rank_rows(planes, config, q, col)
    canon = np.unique(ranks, axis=0, return_inverse=True)[1].reshape(-1)[idx]
    eq = near & (canon[1:] == canon[:-1])
    hard = near & ~eq
    same = np.r_[False, eq]
    if not hard.any():
        return idx, same
    cluster = np.r_[0, np.cumsum(~near)]
    for c in np.unique(cluster[1:][hard]):
        pos = np.flatnonzero(cluster == c)
        rows = idx[pos]
        qq = int(q[rows[0]])
        ctx = method.exact_context(planes, config, qq)
        exact = [method.exact_score(ranks[r], config, ctx) for r in rows]
        o = sorted(range(len(rows)), key=lambda i: (-exact[i], int(col[rows[i]])))
        idx[pos] = rows[o]
        ordered = [exact[i] for i in o]
        same[pos[1:]] = [ordered[i] == ordered[i - 1] for i in range(1, len(o))]
    return idx, same


def order_keys(same: np.ndarray) -> np.ndarray:
    """Positive float keys along an order: equal where ``same``, decreasing otherwise."""
    cls = np.cumsum(~same)
    return (int(cls[-1]) + 1 - cls).astype(np.float64) if len(cls) else np.zeros(0)
