"""The kernel's per-config keys and exact candidate order equal the full path's order
(``fuse``: every row sorted, exact classes) for every method, ties included."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rulegauge.fusion.fuse import RankMatrix
from rulegauge.fusion.kernel import along, config_scores, exact_rows, planes_of, row_counts, top_columns
from rulegauge.fusion.method import FUSION_METHODS
from rulegauge.fusion.records import FusionConfig
from rulegauge.testing.fusion import kernel_lists as kernel_order
from rulegauge.testing.fusion import reference_lists as full_order

ARMS = ("a", "b", "c")
VARIANTS = [("rrf", ()), ("combsum", (("norm", "min-max"),)), ("combsum", (("norm", "z-score"),)),
            ("combmnz", (("norm", "sum"),)), ("hybrid", (("mean", "geometric"), ("norm", "l2"))),
            ("hybrid", (("mean", "harmonic"), ("norm", "min-max"))), ("relscore", ()), ("borda", ()),
            ("isr", ())]


def arm_ranks(seed: int, coarse: bool) -> pd.DataFrame:
    """Three arms ranking random subsets of 30 chunks; ``coarse``: few distinct arm scores
    and equal-rank single votes, so exact ties are everywhere."""
    rng = np.random.default_rng(seed)
    rows = []
    for qi in range(15):
        for arm in ARMS:
            n = int(rng.integers(1, 25))
            docs = rng.choice(30, n, replace=False)
            for r, d in enumerate(docs, start=1):
                s = float(round(8.0 / r)) if coarse else float(rng.random() + 10.0 / r)
                rows.append((f"q{qi:02d}", arm, f"d{d:03d}", r, s))
    return pd.DataFrame(rows, columns=["question_id", "arm", "chunk_id", "rank", "score"])


def cfg(method, opts, arms=ARMS, weights=None, depths=None):
    weights = weights or (1.0,) * len(arms)
    depths = depths or (20,) * len(arms)
    return FusionConfig("c", "c", "grid", method, 60.0 if method == "rrf" else math.nan, tuple(arms),
                        tuple(weights), tuple(depths), opts)


@pytest.mark.parametrize("coarse", [True, False])
@pytest.mark.parametrize(("method", "opts"), VARIANTS)
def test_kernel_order_equals_full_path(method, opts, coarse):
    m = RankMatrix.from_arm_ranks(arm_ranks(3, coarse), [f"q{i:02d}" for i in range(15)], ARMS)
    for c in (cfg(method, opts), cfg(method, opts, weights=(0.5, 2.0, 1.0), depths=(8, 24, 15)),
              cfg(method, opts, arms=("a", "c"), weights=(3.0, 1.0))):
        assert kernel_order(m, c) == full_order(m, c), (method, opts, c.weights)


def test_score_based_key_is_positive_and_monotone_in_the_score():
    m = RankMatrix.from_arm_ranks(arm_ranks(5, False), [f"q{i:02d}" for i in range(15)], ARMS)
    planes, _ = planes_of(m)
    c = cfg("combsum", (("norm", "z-score"),))  # negative fused scores
    s = config_scores(planes, c)
    votes = planes.votes(c)
    assert (s.key[votes] >= 1.0).all() and (s.key[~votes] == 0.0).all()  # >= max(1, |lo|)
    assert (s.score[votes] < 0).any()
    a, b = s.key[votes], s.score[votes]
    o = np.argsort(b, kind="stable")
    assert (np.diff(a[o]) >= 0).all()  # a larger score never gets a smaller key
    assert (s.tol, s.ties) == (0.0, False)


def test_rank_based_tolerance_and_integer_borda_ties():
    m = RankMatrix.from_arm_ranks(arm_ranks(5, True), [f"q{i:02d}" for i in range(15)], ARMS)
    planes, _ = planes_of(m)
    borda = config_scores(planes, cfg("borda", ()))
    assert (borda.tol, borda.ties) == (0.0, True)  # integer weights: floats are exact
    isr = config_scores(planes, cfg("isr", (), weights=(0.5, 2.0, 1.0)))
    assert not isr.ties and 0 < isr.tol < 1e-12 * float(isr.key.max())


def test_isr_tie_codes_are_reduced_fractions():
    isr = FUSION_METHODS.get("isr")
    c = cfg("isr", ())
    # one candidate per column: (a, b, c) ranks; rank 2 alone, ranks 4+4, ranks 6+6+6 and 3+6+0
    ranks = np.array([[2, 4, 6, 0, 3], [0, 4, 6, 2, 6], [0, 0, 6, 0, 0]])[:, None, :]
    codes = isr.tie_codes(ranks, np.ones((3, 1, 1), np.int64), c)
    pairs = [tuple(codes[:, 0, j]) for j in range(5)]
    assert pairs[0] == pairs[1] == pairs[2] == pairs[3] == (1, 4)  # all exactly 1/4
    assert pairs[4] == (5, 18)  # 2 * (1/9 + 1/36) = 5/18
    weighted = isr.tie_codes(ranks, np.ones((3, 1, 1), np.int64), cfg("isr", (), weights=(1.0, 2.0, 1.0)))
    assert weighted.shape[0] == 3  # unequal weights: the (weight, rank) multiset instead


def test_top_columns_holds_the_m_largest_keys_with_ties_at_the_cut():
    keys = np.array([[0.5, 0.1, 0.5, 0.5, 0.0, 0.9],  # three keys tie at the 2nd largest
                     [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # nothing listed: any columns
                     [0.3, 0.2, 0.1, 0.4, 0.6, 0.5]])
    got = top_columns(keys, 2)
    assert got.shape == (3, 2)
    assert got[0].tolist() == [0, 5]  # 0.9, then the first column of the tie (by column)
    assert got[1].tolist() == [0, 1]
    assert got[2].tolist() == [4, 5]
    for m in range(0, 8):  # the selected keys are the m largest, as argpartition's
        sel = top_columns(keys, m)
        assert sel.shape == (3, min(m, 6))
        want = -np.sort(-keys, axis=1)[:, : min(m, 6)]
        np.testing.assert_array_equal(-np.sort(-np.take_along_axis(keys, sel, 1), axis=1), want)
        assert all(len(set(r)) == len(r) for r in sel.tolist())  # distinct columns


def test_top_columns_on_random_ties_equals_argpartition_sets_and_survives_nan():
    rng = np.random.default_rng(4)
    keys = np.round(rng.random((50, 40)), 1)  # 11 distinct values: ties everywhere
    for m in (1, 5, 16, 39):
        sel = top_columns(keys, m)
        ref = np.argpartition(keys, 40 - m, axis=1)[:, 40 - m :]
        np.testing.assert_array_equal(np.sort(np.take_along_axis(keys, sel, 1), axis=1),
                                      np.sort(np.take_along_axis(keys, ref, 1), axis=1))
    keys[3, 7] = np.nan  # not a total order: the general selection (argpartition puts NaN last)
    assert top_columns(keys, 5).shape == (50, 5)


def test_top_columns_are_the_first_m_by_key_then_column_when_keys_round_together_in_float32():
    # the m-th largest key comes from a float32 sort: keys that differ only beyond float32's
    # precision (1e-12 apart) must still be told apart on their float64 values
    rng = np.random.default_rng(7)
    for kind in range(4):
        keys = [rng.random((40, 30)), 0.5 + rng.integers(0, 4, (40, 30)) * 1e-12,
                np.where(rng.random((40, 30)) < 0.6, 0.0, rng.random((40, 30))),
                np.round(rng.random((40, 30)), 2) + rng.integers(0, 2, (40, 30)) * 1e-13][kind]
        for m in (1, 2, 7, 16, 29):
            ref = np.array([sorted(sorted(range(30), key=lambda j, r=r: (-r[j], j))[:m]) for r in keys.tolist()])
            np.testing.assert_array_equal(top_columns(keys, m), ref, err_msg=f"kind {kind}, m {m}")


def test_along_is_take_along_axis():
    rng = np.random.default_rng(5)
    a = rng.random((7, 9))
    idx = rng.integers(0, 9, (7, 4))
    np.testing.assert_array_equal(along(a, idx), np.take_along_axis(a, idx, 1))
    assert along(a, np.zeros((7, 0), np.int64)).shape == (7, 0)


def test_row_counts_is_count_nonzero():
    rng = np.random.default_rng(6)
    mask = rng.random((9, 300)) > 0.3
    assert row_counts(mask).tolist() == np.count_nonzero(mask, axis=1).tolist()
    assert row_counts(mask[:, ::2]).tolist() == np.count_nonzero(mask[:, ::2], axis=1).tolist()  # a view
    assert row_counts(np.ones((2, 1 << 16), bool)).tolist() == [1 << 16] * 2  # beyond the byte sums' range


@pytest.mark.parametrize(("method", "opts"), VARIANTS)
def test_exact_rows_reads_keys_given_with_the_columns_as_it_reads_them_from_the_plane(method, opts):
    # the condensed lists key a few columns (and their padding) themselves
    m = RankMatrix.from_arm_ranks(arm_ranks(5, True), [f"q{i:02d}" for i in range(15)], ARMS)
    planes, _ = planes_of(m)
    c = cfg(method, opts)
    s = config_scores(planes, c)
    nq, u = planes.shape
    rng = np.random.default_rng(9)
    cand = np.stack([rng.permutation(u)[:9] for _ in range(nq)])  # unsorted columns, as a caller has them
    rows = np.arange(nq)
    want = exact_rows(planes, c, rows, s.key, cand, s.tol, ties=s.ties, fused=s.score)
    got = exact_rows(planes, c, rows, s.key, cand, s.tol, ties=s.ties, fused=s.score,
                     keys=np.take_along_axis(s.key, cand, 1))
    np.testing.assert_array_equal(got, want)
