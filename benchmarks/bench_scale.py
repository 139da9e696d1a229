"""Benchmark: how each stage of a run grows with corpus and gold-set size.

A generated library (seed 0, reproducible): 20 games, each a rulebook and an errata
as JSONL pages of 40-80 words from a Zipf vocabulary of 20,000 synthetic words,
one chunk per page; questions are 8 words drawn from one page (its relevant page)
plus 2 random words. Sizes: 5k and 50k chunks x 1k and 10k questions; each size
runs in its own process so its peak memory is its own.

Stages, timed with the code the command runs (medians are not taken: one pass per
size, the machine is shared; run it twice to see the noise):

* ``load``: ``load_goldset`` + ``build_corpus`` over the generated files.
* ``bm25``, ``boost``: the registered arms on this branch: ``prepare`` once (timed in
  full), ``search`` at depth 100 on ``--arm-sample`` questions (default 200), scaled
  linearly to all questions (per-question cost does not depend on the other
  questions; 0 = search them all).
* ``dense``: search from cached vectors: the dense arm's faiss ``IndexFlatIP`` built
  over random unit 384-d chunk vectors (embedding is benchmarked in
  ``bench_models.py``), searched per question as the arm does, sample scaled likewise.
* ``fuse+score``: ``RankMatrix`` + gold lookups + every config of a 200-config grid
  (50 k values x 4 arm subsets) plus 3 single-arm configs scored through
  ``harness.pipeline.grid_tables.grid_tables`` (the ``harness run`` scoring step; no
  fused rows stored), over stored arm ranks of 3 arms x 100 per question.
* ``write``: the ``arm_ranks`` and ``metrics`` tables written through ``RunWriter``.

Memory: peak traced allocation per stage (``tracemalloc``, NumPy buffers included)
and the process's peak RSS (``ru_maxrss``). Target: peak RSS of the
50k-chunk/10k-question/200-config run < 4 GB.

Run: .venv/bin/python benchmarks/bench_scale.py [--sizes 5000x1000,50000x1000,5000x10000,50000x10000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

GAMES = 20
DEPTH = 100


def generate(root: Path, n_chunks: int, n_q: int, seed: int = 0) -> Path:
    """Write the generated library and gold set under ``root``; return the gold set path."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i:05d}" for i in range(20000)])
    zipf = 1.0 / np.arange(1, len(vocab) + 1)
    zipf /= zipf.sum()
    per_game = n_chunks // GAMES
    lengths = rng.integers(40, 81, size=n_chunks + GAMES)
    pool = iter(np.split(rng.choice(vocab, size=int(lengths.sum()), p=zipf), np.cumsum(lengths)[:-1]))
    docs, pages = [], []  # (doc_id, kind, game), (doc index, page, words)
    lines = ["goldset: scale", "version: 1", "documents:"]
    for g in range(GAMES):
        for kind, n in (("rulebook", per_game - per_game // 10), ("errata", per_game // 10)):
            did = f"g{g:02d}-{kind}"
            path = root / f"{did}.jsonl"
            with path.open("w") as f:
                for p in range(1, n + 1):
                    words = next(pool)
                    f.write(json.dumps({"page": p, "heading": f"Section {p}", "text": " ".join(words)}) + "\n")
                    pages.append((len(docs), p, words))
            docs.append((did, kind, f"Game {g:02d}"))
            lines += [f"  - id: {did}", f"    path: {path.name}", f"    kind: {kind}",
                      f"    game: Game {g:02d}", "    edition: en-1", "    language: en", f"    title: {did}"]
    lines.append("questions:")
    for i in range(n_q):
        di, p, words = pages[int(rng.integers(len(pages)))]
        text = " ".join(list(rng.choice(words, 8)) + list(rng.choice(vocab, 2)))
        lines.append(f"  - {{id: s-{i:05d}, language: en, game: {docs[di][2]!r}, question: \"{text}\", "
                     f"pages: [{docs[di][0]}#{p}]}}")
    gs = root / "scale.yaml"
    gs.write_text("\n".join(lines) + "\n")
    return gs


class Stages:
    def __init__(self) -> None:
        self.out: dict[str, dict[str, float]] = {}

    def run(self, name: str, fn, scale: float = 1.0):  # type: ignore[no-untyped-def]
        tracemalloc.start()
        t0 = time.perf_counter()
        result = fn()
        dt = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        self.out[name] = {"s": dt * scale, "measured_s": dt, "scale": scale, "peak_mb": peak / 2**20}
        return result


def sample_ranks(n_q: int, n_chunks: int, chunk_ids: np.ndarray, seed: int = 1) -> pd.DataFrame:
    """Stored arm ranks for the scoring stage: 3 arms x 100 per question, correlated."""
    rng = np.random.default_rng(seed)
    pool = 400
    q_col, arm_col, c_col, r_col = [], [], [], []
    for i in range(n_q):
        cand = rng.choice(n_chunks, size=pool, replace=False)
        base = rng.random(pool)
        for arm in ("bm25", "dense", "boost"):
            top = cand[np.argsort(-(base + rng.normal(0, 0.5, pool)), kind="stable")[:DEPTH]]
            q_col.append(np.full(DEPTH, i))
            arm_col += [arm] * DEPTH
            c_col.append(top)
            r_col.append(np.arange(1, DEPTH + 1))
    qi = np.concatenate(q_col)
    return pd.DataFrame({"question_id": np.char.add("s-", np.char.zfill(qi.astype(str), 5)),
                         "arm": arm_col, "chunk_id": chunk_ids[np.concatenate(c_col)],
                         "rank": np.concatenate(r_col).astype(np.int32)})


def one(n_chunks: int, n_q: int, arm_sample: int) -> dict[str, object]:
    from harness.arms import ARMS, ArmContext, load_builtin_arms
    from harness.arms.dense import DenseArm
    from harness.corpus.chunking import ChunkingOptions, build_corpus
    from harness.fusion.configs import FusionConfig, RunConfig
    from harness.fusion.fuse import RankMatrix
    from harness.goldset.parse import load_goldset
    from harness.metrics.pages import make_gold
    from harness.metrics.ranking import DEFAULT_METRICS, parse
    from harness.pipeline.grid_tables import grid_tables
    from harness.store.rundir import RunWriter

    load_builtin_arms()
    st = Stages()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        gs_path = generate(root, n_chunks, n_q)
        gs, corpus = st.run("load", lambda: (lambda g: (g, build_corpus(g.documents, ChunkingOptions())))(
            load_goldset(gs_path)))
        sample = gs.questions[: arm_sample or len(gs.questions)]
        scale = len(gs.questions) / len(sample)
        ctx = ArmContext(cache_dir=root / "cache")
        for name in ("bm25", "boost"):
            arm = ARMS.get(name)()
            st.run(f"{name} prepare", lambda a=arm: a.prepare(corpus, ctx))
            st.run(f"{name} search", lambda a=arm: a.search(sample, DEPTH), scale)

        def dense() -> None:
            rng = np.random.default_rng(2)
            vec = rng.standard_normal((len(corpus.chunks), 384)).astype(np.float32)
            vec /= np.linalg.norm(vec, axis=1, keepdims=True)
            qv = rng.standard_normal((len(sample), 384)).astype(np.float32)
            qv /= np.linalg.norm(qv, axis=1, keepdims=True)
            arm = DenseArm()
            arm._index = faiss.IndexFlatIP(384)
            arm._index.add(vec)
            arm._ids = [c.chunk_id for c in corpus.chunks]
            return arm, qv

        import faiss

        arm, qv = st.run("dense index", dense)
        st.run("dense search", lambda: [arm._top(v, DEPTH) for v in qv], scale)
        chunk_ids = np.array([c.chunk_id for c in corpus.chunks], dtype=object)
        ar = sample_ranks(len(gs.questions), len(chunk_ids), chunk_ids)
        subsets = (("bm25", "dense", "boost"), ("bm25", "dense"), ("bm25", "boost"), ("dense", "boost"))
        grid = [FusionConfig(f"k{k}-{'+'.join(a)}", f"k{k}-{'+'.join(a)}", "grid", "rrf", float(k), a,
                             (1.0,) * len(a), (DEPTH,) * len(a)) for k in range(1, 101, 2) for a in subsets]
        grid += [FusionConfig(f"arm-{a}", f"arm-{a}", "arm", "rrf", 60.0, (a,), (1.0,), (DEPTH,))
                 for a in ("bm25", "dense", "boost")]
        cfg = RunConfig("<generated>", "", {}, tuple(grid), {})
        specs = [parse(m) for m in DEFAULT_METRICS]

        def score():  # type: ignore[no-untyped-def]
            qids = [q.question_id for q in gs.questions]
            matrix = RankMatrix.from_arm_ranks(ar, qids, ("bm25", "dense", "boost"))
            gold = make_gold(gs.questions, matrix, {c.chunk_id: (c.doc_id, c.page) for c in corpus.chunks})
            return grid_tables(matrix, gold, cfg, specs, [], 0)[0]

        metrics = st.run("fuse+score", score)
        by_id = corpus.chunk_by_id
        full = ar.assign(doc_id=[by_id[c].doc_id for c in ar["chunk_id"]],
                         page=np.array([by_id[c].page for c in ar["chunk_id"]], np.int32), score=1.0)
        w = RunWriter(root / "run")
        st.run("write", lambda: (w.write_table("arm_ranks", full[["question_id", "arm", "chunk_id", "doc_id",
                                                                  "page", "rank", "score"]]),
                                 w.write_arrow("metrics", metrics)))
        return {"chunks": len(corpus.chunks), "questions": len(gs.questions), "configs": len(grid),
                "arm_sample": len(sample), "metric_rows": metrics.num_rows, "stages": st.out,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="5000x1000,50000x1000,5000x10000,50000x10000")
    ap.add_argument("--arm-sample", type=int, default=200)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--log", type=Path, help="also append each size's JSON result to this file")
    args = ap.parse_args()
    if args.one:
        n, q = (int(x) for x in args.one.split("x"))
        print(json.dumps(one(n, q, args.arm_sample)))
        return
    results = []
    for size in args.sizes.split(","):
        p = subprocess.run([sys.executable, __file__, "--one", size, "--arm-sample", str(args.arm_sample)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"size {size} failed:\n{p.stderr[-3000:]}")
        results.append(json.loads(p.stdout.strip().splitlines()[-1]))
        if args.log:
            with args.log.open("a") as f:
                f.write(json.dumps(results[-1]) + "\n")
    stages = list(results[0]["stages"])
    print(f"{'chunks':>7} {'questions':>9} " + " ".join(f"{s:>16}" for s in stages) + f" {'peak RSS':>10}")
    for r in results:
        cells = [f"{r['stages'][s]['s']:7.2f}s {r['stages'][s]['peak_mb']:6.0f}MB" for s in stages]
        print(f"{r['chunks']:>7} {r['questions']:>9} " + " ".join(cells) + f" {r['peak_rss_mb']:8.0f}MB")
    print(f"(bm25/boost/dense: {results[0]['arm_sample']} questions searched, scaled to all; "
          f"fuse+score: {results[0]['configs']} configs)")
    key = {(r["chunks"] // 1000, r["questions"] // 1000): r for r in results}
    for s in stages:
        growth = []
        for small, big, what in (((5, 1), (50, 1), "x10 chunks"), ((5, 1), (5, 10), "x10 questions")):
            if small in key and big in key:
                a, b = key[small]["stages"][s]["s"], key[big]["stages"][s]["s"]
                growth.append(f"{what}: x{b / a:.1f} time")
        print(f"{s:>10}: " + "; ".join(growth))


if __name__ == "__main__":
    main()
