"""Benchmark: the dense arm's search as ``rulegauge run`` calls it, against faiss ``IndexFlatIP.search``.

The user's path: ``rulegauge run`` prepares the ``dense`` arm once (model, embedding cache,
index) and then times ``DenseArm.search(questions, depth)``: the questions' vectors read from
the embedding cache, the exact search (:class:`rulegauge.arms.flat_search.FlatSearch`) and the
hits handed back as columns. That call is timed here on a generated corpus (``--chunks``
chunks of ``tests/helpers/generated_corpus``, ``--queries`` questions), the arm prepared
through a registered stand-in model (``bench-seeded``: a unit vector seeded by the text's
SHA-256, so no model is loaded and every vector is in the cache before timing).

Peer, in the same process on the same vectors: faiss ``IndexFlatIP.search`` (the search the
arm used before; its own OpenMP threads, ``OMP_NUM_THREADS`` honoured). Also timed: the
kernel alone (``FlatSearch.search`` on the arm's query vectors). The three sides are
interleaved, their order rotating every repeat; printed are median wall and CPU seconds per
side over ``--repeats`` and the ratios to faiss, with the machine line (date, CPU flags,
load) before and after. Checked and printed: the arm's hits are the kernel's rows, the
share of queries whose top-k set equals faiss's (they differ only where two scores are
within the kernels' rounding), the largest score difference, and that a query searched
alone gets its batched row bit for bit.

Run: .venv/bin/python benchmarks/bench_dense.py [--chunks 50000] [--repeats 15]
     OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_dense.py   # one thread each side
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from machine import machine_line
from standin import SeededModel

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the generated corpus lives with the tests

from rulegauge.arms.base import ArmContext  # noqa: E402
from rulegauge.arms.dense import DenseArm  # noqa: E402
from rulegauge.arms.flat_search import FlatSearch, describe_kernel  # noqa: E402
from rulegauge.embedding.models import EMBEDDING_MODELS, ModelSpec  # noqa: E402
from tests.helpers.generated_corpus import generated_corpus, generated_questions  # noqa: E402

STAND_IN = "bench-seeded"


def timed(fn):  # type: ignore[no-untyped-def]
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def one_size(n: int, args: argparse.Namespace, cache: Path) -> None:
    import faiss  # deferred: the peer

    corpus, vocab = generated_corpus(args.seed, n, n_games=20, vocab_size=20_000, chunk_len=(20, 60))
    questions = generated_questions(args.seed + 1, vocab, args.queries, games=20)
    model = SeededModel(STAND_IN, args.dim, "benchmark stand-in, seeded unit vectors")
    if STAND_IN not in EMBEDDING_MODELS:
        EMBEDDING_MODELS.add(STAND_IN, ModelSpec(STAND_IN, "benchmark stand-in", lambda root, backend: model))
    arm = DenseArm(model=STAND_IN, cache_dir=cache)
    b_arm, _, _ = timed(lambda: arm.prepare(corpus, ArmContext(cache_dir=cache)))
    arm.search(questions, args.k)  # the questions' vectors into the cache (a rerun of `run` finds them)
    x = model.encode_passages([c.search_text for c in corpus.chunks])
    q = model.encode_queries([qq.question for qq in questions])
    b_faiss, _, index = timed(lambda: (ix := faiss.IndexFlatIP(args.dim), ix.add(x))[0])
    flat = FlatSearch(x)
    sides = {"faiss": lambda: index.search(q, args.k), "dense arm": lambda: arm.search(questions, args.k),
             "kernel": lambda: flat.search(q, args.k)}
    rows: dict[str, list[tuple[float, float]]] = {s: [] for s in sides}
    out: dict[str, Any] = {}
    names = list(sides)
    for rep in range(args.repeats):
        for side in names[rep % 3:] + names[:rep % 3]:  # rotate who goes first
            w, c, out[side] = timed(sides[side])
            rows[side].append((w, c))
    med = {s: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)) for s, v in rows.items()}
    fs, fi = out["faiss"]
    hs, hi = out["kernel"]
    arm_rows = np.stack([r.columns(corpus.chunk_columns).rows for r in out["dense arm"]])
    same = np.mean([set(a.tolist()) == set(b.tolist()) for a, b in zip(hi, fi, strict=True)])
    alone_s, alone_i = flat.search(q[7:8], args.k)
    print(f"{n:>9,} chunks x {args.dim} | {args.queries} questions, k={args.k} | prepare: dense arm "
          f"{b_arm:.1f} s (stand-in model, cache filled), faiss index {b_faiss:.2f} s | "
          f"search threads: rulegauge {flat.threads}, faiss {faiss.omp_get_max_threads()}")
    for side, (w, c) in med.items():
        print(f"  {side:9s} median wall {w:7.3f} s  CPU {c:7.3f} s  ({args.queries / w:,.0f} queries/s)  "
              f"walls {[round(r[0], 3) for r in rows[side]]}")
    for side in ("dense arm", "kernel"):
        print(f"  ratio {side}/faiss: wall {med[side][0] / med['faiss'][0]:.2f}x, "
              f"CPU {med[side][1] / med['faiss'][1]:.2f}x (target <= 1x)")
    print(f"  arm hits = kernel rows: {np.array_equal(arm_rows, hi)}; same top-{args.k} set as faiss: "
          f"{same:.3f} of queries; max |score diff| {np.abs(hs - fs).max():.2e}; alone == batched row: "
          f"{np.array_equal(alone_s[0], hs[7]) and np.array_equal(alone_i[0], hi[7])}; "
          f"per-query fallback: {flat.per_query}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chunks", default="50000", help="corpus sizes, comma-separated")
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--seed", type=int, default=2026)
    args = p.parse_args()
    print("start:", machine_line(), f"| OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print("kernel:", describe_kernel(None))
    with tempfile.TemporaryDirectory(prefix="bench-dense-") as tmp:
        for n in (int(s) for s in args.chunks.split(",")):
            one_size(n, args, Path(tmp))
    print("end:  ", machine_line())


if __name__ == "__main__":
    main()
