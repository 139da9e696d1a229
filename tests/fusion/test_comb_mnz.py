"""Weighted CombMNZ against formulas written here (ranx 0.3.21 has no such method: its
``wmnz`` is Wu & Crestani's ``sum(s) * sum(w of the voting arms)``, a different formula),
and its ties: equal fused floats ordered by chunk id."""

from __future__ import annotations

import math
import statistics

import pandas as pd
import pytest

from tests.fusion.test_methods import config, ours, random_ranks

WEIGHTS = (0.7, 0.2, 1.3)


def minmax(xs):
    lo, hi = min(xs.values()), max(xs.values())
    return {d: (s - lo) / max(hi - lo, 1e-9) for d, s in xs.items()}


def zscore(xs):
    mean = statistics.fmean(xs.values())
    std = math.sqrt(statistics.fmean((s - mean) ** 2 for s in xs.values()))
    return {d: (s - mean) / max(std, 1e-9) for d, s in xs.items()}


def sumnorm(xs):
    lo = min(xs.values())
    total = sum(xs.values()) - len(xs) * lo
    return {d: (s - lo) / max(total, 1e-9) for d, s in xs.items()}


def weighted_mnz(df, cfg, norm_fn):
    """n(d) * sum over the arms voting for d of w_a * norm_a(s_a(d)), per question."""
    out: dict[str, dict[str, float]] = {}
    for q, g in df.groupby("question_id"):
        lists = []
        for arm, w, depth in zip(cfg.arms, cfg.weights, cfg.depths, strict=True):
            h = g[(g.arm == arm) & (g["rank"] <= depth)]
            lists.append((w, norm_fn(dict(zip(h.chunk_id, h.score, strict=True))) if len(h) else {}))
        docs = {d for _, lst in lists for d in lst}
        out[str(q)] = {d: sum(1 for _, lst in lists if d in lst) * sum(w * lst[d] for w, lst in lists if d in lst)
                       for d in docs}
    return out


@pytest.mark.parametrize(("norm", "fn"), [("min-max", minmax), ("z-score", zscore), ("sum", sumnorm)])
def test_weighted_combmnz_by_formula(norm, fn):
    df = random_ranks(seed=13)
    for depths in ((100, 100, 100), (6, 100, 4)):
        cfg = config("combmnz", weights=WEIGHTS, depths=depths, norm=norm)
        got, _, _ = ours(df, cfg)
        want = weighted_mnz(df, cfg, fn)
        assert set(got) == {q for q, v in want.items() if v}
        for q, per in want.items():
            assert set(got.get(q, {})) == set(per), q
            for d, s in per.items():
                assert got[q][d] == pytest.approx(s, abs=1e-12, rel=1e-12), (norm, q, d)


def test_weighted_combmnz_ties_are_broken_by_chunk_id():
    # min-max per arm, weights (2, 1). a: x3 5.0 -> 1, x2 1.0 -> 0; b: x1 3.0 -> 1, x4 and
    # x5 2.0 -> 0.5, x3 1.0 -> 0. Fused: x3 = 2 arms * (2*1 + 1*0) = 4, x1 = 1, x4 = x5 = 0.5, x2 = 0
    df = pd.DataFrame([("q", "a", "x3", 1, 5.0), ("q", "a", "x2", 2, 1.0), ("q", "b", "x1", 1, 3.0),
                       ("q", "b", "x4", 2, 2.0), ("q", "b", "x3", 3, 1.0), ("q", "b", "x5", 4, 2.0)],
                      columns=["question_id", "arm", "chunk_id", "rank", "score"])
    got, f, m = ours(df, config("combmnz", arms=("a", "b"), weights=(2.0, 1.0), norm="min-max"))
    assert got["q"] == {"x3": 4.0, "x1": 1.0, "x4": 0.5, "x5": 0.5, "x2": 0.0}
    assert m.chunk_ids[f.rows].tolist() == ["x3", "x1", "x4", "x5", "x2"]  # x4 = x5: by id
