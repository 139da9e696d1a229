"""Recover per-arm ranks from a fused RRF score that production rounded.

Definition
----------
Weighted reciprocal-rank fusion gives a chunk ``fused = sum_a w_a / (k + r_a)``
over the arms that ranked it (``r_a`` is 1-based; an arm that did not rank the
chunk contributes 0). Production prints the sum rounded to ``decimals`` (6)
places and hides the ``r_a``. :func:`decode_score` enumerates every rank tuple
whose exact sum rounds to the printed score.

* A candidate is a tuple with one entry per arm: a rank ``1..depth`` or ``None``
  ("this arm did not rank the chunk"). The all-``None`` tuple is never a
  candidate: a fused row needs at least one vote.
* Arms with equal weights are interchangeable, so their ranks form a multiset:
  candidates list them ascending with ``None`` last (``(1, 1, 2)``,
  ``(4, 13, None)``). With unequal weights the tuple is in declared arm order.
* Sums are exact (:class:`fractions.Fraction`); floats only steer the pruning
  and are always widened by a margin, so no candidate is lost to float error.

Rounding rules, exact sums and the printed-score check: :mod:`rulegauge.arms.rrf_rounding`.

Flags
-----
``above_ceiling`` (the score exceeds ``sum_a w_a/(k+1)`` beyond rounding),
``non_positive``, ``no_candidates`` (none within ``depth``), ``impossible`` (none
at any depth: no candidates and not ``beyond_depth``), ``beyond_depth`` (ranks
deeper than ``depth`` could also reproduce the score, so the list is complete
only for arms that return at most ``depth`` hits), ``tie``, ``candidate_limit``
(enumeration stopped at ``max_candidates``).

Search bound: arms are visited in order; with the partial sum ``S`` fixed, the
rank of the next arm is confined to an interval from two conditions (the sum may
not exceed the upper end, and the arms still to come, each at most as large as
this one's vote, must still be able to reach the lower end), so the last arm is
solved in O(1) and the work grows with the number of feasible prefixes, not
``depth ** arms``. Reference: Cormack, Clarke & Buettcher, "Reciprocal rank
fusion outperforms Condorcet and individual rank learning methods", SIGIR 2009.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from rulegauge.arms.rrf_rounding import ROUNDINGS, Ranks, parse_score

_MARGIN = 1e-12  # float steering margin; exact sums decide near the boundaries
_TIE = Fraction(1, 10**15)

FLAGS = ("above_ceiling", "non_positive", "no_candidates", "impossible", "beyond_depth",
         "tie", "candidate_limit")


@dataclass(frozen=True)
class Decoding:
    """Every rank tuple that reproduces one printed fused score (see module docstring).

    ``ordered`` is False when all weights are equal (candidates are sorted
    multisets) and True otherwise (candidates are in declared arm order).
    """

    score: float
    k: float
    arms: int
    depth: int
    decimals: int
    weights: tuple[float, ...]
    rounding: str
    ordered: bool
    ceiling: float
    candidates: tuple[Ranks, ...]
    flags: tuple[str, ...]

    @property
    def unique(self) -> bool:
        return len(self.candidates) == 1

    @property
    def above_ceiling(self) -> bool:
        return "above_ceiling" in self.flags

    @property
    def impossible(self) -> bool:
        return "impossible" in self.flags

    @property
    def beyond_depth(self) -> bool:
        return "beyond_depth" in self.flags

    @property
    def tie(self) -> bool:
        return "tie" in self.flags

    def with_voters(self, voters: int) -> tuple[Ranks, ...]:
        """Candidates in which exactly ``voters`` arms ranked the chunk."""
        return tuple(c for c in self.candidates if sum(r is not None for r in c) == voters)


def _check_args(k: float, arms: int, depth: int, decimals: int,
                weights: Sequence[float] | None, max_candidates: int) -> tuple[float, ...]:
    problems = []
    if not isinstance(arms, int) or arms < 1:
        problems.append(f"arms must be an integer >= 1, got {arms!r}")
    if not isinstance(depth, int) or depth < 1:
        problems.append(f"depth must be an integer >= 1, got {depth!r}")
    if not isinstance(decimals, int) or not 0 <= decimals <= 15:
        problems.append(f"decimals must be an integer in 0..15, got {decimals!r}")
    if not math.isfinite(k) or k < 0:
        problems.append(f"k must be a finite number >= 0, got {k!r}")
    if max_candidates < 1:
        problems.append(f"max_candidates must be >= 1, got {max_candidates!r}")
    ws = tuple(float(w) for w in weights) if weights is not None else (1.0,) * max(arms, 0)
    if weights is not None and len(ws) != arms:
        problems.append(f"weights has {len(ws)} entries for {arms} arms")
    if any(not math.isfinite(w) or w <= 0 for w in ws):
        problems.append(f"weights must be finite and > 0, got {list(ws)}")
    if problems:
        raise ValueError("; ".join(problems))
    return ws


class _Search:
    """Depth-first enumeration over arms sorted by weight (equal weights adjacent)."""

    def __init__(self, lo: Fraction, hi: Fraction, *, lo_c: bool, hi_c: bool, k: float,
                 ws: tuple[float, ...], depth: int, limit: int) -> None:
        self.lo, self.hi, self.lo_c, self.hi_c = lo, hi, lo_c, hi_c
        self.lof, self.hif = float(lo), float(hi)
        self.k, self.kq, self.depth, self.limit = k, Fraction(k), depth, limit
        self.perm = sorted(range(len(ws)), key=lambda i: (-ws[i], i))
        self.w = [ws[i] for i in self.perm]
        self.wq = [Fraction(w) for w in self.w]
        n = len(self.w)
        self.same_next = [i + 1 < n and self.w[i + 1] == self.w[i] for i in range(n)]
        # arms after i in i's weight group, and the max contribution of later groups
        self.m_same = [0] * n
        self.r_other = [0.0] * n
        for i in range(n - 1, -1, -1):
            self.m_same[i] = self.m_same[i + 1] + 1 if self.same_next[i] else 0
            j = i + 1 + self.m_same[i]
            self.r_other[i] = sum(w / (k + 1) for w in self.w[j:])
        self.found: list[Ranks] = []
        self.beyond = self.tie = self.stopped = False

    def run(self) -> None:
        self._arm(0, 1, 0.0, [])

    def _inside(self, ranks: list[int | None], s: float) -> bool:
        if s < self.lof - _MARGIN or s > self.hif + _MARGIN:
            return False
        if self.lof + _MARGIN < s < self.hif - _MARGIN:
            return True
        v = sum((w / (self.kq + r) for w, r in zip(self.wq, ranks, strict=True) if r is not None),
                Fraction(0))
        if abs(v - self.lo) <= _TIE or abs(v - self.hi) <= _TIE:
            self.tie = True
        return ((self.lo < v or (self.lo_c and v == self.lo))
                and (v < self.hi or (self.hi_c and v == self.hi)))

    def _leaf(self, ranks: list[int | None], s: float) -> None:
        if all(r is None for r in ranks) or not self._inside(ranks, s):
            return
        if len(self.found) >= self.limit:
            self.stopped = True
            return
        out: list[int | None] = [None] * len(ranks)
        for pos, r in zip(self.perm, ranks, strict=True):
            out[pos] = r
        self.found.append(tuple(out))

    def _arm(self, i: int, r_min: int, s: float, ranks: list[int | None]) -> None:
        if self.stopped:
            return
        if i == len(self.w):
            self._leaf(ranks, s)
            return
        w, k = self.w[i], self.k
        skip = 1 + self.m_same[i]  # choosing None here makes the rest of the group None
        if s + self.r_other[i] >= self.lof - _MARGIN:
            self._arm(i + skip, 1, s, ranks + [None] * skip)
        room = self.hif + _MARGIN - s
        if room <= 0:
            return
        lo_r = max(r_min, math.ceil(w / room - k - 1e-9))
        need = self.lof - _MARGIN - s - self.r_other[i]
        hi_r = math.inf if need <= 0 else math.floor(skip * w / need - k + 1e-9)
        if hi_r > self.depth and max(lo_r, self.depth + 1) <= hi_r:
            self.beyond = True
        nxt = self.same_next[i]
        for r in range(lo_r, int(min(hi_r, self.depth)) + 1):
            self._arm(i + 1, r if nxt else 1, s + w / (k + r), [*ranks, r])
            if self.stopped:
                return


def decode_score(score: float | str | Decimal | Fraction, k: float = 60, arms: int = 3,
                 depth: int = 100, decimals: int = 6, weights: Sequence[float] | None = None,
                 rounding: str = "half_up", max_candidates: int = 100_000) -> Decoding:
    """Every rank tuple whose fused sum prints as ``score`` (see the module docstring).

    >>> decode_score(0.048916).candidates
    ((1, 1, 2),)
    """
    ws = _check_args(k, arms, depth, decimals, weights, max_candidates)
    rule = ROUNDINGS.get(rounding)
    s = parse_score(score, decimals)
    lo, hi, lo_c, hi_c = rule.interval(s, decimals)
    ceiling = sum((Fraction(w) / (Fraction(k) + 1) for w in ws), Fraction(0))
    flags: list[str] = []
    if s <= 0:
        flags.append("non_positive")
    if lo > ceiling or (lo == ceiling and not lo_c):
        flags.append("above_ceiling")
    search = _Search(lo, hi, lo_c=lo_c, hi_c=hi_c, k=float(k), ws=ws, depth=depth, limit=max_candidates)
    if not flags:
        search.run()
    ordered = len(set(ws)) > 1
    cands = sorted(search.found, key=lambda c: tuple(math.inf if r is None else r for r in c))
    if not cands:
        flags.append("no_candidates")
        if not search.beyond:
            flags.append("impossible")
    if search.beyond:
        flags.append("beyond_depth")
    if search.tie:
        flags.append("tie")
    if search.stopped:
        flags.append("candidate_limit")
    return Decoding(float(s), float(k), arms, depth, decimals, ws, rule.name, ordered,
                    float(ceiling), tuple(cands), tuple(f for f in FLAGS if f in flags))
