"""Benchmark: a fusion-config sweep scored by the harness against ranx.

Synthetic data: 1,000 questions x 3 arms, each arm ranking 100 of 400 candidate
pages per question (one chunk per page), 1-3 relevant pages per question; 200
configs = 50 values of k x 4 arm subsets (unweighted RRF at full depth, which
ranx's ``rrf`` can express too). Both sides fuse every config and score
recall@10, MRR@10, nDCG@10 and hit@5, in the same process.

The harness side is ``harness.pipeline.sweep.sweep`` (configs on the machine's cores, as
ranx's numba kernels use them too). The peer, ranx (fuse(method="rrf") +
evaluate), is measured on a subset of the
configs because it takes seconds per config; rates are question-configs per
second, so the ratio is fair. Medians of repeated runs are printed (the machine
is shared and noisy). The largest absolute metric difference is over the configs
both sides scored; ranx orders fused ties its own way, ours by page id, so a
difference can only come from ties (reported separately as tie-free max diff).

Run: .venv/bin/python benchmarks/bench_sweep.py [--questions 1000] [--ranx-configs 8]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd

from harness.fusion.configs import FusionConfig
from harness.fusion.fuse import RankMatrix
from harness.goldset.records import PageRef, Question
from harness.metrics.pages import make_gold
from harness.pipeline.sweep import sweep

METRICS = ("recall@10", "MRR@10", "nDCG@10", "hit@5")
RANX = {"recall@10": "recall@10", "MRR@10": "mrr@10", "nDCG@10": "ndcg@10", "hit@5": "hit_rate@5"}
ARMS = ("a", "b", "c")
SUBSETS = (("a", "b", "c"), ("a", "b"), ("a", "c"), ("b", "c"))


def make_data(n_q: int, seed: int = 0, depth: int = 100, pool: int = 400):
    rng = np.random.default_rng(seed)
    qids = [f"q{i:05d}" for i in range(n_q)]
    docs = np.array([f"d#{p}" for p in range(1, pool + 1)])
    q_col, arm_col, doc_col, rank_col = [], [], [], []
    questions = []
    for qid in qids:
        rel = rng.choice(pool, size=int(rng.integers(1, 4)), replace=False) + 1
        questions.append(Question(qid, "x", "en", tuple((PageRef("d", int(p)),) for p in sorted(rel))))
        # arms are correlated with relevance: relevant pages tend to rank higher
        base = rng.random(pool)
        base[rel - 1] += 0.6
        for arm in ARMS:
            noisy = base + rng.normal(0, 0.5, pool)
            top = np.argsort(-noisy, kind="stable")[:depth]
            q_col += [qid] * depth
            arm_col += [arm] * depth
            doc_col += list(docs[top])
            rank_col += list(range(1, depth + 1))
    ar = pd.DataFrame({"question_id": q_col, "arm": arm_col, "chunk_id": doc_col, "rank": rank_col})
    return qids, questions, ar


def configs() -> list[FusionConfig]:
    out = []
    for k in range(1, 101, 2):
        for arms in SUBSETS:
            cid = f"k{k}-{'+'.join(arms)}"
            out.append(FusionConfig(cid, cid, "grid", "rrf", float(k), arms, (1.0,) * len(arms),
                                    (100,) * len(arms)))
    return out


def harness_sweep(matrix, gold, cfgs):
    df = sweep(matrix, gold, cfgs, METRICS)
    return {r["config_id"]: {m: r[m] for m in METRICS} for _, r in df.iterrows()}


def tie_free_difference(matrix, gold, runs, qrels, cfgs):
    """Largest per-question difference over questions whose fused top 11 has no tied
    scores (where the two tie rules cannot disagree), and how many such pairs."""
    from ranx import evaluate
    from ranx import fuse as rfuse

    from harness.metrics.ranking import compute, parse
    from harness.pipeline.sweep import DenseRanks, _scores, page_lists_topk

    dense = DenseRanks.build(matrix, gold)
    specs = [parse(m) for m in METRICS]
    worst, pairs = 0.0, 0
    for c in cfgs:
        ours = compute(specs, page_lists_topk(dense, gold, c, 10))
        top = -np.sort(-_scores(dense, c), axis=1)[:, :11]
        clean = ~(np.diff(top, axis=1) == 0).any(axis=1)
        fused = rfuse([runs[a] for a in c.arms], norm=None, method="rrf", params={"k": int(c.k)})
        theirs = evaluate(qrels, fused, list(RANX.values()), return_mean=False)
        for m in METRICS:
            d = np.abs(ours[m] - np.asarray(theirs[RANX[m]]))[clean]
            worst = max(worst, float(d.max(initial=0.0)))
        pairs += int(clean.sum())
    return worst, pairs


def ranx_sweep(runs, qrels, cfgs):
    from ranx import evaluate
    from ranx import fuse as rfuse

    out = {}
    for c in cfgs:
        fused = rfuse([runs[a] for a in c.arms], norm=None, method="rrf", params={"k": int(c.k)})
        res = evaluate(qrels, fused, list(RANX.values()))
        out[c.config_id] = {m: float(res[RANX[m]]) for m in METRICS}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=1000)
    ap.add_argument("--ranx-configs", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    from ranx import Qrels, Run

    qids, questions, ar = make_data(args.questions)
    cfgs = configs()
    t0 = time.perf_counter()
    matrix = RankMatrix.from_arm_ranks(ar, qids, ARMS)
    gold = make_gold(questions, matrix, {c: ("d", int(c.split("#")[1])) for c in set(ar["chunk_id"])})
    prep_h = time.perf_counter() - t0

    t0 = time.perf_counter()
    runs = {}
    for arm in ARMS:
        sub = ar[ar["arm"] == arm]
        d: dict[str, dict[str, float]] = {}
        for qid, doc, rank in zip(sub["question_id"], sub["chunk_id"], sub["rank"], strict=True):
            d.setdefault(qid, {})[doc] = 1.0 / rank
        runs[arm] = Run.from_dict(d, name=arm)
    qrels = Qrels.from_dict({x.question_id: {str(p[0]): 1 for p in x.requirements} for x in questions})
    prep_r = time.perf_counter() - t0

    ranx_cfgs = cfgs[:: max(1, len(cfgs) // args.ranx_configs)][: args.ranx_configs]
    ranx_sweep(runs, qrels, ranx_cfgs[:1])  # warm numba's JIT outside the timing
    th, tr = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        ours = harness_sweep(matrix, gold, cfgs)
        th.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        theirs = ranx_sweep(runs, qrels, ranx_cfgs)
        tr.append(time.perf_counter() - t0)
    rate_h = len(qids) * len(cfgs) / statistics.median(th)
    rate_r = len(qids) * len(ranx_cfgs) / statistics.median(tr)
    diff = max(abs(ours[c.config_id][m] - theirs[c.config_id][m]) for c in ranx_cfgs for m in METRICS)
    print(f"data: {len(qids)} questions x {len(cfgs)} configs x {len(ARMS)} arms at depth 100")
    print(f"one-time preparation: harness matrix {prep_h:.2f} s, ranx Run objects {prep_r:.2f} s")
    print(f"harness: {len(cfgs)} configs, median {statistics.median(th):.2f} s "
          f"-> {rate_h:,.0f} question-configs/s")
    print(f"ranx:    {len(ranx_cfgs)} configs, median {statistics.median(tr):.2f} s "
          f"-> {rate_r:,.0f} question-configs/s")
    print(f"ratio harness/ranx: {rate_h / rate_r:.1f}x")
    print(f"largest metric difference (mean over questions, {len(ranx_cfgs)} shared configs): {diff:.3g}"
          " (ties: ranx orders tied fused scores its own way, the harness by page id)")
    worst, pairs = tie_free_difference(matrix, gold, runs, qrels, ranx_cfgs)
    print(f"largest per-question difference where no fused tie touches the top 11: {worst:.3g} "
          f"({pairs} question-configs)")


if __name__ == "__main__":
    main()
