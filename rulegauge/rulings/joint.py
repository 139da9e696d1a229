"""Decode every fused score of one ruling together, using what the page adds.

Each distinct chunk of the fused list (its fused rank; a read row and a search
row with the same fused rank and score are the same chunk) is decoded with
:func:`rulegauge.arms.rrf_decode.decode_score`, then narrowed by two facts:

1. **Carried by.** A read row names the arms that carried the chunk; a set of
   size ``m`` means exactly ``m`` ranks are not None. When no candidate has ``m``
   ranks the row is flagged ``carried_by_mismatch`` and keeps its candidates.
2. **One chunk per rank per arm.** An arm gives rank ``r`` to one chunk only, so
   across the rows at most ``arms`` slots hold rank ``r``. With equal weights
   (arm order unknown) a candidate is dropped when the rows already decoded
   uniquely use rank ``r`` so often that its own uses of ``r`` would exceed
   ``arms``; with unequal weights (ordered tuples) when another unique row
   already holds rank ``r`` on the same arm. Repeated until nothing changes. A
   row whose every candidate conflicts keeps them and is flagged
   ``rank_conflict``, as are uniquely decoded rows that together use a rank
   more often than the arms allow (two chunks both at ``(1, 1, 1)``). This is a
   necessary condition only, so it never drops a true tuple.

Rows whose scores rise with fused rank are flagged ``order_violation``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rulegauge.arms.rrf_decode import Decoding, decode_score
from rulegauge.arms.rrf_rounding import Ranks


@dataclass(frozen=True)
class ScoredRow:
    """Input: one chunk of the fused list; ``voters`` = size of its carried-by set."""

    fused_rank: int
    score: float
    voters: int | None = None


@dataclass(frozen=True)
class RowDecoding:
    """A row's decoding, its candidates left after the two checks, and row flags."""

    row: ScoredRow
    decoding: Decoding
    consistent: tuple[Ranks, ...]
    flags: tuple[str, ...]

    @property
    def ranks(self) -> Ranks | None:
        """The one remaining candidate, else None."""
        return self.consistent[0] if len(self.consistent) == 1 else None

    @property
    def all_flags(self) -> tuple[str, ...]:
        return self.decoding.flags + self.flags


def _uses(c: Ranks, *, ordered: bool) -> Counter[tuple[int, int] | int]:
    """Ranks a candidate uses: (arm, rank) pairs when arm order is known, else ranks."""
    if ordered:
        return Counter((i, r) for i, r in enumerate(c) if r is not None)
    return Counter(r for r in c if r is not None)


def _prune(rows: list[list[Ranks]], arms: int, *, ordered: bool) -> tuple[list[list[Ranks]], set[int]]:
    cap = 1 if ordered else arms
    conflict: set[int] = set()
    changed = True
    while changed:
        changed = False
        fixed = [(i, _uses(c[0], ordered=ordered)) for i, c in enumerate(rows) if len(c) == 1]
        for i, cands in enumerate(rows):
            if len(cands) <= 1:
                continue
            used: Counter[tuple[int, int] | int] = Counter()
            for j, u in fixed:
                if j != i:
                    used.update(u)
            keep = [c for c in cands
                    if all(used[key] + n <= cap for key, n in _uses(c, ordered=ordered).items())]
            if not keep:
                conflict.add(i)
            elif len(keep) < len(cands):
                rows[i], changed = keep, True
    total: Counter[tuple[int, int] | int] = Counter()
    for c in rows:
        if len(c) == 1:
            total.update(_uses(c[0], ordered=ordered))
    for i, c in enumerate(rows):
        if len(c) == 1 and any(total[key] > cap for key in _uses(c[0], ordered=ordered)):
            conflict.add(i)
    return rows, conflict


def decode_ranking(rows: Sequence[ScoredRow], k: float = 60, arms: int = 3, depth: int = 100,
                   decimals: int = 6, weights: Sequence[float] | None = None,
                   rounding: str = "half_up") -> tuple[RowDecoding, ...]:
    """Decode each row and narrow the candidates (see module docstring); rows come
    back in fused-rank order."""
    ordered_rows = sorted(rows, key=lambda r: r.fused_rank)
    cache: dict[float, Decoding] = {}
    decs, flags, cands = [], [], []
    prev: float | None = None
    for row in ordered_rows:
        if row.score not in cache:
            cache[row.score] = decode_score(row.score, k, arms, depth, decimals, weights, rounding)
        d = cache[row.score]
        f: list[str] = []
        if prev is not None and row.score > prev:
            f.append("order_violation")
        prev = row.score
        c = d.candidates
        if row.voters is not None:
            narrowed = d.with_voters(row.voters)
            if narrowed:
                c = narrowed
            elif d.candidates:
                f.append("carried_by_mismatch")
        decs.append(d)
        flags.append(f)
        cands.append(list(c))
    pruned, conflict = _prune(cands, arms, ordered=bool(decs and decs[0].ordered))
    for i in conflict:
        flags[i].append("rank_conflict")
    return tuple(RowDecoding(r, d, tuple(c), tuple(f))
                 for r, d, c, f in zip(ordered_rows, decs, pruned, flags, strict=True))
