"""Benchmark: the dense arm's exact search against faiss ``IndexFlatIP.search``.

Both search the same seeded unit vectors (``--sizes`` corpora x ``--dim``) with the same
``--queries`` query vectors for the top ``--k``, alternating, ``--repeats`` times;
printed: median wall and CPU seconds per side and their ratio (target: rulegauge
within 1.5x of faiss at 50k and 500k vectors x 384 with 1,000 queries), with the machine
line (date, CPU flags, load) before and after. Rulegauge side is
``rulegauge.arms.flat_search.FlatSearch.search``, the call the dense arm makes for every
batch of questions (hits are then built from its rows); faiss is the peer the arm used
before. Also checked and printed: the share of queries whose top-k chunk set equals
faiss's (they differ only where two scores are within the kernels' rounding), the largest
score difference, and that a query searched alone gets its batched row bit for bit.

Run: .venv/bin/python benchmarks/bench_dense.py [--sizes 50000,500000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from machine import machine_line

from rulegauge.arms.flat_search import FlatSearch, describe_kernel


def unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Seeded random unit rows, generated in pieces (bounded memory)."""
    out = np.empty((n, d), dtype=np.float32)
    for s in range(0, n, 100_000):
        v = rng.standard_normal((min(100_000, n - s), d), dtype=np.float32)
        out[s:s + len(v)] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def timed(fn):  # type: ignore[no-untyped-def]
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def one_size(n: int, args: argparse.Namespace) -> None:
    import faiss  # deferred: the peer

    rng = np.random.default_rng(args.seed)
    x, q = unit(rng, n, args.dim), unit(rng, args.queries, args.dim)
    b_faiss, _, index = timed(lambda: (ix := faiss.IndexFlatIP(args.dim), ix.add(x))[0])
    b_flat, _, flat = timed(lambda: FlatSearch(x))
    rows: dict[str, list[tuple[float, float]]] = {"faiss": [], "rulegauge": []}
    for _ in range(args.repeats):
        w, c, (fs, fi) = timed(lambda: index.search(q, args.k))
        rows["faiss"].append((w, c))
        w, c, (hs, hi) = timed(lambda: flat.search(q, args.k))
        rows["rulegauge"].append((w, c))
    med = {side: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)) for side, v in rows.items()}
    same = np.mean([set(a.tolist()) == set(b.tolist()) for a, b in zip(hi, fi, strict=True)])
    alone_s, alone_i = flat.search(q[7:8], args.k)
    print(f"{n:>9,} x {args.dim} | {args.queries} queries, k={args.k} | build faiss {b_faiss:.2f} s, "
          f"rulegauge {b_flat:.2f} s (incl. canary)")
    for side, (w, c) in med.items():
        print(f"  {side:8s} median wall {w:7.3f} s  CPU {c:7.3f} s  ({args.queries / w:,.0f} queries/s)  "
              f"repeats {[round(r[0], 3) for r in rows[side]]}")
    print(f"  ratio rulegauge/faiss: wall {med['rulegauge'][0] / med['faiss'][0]:.2f}x, "
          f"CPU {med['rulegauge'][1] / med['faiss'][1]:.2f}x (target <= 1.5x wall)")
    print(f"  same top-{args.k} set as faiss: {same:.3f} of queries; max |score diff| "
          f"{np.abs(hs - fs).max():.2e}; alone == batched row: "
          f"{np.array_equal(alone_s[0], hs[7]) and np.array_equal(alone_i[0], hi[7])}; "
          f"per-query fallback: {flat.per_query}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="50000,500000", help="corpus sizes, comma-separated")
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=2026)
    args = p.parse_args()
    print("start:", machine_line())
    print("kernel:", describe_kernel(None))
    for n in (int(s) for s in args.sizes.split(",")):
        one_size(n, args)
    print("end:  ", machine_line())


if __name__ == "__main__":
    main()
