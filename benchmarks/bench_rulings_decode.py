"""Benchmark: decoding rounded fused RRF scores into per-arm rank tuples.

For each printed score (k=60, equal weights, half-up rounding) and depth, the
time of :func:`rulegauge.arms.rrf_decode.decode_score` (median of repeats) and the
number of candidates. The scores span the fused range: near the three-arm
ceiling (unique), the top of the measured healthy band, and low scores where
the number of tuples explodes (the worst case for the search). A brute-force
enumeration of every sorted tuple (``O(depth**3 / 6)`` exact sums) at depth 60
gives the reference rate it replaces, and checks that both find the same tuples.

Target: depth 1000 with 3 arms stays under a second for any score.

Run: .venv/bin/python benchmarks/bench_rulings_decode.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from fractions import Fraction

from rulegauge.arms.rrf_decode import decode_score
from rulegauge.arms.rrf_rounding import rounds_to

SCORES = ("0.048916", "0.03125", "0.029412", "0.016393", "0.01", "0.005357", "0.004", "0.002")
DEPTHS = (100, 1000)


def brute(score: str, depth: int) -> set[tuple]:
    out = set()
    terms = {r: Fraction(1, 60 + r) for r in range(1, depth + 1)}
    for combo in itertools.combinations_with_replacement([*range(1, depth + 1), None], 3):
        if combo[0] is None:
            continue
        if rounds_to(sum((terms[r] for r in combo if r is not None), Fraction(0)), score):
            out.add(combo)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"{'score':>9} {'depth':>6} {'candidates':>10} {'median s':>9}  flags")
    worst = 0.0
    for depth in DEPTHS:
        for s in SCORES:
            times, d = [], None
            for _ in range(args.repeats):
                t = time.perf_counter()
                d = decode_score(s, depth=depth)
                times.append(time.perf_counter() - t)
            med = statistics.median(times)
            worst = max(worst, med) if depth == 1000 else worst
            print(f"{s:>9} {depth:>6} {len(d.candidates):>10} {med:>9.4f}  {','.join(d.flags)}")
    t = time.perf_counter()
    ref = brute("0.029412", 60)
    bt = time.perf_counter() - t
    t = time.perf_counter()
    fast = set(decode_score("0.029412", depth=60).candidates)
    ft = time.perf_counter() - t
    print(f"brute force depth 60: {bt:.2f} s vs decode {ft:.4f} s; same tuples: {ref == fast}")
    print(f"worst depth-1000 median: {worst:.3f} s (target < 1 s): "
          + ("OK" if worst < 1.0 else "SLOW"))


if __name__ == "__main__":
    main()
