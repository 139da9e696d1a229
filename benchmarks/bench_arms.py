"""Benchmark: the lexical arms (bm25, boost) on a generated 50k-chunk corpus.

Peers, measured in the same process on the same questions:

* bm25: rank-bm25 0.2.2 ``BM25Okapi.get_scores`` per question + the top ``depth``
  (the arm as it was: ``tests/helpers/lexical_reference.ReferenceBM25``), against
  ``rulegauge.arms.bm25.BM25Arm.search`` (what ``rulegauge run`` calls), both with the
  default ``idf_floor = "epsilon"``; rankings and scores are checked identical
  (compared as Hit tuples: chunk id, rank, score to the bit) for every timed question,
  and for ``idf_floor = "rank_bm25"`` on the first questions.
* boost: the first boost arm (a Python loop over every chunk per question,
  ``ReferenceBoost``) against ``rulegauge.arms.boost.BoostArm.search``; rankings
  compared allowing only swaps between chunks whose reference scores are within
  1e-12 (the reference's own hash-order rounding), reported as a count.

Per-question time = search time of the batch / questions; the peers are timed on a
subset (``--ref-questions``) because rank-bm25 takes ~0.1 s per question at 50k
chunks; the ratio compares per-question medians over ``--repeats`` runs. Index
build (``prepare``) times are printed too. The corpus and questions come from
``tests/helpers/generated_corpus.py`` with fixed seeds (reproducible).

Run: .venv/bin/python benchmarks/bench_arms.py [--chunks 50000] [--questions 1000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the reference arms live with the tests

from rulegauge.arms.base import ArmContext  # noqa: E402
from rulegauge.arms.bm25 import BM25Arm  # noqa: E402
from rulegauge.arms.boost import BoostArm  # noqa: E402
from tests.helpers.generated_corpus import generated_corpus, generated_questions  # noqa: E402
from tests.helpers.lexical_reference import ReferenceBM25, ReferenceBoost  # noqa: E402


def timed(fn):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def near_tie_swaps(got, ref, tol: float = 1e-12) -> int:  # type: ignore[no-untyped-def]
    """Positions where the lists differ; raises unless each is a near tie in the reference."""
    swaps = 0
    for g, r in zip(got, ref, strict=True):
        if len(g.hits) != len(r.hits):
            raise AssertionError(f"{g.question_id}: {len(g.hits)} vs {len(r.hits)} hits")
        ref_score = {h.chunk_id: h.score for h in r.hits}
        for a, b in zip(g.hits, r.hits, strict=True):
            if abs(a.score - b.score) > tol * max(1.0, abs(b.score)):
                raise AssertionError(f"{g.question_id}: score {a.score!r} vs {b.score!r}")
            if a.chunk_id != b.chunk_id:
                other = ref_score.get(a.chunk_id, b.score)
                if abs(other - b.score) > tol * max(1.0, abs(b.score)):
                    raise AssertionError(f"{g.question_id}: {a.chunk_id} vs {b.chunk_id}")
                swaps += 1
    return swaps


def hits(results):  # type: ignore[no-untyped-def]
    return [(r.question_id, r.hits) for r in results]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=50_000)
    ap.add_argument("--questions", type=int, default=1_000)
    ap.add_argument("--ref-questions", type=int, default=30)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()

    t_gen, (corpus, vocab) = timed(lambda: generated_corpus(args.seed, args.chunks, n_games=20,
                                                            vocab_size=30_000, chunk_len=(30, 150)))
    questions = generated_questions(args.seed + 1, vocab, args.questions, games=20)
    sub = questions[: args.ref_questions]
    print(f"corpus: {len(corpus.chunks)} chunks, {len(corpus.documents)} documents "
          f"(generated in {t_gen:.1f} s, seed {args.seed}); {len(questions)} questions, "
          f"peers on {len(sub)}; depth {args.depth}; medians of {args.repeats}")
    ctx = ArmContext(Path("."))

    rows = []
    for label, ours, ref in (("bm25", BM25Arm(), ReferenceBM25()), ("boost", BoostArm(), ReferenceBoost())):
        t_ours_prep, _ = timed(lambda o=ours: o.prepare(corpus, ctx))
        t_ref_prep, _ = timed(lambda r=ref: r.prepare(corpus))
        ours_q, ref_q = [], []
        for _ in range(args.repeats):
            t, got_all = timed(lambda o=ours: o.search(questions, args.depth))
            ours_q.append(t / len(questions))
            t, want = timed(lambda r=ref: r.search(sub, args.depth))
            ref_q.append(t / len(sub))
        got = got_all[: len(sub)]
        if label == "bm25":
            same = hits(got) == hits(want)
            check = "identical (ids, ranks, scores to the bit)" if same else "DIFFERENT"
        else:
            check = f"identical up to {near_tie_swaps(got, want)} swaps of near-tied chunks (<= 1e-12)"
        o, r = statistics.median(ours_q), statistics.median(ref_q)
        rows.append((label, o, r))
        print(f"{label}: prepare {t_ours_prep:.2f} s vs {t_ref_prep:.2f} s; per question "
              f"{o * 1e3:.3f} ms vs {r * 1e3:.2f} ms -> {r / o:.0f}x; rankings {check}")

    # the other idf floor: identity only
    arm, ref = BM25Arm(idf_floor="rank_bm25"), ReferenceBM25(idf_floor="rank_bm25")
    arm.prepare(corpus, ctx)
    ref.prepare(corpus)
    few = sub[:10]
    same = hits(arm.search(few, args.depth)) == hits(ref.search(few, args.depth))
    print(f"bm25 idf_floor=rank_bm25 on {len(few)} questions: {'identical' if same else 'DIFFERENT'}")
    for label, o, r in rows:
        print(f"RESULT {label}: {r / o:.1f}x rank-bm25/first-arm per question "
              f"({o * 1e3:.3f} ms vs {r * 1e3:.2f} ms)")


if __name__ == "__main__":
    main()
