"""Benchmark: the bm25 arm against bm25s (numba backend), per question and per process.

Corpus and questions: ``tests/helpers/generated_corpus.py`` (20 games, Zipf vocabulary of
30,000 words, seeded), ``--sizes`` chunks, ``--questions`` questions, top ``--depth``.
Both sides get the same tokens (rulegauge's tokenizer; bm25s indexes the token lists
given to it), Robertson/Okapi BM25 with k1 = 1.5, b = 0.75.

* per question: ``BM25Arm.search`` and then ``arm_frame`` on its results (what ``rulegauge
  run`` calls for the arm, all of it: tokenising, per-question scores, the exact top
  ``depth`` with ties by chunk id, and the arm's ``arm_ranks`` rows: chunk ids, ranks,
  scores, doc ids and pages gathered by corpus row into a DataFrame; the arm returns its
  hits as arrays, :class:`rulegauge.arms.results.HitColumns`, so the ids it once gathered per
  hit are gathered in ``arm_frame``, inside the timer) against ``BM25.retrieve(...,
  backend_selection="numba", n_threads=1)`` after the same tokenising (its top ``depth`` as
  arrays of chunk numbers and float32 scores, ties in any order, no ids, no table),
  alternating, after one warm-up call each (numba compiles on its first call), medians of
  ``--repeats``, wall and CPU seconds; printed beside it: the CPU of ``search`` alone and of
  ``arm_frame`` alone (the table, which bm25s has no counterpart for);
* whole process: a fresh Python process per side that builds the index from the generated
  corpus and answers every question, medians of ``--process-repeats``; the timer starts
  after the corpus is generated (rulegauge's modules are imported before it, bm25s's
  import and numba's compilation fall inside it: the cost a new process pays);
* rankings are not compared with bm25s (its idf differs); the arm equals rank-bm25 to the
  bit (``tests/arms/test_bm25.py``);
* preset ``lucene`` (``--presets okapi,lucene``): ``BM25Arm(preset="lucene")`` against
  ``bm25s.BM25(method="lucene", k1=0.9, b=0.4)`` (numba) on the tokens of the preset's
  analyzer (Lucene's English chain: stop words, Porter), per question and index build
  (the analysis included on both sides, as a run pays it), and the ratio of the lucene
  arm's per-question time to the okapi arm's in the same process; the scores are equal
  to bm25s's float64 to the bit (``tests/arms/test_bm25_lucene.py``).

Skips, saying why, when bm25s or numba is not installed (``pip install bm25s numba``).
Run: .venv/bin/python benchmarks/bench_bm25.py [--sizes 50000,200000]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the generated corpus lives with the tests

from machine import machine_line  # noqa: E402

from rulegauge.arms.base import ArmContext  # noqa: E402
from rulegauge.arms.bm25 import BM25Arm  # noqa: E402
from rulegauge.core.text import Tokenizer  # noqa: E402
from rulegauge.pipeline.arm_frame import arm_frame  # noqa: E402
from tests.helpers.generated_corpus import generated_corpus, generated_questions  # noqa: E402


def data(size: int, n_q: int, seed: int):  # type: ignore[no-untyped-def]
    corpus, vocab = generated_corpus(seed, size, n_games=20, vocab_size=30_000, chunk_len=(30, 150))
    return corpus, generated_questions(seed + 1, vocab, n_q, games=20)


def bm25s_index(corpus):  # type: ignore[no-untyped-def]
    import bm25s  # deferred: the peer

    tok = Tokenizer()
    model = bm25s.BM25(k1=1.5, b=0.75, method="robertson", backend="numba")
    model.index([tok(c.text) or ["\u2205"] for c in corpus.chunks], show_progress=False)
    return model


def bm25s_search(model, questions, depth: int):  # type: ignore[no-untyped-def]
    tok = Tokenizer()
    vocab = model.vocab_dict
    queries = [[t for t in tok(q.question) if t in vocab] or [next(iter(vocab))] for q in questions]
    return model.retrieve(queries, k=depth, show_progress=False, backend_selection="numba", n_threads=1)


def lucene_index(corpus):  # type: ignore[no-untyped-def]
    import bm25s  # deferred: the peer

    from rulegauge.arms.analyzers import lucene_english

    analyze = lucene_english()
    model = bm25s.BM25(k1=0.9, b=0.4, method="lucene", backend="numba")
    model.index([analyze(c.text) for c in corpus.chunks], show_progress=False)
    return model, analyze


def lucene_search(peer, questions, depth: int):  # type: ignore[no-untyped-def]
    model, analyze = peer
    vocab = model.vocab_dict
    queries = [[t for t in analyze(q.question) if t in vocab] or [next(iter(vocab))] for q in questions]
    return model.retrieve(queries, k=depth, show_progress=False, backend_selection="numba", n_threads=1)


def lucene_size(size: int, args: argparse.Namespace) -> None:
    """The lucene preset against bm25s's lucene method and against the okapi arm."""
    corpus, questions = data(size, args.questions, args.seed)
    okapi, lucene = BM25Arm(), BM25Arm(preset="lucene")
    okapi.prepare(corpus, ArmContext(Path(".")))
    t_arm, _ = timed(lambda: lucene.prepare(corpus, ArmContext(Path("."))))
    t_peer, peer = timed(lambda: lucene_index(corpus))
    lucene_search(peer, questions[:5], args.depth)  # numba compiles here
    n = len(questions)
    ours: list[float] = []
    theirs: list[float] = []
    base: list[float] = []
    for _ in range(args.repeats):  # alternating, CPU seconds
        ours.append(timed_cpu(lambda: arm_frame(lucene.search(questions, args.depth), corpus))[1])
        theirs.append(timed_cpu(lambda: lucene_search(peer, questions, args.depth))[1])
        base.append(timed_cpu(lambda: arm_frame(okapi.search(questions, args.depth), corpus))[1])
    o, p, k = (statistics.median(x) / n for x in (ours, theirs, base))
    print(f"{size:,} chunks, preset lucene: index build rulegauge {t_arm:.2f} s, bm25s-lucene {t_peer:.2f} s "
          f"-> {t_arm / t_peer:.2f}x; per question CPU: rulegauge {o * 1e3:.3f} ms, bm25s-lucene-numba "
          f"{p * 1e3:.3f} ms -> {o / p:.2f}x; against the okapi arm {k * 1e3:.3f} ms -> {o / k:.2f}x "
          f"(medians of {args.repeats})")
    print("  at:", machine_line())


def timed(fn):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def child(side: str, size: int, n_q: int, seed: int, depth: int) -> None:
    """One whole process: build + every question (printed: seconds after the corpus)."""
    corpus, questions = data(size, n_q, seed)
    t0 = time.perf_counter()
    if side == "rulegauge":
        arm = BM25Arm()
        arm.prepare(corpus, ArmContext(Path(".")))
        arm_frame(arm.search(questions, depth), corpus)
    else:
        bm25s_search(bm25s_index(corpus), questions, depth)
    print(f"SECONDS {time.perf_counter() - t0:.4f}")


def process_seconds(side: str, size: int, args: argparse.Namespace) -> float:
    out = subprocess.run([sys.executable, __file__, "--child", side, "--sizes", str(size),
                          "--questions", str(args.questions), "--seed", str(args.seed),
                          "--depth", str(args.depth)], capture_output=True, text=True, check=True)
    return float(next(line.split()[1] for line in out.stdout.splitlines() if line.startswith("SECONDS")))


def timed_cpu(fn):  # type: ignore[no-untyped-def]
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def part_seconds(arm: BM25Arm, corpus, questions, depth: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """CPU seconds of ``search`` alone and of ``arm_frame`` alone on its results."""
    c = time.process_time()
    res = arm.search(questions, depth)
    mid = time.process_time()
    arm_frame(res, corpus)
    return mid - c, time.process_time() - mid


def one_size(size: int, args: argparse.Namespace) -> None:
    corpus, questions = data(size, args.questions, args.seed)
    arm = BM25Arm()
    t_arm, _ = timed(lambda: arm.prepare(corpus, ArmContext(Path("."))))
    t_peer, model = timed(lambda: bm25s_index(corpus))
    arm_frame(arm.search(questions[:5], args.depth), corpus)
    bm25s_search(model, questions[:5], args.depth)  # numba compiles here
    n = len(questions)
    ours: list[tuple[float, float]] = []
    peer: list[tuple[float, float]] = []
    for _ in range(args.repeats):
        ours.append(timed_cpu(lambda: arm_frame(arm.search(questions, args.depth), corpus)))
        peer.append(timed_cpu(lambda: bm25s_search(model, questions, args.depth)))
    o, p = (statistics.median(x[0] for x in ours) / n), (statistics.median(x[0] for x in peer) / n)
    oc, pc = (statistics.median(x[1] for x in ours) / n), (statistics.median(x[1] for x in peer) / n)
    parts = [part_seconds(arm, corpus, questions, args.depth) for _ in range(args.repeats)]
    search, frame = (statistics.median(x[i] for x in parts) / n for i in (0, 1))
    print(f"{size:,} chunks, {n} questions, depth {args.depth}: index build rulegauge "
          f"{t_arm:.2f} s, bm25s {t_peer:.2f} s; {arm.describe()['dense_rows']} dense rows")
    print(f"  per question, wall: rulegauge {o * 1e3:.3f} ms, bm25s-numba {p * 1e3:.3f} ms -> rulegauge/bm25s "
          f"{o / p:.2f}x (target <= 1.00); CPU: rulegauge {oc * 1e3:.3f} ms, bm25s {pc * 1e3:.3f} ms -> "
          f"{oc / pc:.2f}x; of rulegauge's CPU, search {search * 1e3:.3f} ms, arm_frame {frame * 1e3:.3f} ms")
    print(f"  repeats (wall ms, CPU ms): rulegauge {[(round(w / n * 1e3, 3), round(c / n * 1e3, 3)) for w, c in ours]}"
          f" bm25s {[(round(w / n * 1e3, 3), round(c / n * 1e3, 3)) for w, c in peer]}")
    whole: dict[str, list[float]] = {"rulegauge": [], "bm25s": []}
    for _ in range(args.process_repeats):
        for side in whole:
            whole[side].append(process_seconds(side, size, args))
    if not args.process_repeats:
        print("  at:", machine_line())
        return
    h, b = statistics.median(whole["rulegauge"]), statistics.median(whole["bm25s"])
    print(f"  whole process (import + build + {n} questions, corpus generation excluded): "
          f"rulegauge {h:.2f} s, bm25s {b:.2f} s -> {h / b:.2f}x (target < 1); repeats {whole}")
    print("  at:", machine_line())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="50000,200000")
    ap.add_argument("--questions", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--process-repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--presets", default="okapi,lucene", help="okapi (against bm25s robertson), lucene, or both")
    ap.add_argument("--child", choices=("rulegauge", "bm25s"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, int(args.sizes), args.questions, args.seed, args.depth)
        return 0
    missing = [m for m in ("bm25s", "numba") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"SKIPPED: {', '.join(missing)} not installed (pip install bm25s numba): no peer to compare with")
        return 0
    print("start:", machine_line())
    presets = args.presets.split(",")
    for size in (int(s) for s in args.sizes.split(",")):
        if "okapi" in presets:
            one_size(size, args)
        if "lucene" in presets:
            lucene_size(size, args)
    print("end:  ", machine_line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
