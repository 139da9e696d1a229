"""Overlap of two rankings without judgments: rank-biased overlap (RBO) and Jaccard@k.

Both compare two ranked lists of ids (no id twice in a list) cut at depth ``k``, and need
no relevance judgment, so they measure how much two runs changed on questions nobody
labelled (a query log).

* **RBO_ext@k** (:func:`rbo_ext`): the extrapolated rank-biased overlap of Webber, Moffat
  and Zobel (2010) of the two top-k prefixes, with persistence ``p`` (the chance a reader
  goes on to the next rank: with p = 0.9 the first 10 ranks carry 86% of the weight,
  their eq. 21). With ``X_d`` the size of the overlap of the two prefixes of length d and
  lists of lengths ``s <= l`` (s < l when one run returned fewer than k ids), eq. 32::

      RBO_ext = (1-p)/p * ( sum_{d=1..l} X_d/d * p^d  +  sum_{d=s+1..l} X_s*(d-s)/(s*d) * p^d )
                + ( (X_l - X_s)/l + X_s/s ) * p^l

  (for d > s, X_d counts the short list's s ids found in the long list's first d). With
  s = l = k it is their eq. 23: ``X_k/k * p^k + (1-p)/p * sum_{d=1..k} X_d/d * p^d``. It
  assumes the agreement seen at depth k continues below it, so identical lists score 1,
  disjoint lists 0, and a short list that is a prefix of the long one scores 1 (its
  agreement is extrapolated). It is a point estimate between the paper's RBO_min and
  RBO_min + RBO_res bounds; the variant, ``p`` and ``k`` are named wherever it is printed
  (``RBO(p=0.9)@10``).
* **Jaccard@k** (:func:`jaccard`): ``|A_k & B_k| / |A_k | B_k|`` of the two top-k sets
  (order inside the top k ignored).

Edge cases (both functions): two empty lists are identical (1.0); one empty list against
a non-empty one shares nothing (0.0). Reference: W. Webber, A. Moffat, J. Zobel, "A
similarity measure for indefinite rankings", ACM TOIS 28(4), 2010, eqs. 23 and 32.
Checked against the paper's equations computed with exact fractions and against the
``ranked-overlap`` package (eq. 23 on equal-length lists) in ``tests/metrics/test_overlap.py``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

from rulegauge.core.errors import RulegaugeError

DEFAULT_P = 0.9
DEFAULT_DEPTH = 10


def _top(ranking: Sequence[Hashable], depth: int, which: str) -> list[Hashable]:
    top = list(ranking[:depth])
    if len(set(top)) != len(top):
        raise RulegaugeError(f"{which} ranking lists an id twice in its top {depth}: an overlap "
                             "needs each id once")
    return top


def check_overlap_params(p: float, depth: int) -> None:
    """Raise unless ``0 < p < 1`` (finite) and ``depth >= 1`` (an integer)."""
    if isinstance(p, bool) or not isinstance(p, int | float) or not math.isfinite(p) \
            or not 0.0 < p < 1.0:
        raise RulegaugeError(f"RBO persistence p must be in (0, 1), got {p!r}")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise RulegaugeError(f"overlap depth must be an integer >= 1, got {depth!r}")


def rbo_ext(first: Sequence[Hashable], second: Sequence[Hashable], p: float = DEFAULT_P,
            depth: int = DEFAULT_DEPTH) -> float:
    """RBO_ext of the top-``depth`` prefixes of two rankings (module docstring, eq. 32)."""
    check_overlap_params(p, depth)
    a, b = _top(first, depth, "first"), _top(second, depth, "second")
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    if a == b:  # identical: 1 by definition (the float sum below may land a rounding short)
        return 1.0
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, l = len(short), len(long_)  # noqa: E741 (the paper's names)
    seen_s: set[Hashable] = set()
    seen_l: set[Hashable] = set()
    x = 0
    x_s = 0
    total = 0.0
    for d in range(1, l + 1):
        if d <= s:  # both lists still running: a new id of either may close a pair
            i, j = short[d - 1], long_[d - 1]
            x += (i == j) + (i != j and i in seen_l) + (i != j and j in seen_s)
            seen_s.add(i)
            seen_l.add(j)
            if d == s:
                x_s = x
        else:  # the short list has ended: only the long list's new id can join
            x += long_[d - 1] in seen_s
            total += x_s * (d - s) / (s * d) * p ** d
        total += x / d * p ** d
    return float((1.0 - p) / p * total + ((x - x_s) / l + x_s / s) * p ** l)


def jaccard(first: Sequence[Hashable], second: Sequence[Hashable],
            depth: int = DEFAULT_DEPTH) -> float:
    """``|A & B| / |A | B|`` of the two top-``depth`` sets (1.0 for two empty lists)."""
    check_overlap_params(DEFAULT_P, depth)
    a, b = set(_top(first, depth, "first")), set(_top(second, depth, "second"))
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
