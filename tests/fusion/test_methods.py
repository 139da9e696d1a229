"""Every fusion method against ranx (question by question, 1e-12) where ranx has it,
against formulas written here where it does not, and with deliberate ties."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from rulegauge.fusion.fuse import RankMatrix, fuse
from rulegauge.fusion.method import FUSION_METHODS, config_ceiling
from rulegauge.fusion.records import FusionConfig

ARMS = ("a", "b", "c")
NAN = math.nan


def config(method, arms=ARMS, weights=None, depths=None, k=60.0, **opts):
    weights = weights or (1.0,) * len(arms)
    depths = depths or (100,) * len(arms)
    return FusionConfig("c", "c", "grid", method, k if method == "rrf" else NAN, tuple(arms), tuple(weights),
                        tuple(depths), tuple(sorted(opts.items())))


def random_ranks(seed=7, nq=12, pool=40, per_arm=(25, 18, 10), distinct=True):
    """An arm_ranks table: each arm ranks a random subset by a random score (desc)."""
    rng = np.random.default_rng(seed)
    rows = []
    for qi in range(nq):
        for arm, n in zip(ARMS, per_arm, strict=True):
            n = int(rng.integers(1, n + 1))
            docs = rng.choice(pool, n, replace=False)
            scores = (np.sort(rng.random(n) * (10 if arm == "a" else 1))[::-1] if distinct
                      else np.sort(rng.integers(1, 4, n).astype(float))[::-1])
            for r, (d, s) in enumerate(zip(docs, scores, strict=True), start=1):
                rows.append((f"q{qi:02d}", arm, f"d{d:03d}", r, float(s)))
    return pd.DataFrame(rows, columns=["question_id", "arm", "chunk_id", "rank", "score"])


def ours(df, cfg):
    m = RankMatrix.from_arm_ranks(df, sorted(df.question_id.unique()), ARMS)
    f = fuse(m, cfg)
    out: dict[str, dict[str, float]] = {}
    for q, c, s in zip(m.question_ids[f.question_index], m.chunk_ids[f.rows], f.score, strict=True):
        out.setdefault(str(q), {})[str(c)] = float(s)
    return out, f, m


def ranx_runs(df, cfg):
    from ranx import Run

    runs = []
    for arm, d in zip(cfg.arms, cfg.depths, strict=True):
        sub = df[(df.arm == arm) & (df["rank"] <= d)]
        per = {q: dict(zip(g.chunk_id, g.score, strict=True)) for q, g in sub.groupby("question_id")}
        runs.append(Run({q: per.get(q, {}) for q in sorted(df.question_id.unique())}))
    return runs


def ranx_fused(df, cfg, norm, method, params=None):
    from ranx import fuse as rfuse

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's own deprecation notes
        run = rfuse(ranx_runs(df, cfg), norm=norm, method=method, params=params or {})
    return {q: dict(v) for q, v in run.run.items() if len(v)}


CASES = [  # (method, options, weights, ranx norm, ranx method, ranx params)
    ("rrf", {}, None, None, "rrf", {"k": 60}),
    ("combsum", {"norm": "min-max"}, None, "min-max", "sum", {}),
    ("combsum", {"norm": "z-score"}, None, "zmuv", "sum", {}),
    ("combsum", {"norm": "sum"}, None, "sum", "sum", {}),
    ("combsum", {"norm": "min-max"}, (0.7, 0.2, 1.3), "min-max", "wsum", {"weights": [0.7, 0.2, 1.3]}),
    ("combmnz", {"norm": "min-max"}, None, "min-max", "mnz", {}),
    ("combmnz", {"norm": "z-score"}, None, "zmuv", "mnz", {}),
    ("combmnz", {"norm": "sum"}, None, "sum", "mnz", {}),
    ("borda", {}, None, None, "bordafuse", {}),
    ("borda", {}, (0.7, 0.2, 1.3), None, "w_bordafuse", {"weights": [0.7, 0.2, 1.3]}),
    ("isr", {}, None, None, "isr", {}),
]


@pytest.mark.parametrize("method,opts,weights,norm,rmethod,params", CASES)
def test_equals_ranx_question_by_question(method, opts, weights, norm, rmethod, params):
    df = random_ranks()
    cfg = config(method, weights=weights, **opts)
    got, _, _ = ours(df, cfg)
    want = ranx_fused(df, cfg, norm, rmethod, params)
    assert set(got) == set(want)
    for q in want:
        assert set(got[q]) == set(want[q]), q
        for d, s in want[q].items():
            assert got[q][d] == pytest.approx(s, abs=1e-12, rel=1e-12), (q, d)


def test_depth_cut_applies_before_normalising():
    df = random_ranks(seed=3)
    cfg = config("combmnz", depths=(5, 100, 3), norm="min-max")
    got, _, _ = ours(df, cfg)
    want = ranx_fused(df, cfg, "min-max", "mnz")
    for q in want:
        for d, s in want[q].items():
            assert got[q][d] == pytest.approx(s, abs=1e-12)


def minmax_os(xs):
    lo, hi = min(xs.values()), max(xs.values())
    return {d: (1.0 if hi == lo else ((s - lo) / (hi - lo) or 0.001)) for d, s in xs.items()}


def l2(xs):
    n = math.sqrt(sum(s * s for s in xs.values()))
    return {d: s / n for d, s in xs.items()}


def relative(xs):
    lo, hi = min(xs.values()), max(xs.values())
    return {d: (1.0 if hi == lo else (s - lo) / (hi - lo)) for d, s in xs.items()}


def by_formula(df, cfg, norm_fn, combine):
    out: dict[str, dict[str, float]] = {}
    for q, g in df.groupby("question_id"):
        lists = []
        for a, d in zip(cfg.arms, cfg.depths, strict=True):
            h = g[(g.arm == a) & (g["rank"] <= d)]
            lists.append(norm_fn(dict(zip(h.chunk_id, h.score, strict=True))) if len(h) else {})
        docs = sorted({x for lst in lists for x in lst})
        out[str(q)] = {x: combine([lst.get(x) for lst in lists], cfg.weights) for x in docs}
    return out


def arith(vals, ws):
    return sum(w * (v or 0.0) for v, w in zip(vals, ws, strict=True)) / sum(ws)


def geo(vals, ws):
    pairs = [(v, w) for v, w in zip(vals, ws, strict=True) if v]
    return math.exp(sum(w * math.log(v) for v, w in pairs) / sum(w for _, w in pairs))


def harm(vals, ws):
    pairs = [(v, w) for v, w in zip(vals, ws, strict=True) if v]
    return sum(w for _, w in pairs) / sum(w / v for v, w in pairs)


@pytest.mark.parametrize("norm,fn", [("min-max", minmax_os), ("l2", l2)])
@pytest.mark.parametrize("mean,combine", [("arithmetic", arith), ("geometric", geo), ("harmonic", harm)])
def test_hybrid_by_formula(norm, fn, mean, combine):
    df = random_ranks(seed=11)
    cfg = config("hybrid", weights=(0.3, 0.7, 1.0), norm=norm, mean=mean)
    got, _, _ = ours(df, cfg)
    want = by_formula(df, cfg, fn, combine)
    for q in want:
        assert set(got[q]) == set(want[q])
        for d, s in want[q].items():
            assert got[q][d] == pytest.approx(s, abs=1e-12, rel=1e-12)


def test_relscore_by_formula_and_weighted_isr():
    df = random_ranks(seed=5)
    cfg = config("relscore", weights=(0.3, 0.7, 1.0))
    got, _, _ = ours(df, cfg)
    want = by_formula(df, cfg, relative,
                      lambda vals, ws: sum(w * v for v, w in zip(vals, ws, strict=True) if v is not None))
    for q in want:
        for d, s in want[q].items():
            assert got[q][d] == pytest.approx(s, abs=1e-12)
    cfg = config("isr", weights=(0.5, 2.0, 1.0), depths=(4, 100, 100))
    got, _, _ = ours(df, cfg)
    for (q, doc), g in df.groupby(["question_id", "chunk_id"]):
        votes = [(float(w), int(r)) for a, w, d in zip(ARMS, cfg.weights, cfg.depths, strict=True)
                 for r in g[g.arm == a]["rank"] if r <= d]
        if votes:
            assert got[q][doc] == pytest.approx(len(votes) * sum(w / r ** 2 for w, r in votes), abs=1e-12)


def exact_key(method, cfg, df, q, doc):
    """The exact rational score a rank-based method gives ``doc`` (formula written here)."""
    g = df[df.question_id == q]
    ranks = {a: dict(zip(g[g.arm == a].chunk_id, g[g.arm == a]["rank"], strict=True)) for a in cfg.arms}
    cut = {a: {x: r for x, r in ranks[a].items() if r <= d} for a, d in zip(cfg.arms, cfg.depths, strict=True)}
    if method == "borda":
        cand = {x for a in cfg.arms for x in cut[a]}
        n = len(cand)
        return sum(Fraction(w) * (Fraction(n - cut[a][doc] + 1) if doc in cut[a] else Fraction(n - len(cut[a]) + 1, 2))
                   for a, w in zip(cfg.arms, cfg.weights, strict=True))
    votes = [(Fraction(w), cut[a][doc]) for a, w in zip(cfg.arms, cfg.weights, strict=True) if doc in cut[a]]
    if method == "isr":
        return len(votes) * sum(w / (r * r) for w, r in votes)
    return sum(w / (Fraction(cfg.k) + r) for w, r in votes)


@pytest.mark.parametrize("method", FUSION_METHODS.names())
def test_order_is_exact_with_ties_by_chunk_id(method):
    df = random_ranks(seed=2, distinct=False)  # integer arm scores: many exact ties
    cfg = config(method, **({"norm": "min-max"} if method in ("combsum", "combmnz", "hybrid") else {}))
    _, f, m = ours(df, cfg)
    ids = m.chunk_ids[f.rows].astype(str)
    ties = 0
    for qi in np.unique(f.question_index):
        sel = np.flatnonzero(f.question_index == qi)
        q = str(m.question_ids[qi])
        if FUSION_METHODS.get(method).rank_based:
            keys = [(-exact_key(method, cfg, df, q, ids[i]), ids[i]) for i in sel]
        else:
            keys = [(-float(f.score[i]), ids[i]) for i in sel]
        assert keys == sorted(keys), (method, q)
        ties += sum(keys[i][0] == keys[i + 1][0] for i in range(len(keys) - 1))
        assert f.fused_rank[sel].tolist() == list(range(1, len(sel) + 1))
    assert ties > 0  # the data does exercise ties


def test_borda_equal_points_are_ties_broken_by_chunk_id():
    df = pd.DataFrame([("q", "a", "x2", 1, 5.0), ("q", "a", "x3", 2, 1.0), ("q", "b", "x1", 1, 5.0),
                       ("q", "b", "x3", 2, 1.0)], columns=["question_id", "arm", "chunk_id", "rank", "score"])
    got, f, m = ours(df, config("borda", arms=("a", "b")))
    # N = 3: x1 = b 3 + a (3-2+1)/2 = 4; x2 = a 3 + b 1 = 4; x3 = a 2 + b 2 = 4
    assert m.chunk_ids[f.rows].tolist() == ["x1", "x2", "x3"]
    assert got["q"] == {"x1": 4.0, "x2": 4.0, "x3": 4.0}


def test_ceilings_per_method():
    c = {m: FUSION_METHODS.get(m) for m in FUSION_METHODS.names()}
    assert c["rrf"].ceiling(config("rrf")) == pytest.approx(3 / 61)
    assert c["combsum"].ceiling(config("combsum", norm="min-max")) == 3.0
    assert c["combsum"].ceiling(config("combsum", norm="z-score")) is None
    assert c["combmnz"].ceiling(config("combmnz", weights=(1.0, 0.5, 0.5), norm="sum")) == 6.0
    assert c["hybrid"].ceiling(config("hybrid", norm="l2", mean="geometric")) == 1.0
    assert c["borda"].ceiling(config("borda")) is None
    assert c["isr"].ceiling(config("isr", arms=("a", "b"))) == 4.0
    assert math.isnan(config_ceiling(config("borda")))


def test_isr_exact_tie_between_different_ranks_goes_to_the_chunk_id():
    # x2: rank 1 by a alone -> 1 * 1/1 = 1; x1: rank 2 by b and c -> 2 * (1/4 + 1/4) = 1
    df = pd.DataFrame([("q", "a", "x2", 1, 1.0), ("q", "b", "x3", 1, 1.0), ("q", "b", "x1", 2, 1.0),
                       ("q", "c", "x1", 2, 1.0), ("q", "c", "x4", 1, 1.0), ("q", "a", "x5", 2, 1.0)],
                      columns=["question_id", "arm", "chunk_id", "rank", "score"])
    got, f, m = ours(df, config("isr", weights=(1.0, 1.0, 1.0)))
    assert got["q"]["x1"] == got["q"]["x2"] == 1.0
    assert m.chunk_ids[f.rows].tolist() == ["x1", "x2", "x3", "x4", "x5"]
    # weighted (0.5, 2, 1): x2 = 0.5, x1 = 2 * (2/4 + 1/4) = 1.5, x3 = 2, x4 = 1, x5 = 0.125
    got, f, m = ours(df, config("isr", weights=(0.5, 2.0, 1.0)))
    assert m.chunk_ids[f.rows].tolist() == ["x3", "x1", "x4", "x2", "x5"]
