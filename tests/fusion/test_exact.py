"""Fused order on exact rational scores: ties that are NOT exact in floating point."""

from fractions import Fraction

import numpy as np
import pytest

from rulegauge.fusion.exact import clusters_are_ties, exact_score, rrf_order, rrf_scores, rrf_tie_classes


def oracle(ranks, k, weights, depths, ids):
    """Indices sorted by exact score desc, id asc (Fraction arithmetic)."""
    ex = [exact_score(r, k, weights, depths) for r in ranks]
    return sorted(range(len(ranks)), key=lambda i: (-ex[i], ids[i]))


def test_five_fifty_sixths_is_a_tie_the_floats_miss():
    # k=20, three arms: ranks (20, 8, 15) and (1, 4, -) both score exactly 5/56
    assert Fraction(1, 40) + Fraction(1, 28) + Fraction(1, 35) == Fraction(1, 21) + Fraction(1, 24) == Fraction(5, 56)
    ranks = np.array([[20, 8, 15], [1, 4, 0]])
    s = rrf_scores(ranks, 20, (1.0, 1.0, 1.0), (100, 100, 100))
    assert s[0] != s[1]  # 1/40+1/28+1/35 != 1/21+1/24 in float64
    for ids in ([0, 1], [1, 0]):  # whichever float is larger, the smaller id comes first
        got = rrf_order(np.zeros(2, np.int64), ranks, 20, (1.0, 1.0, 1.0), (100, 100, 100), np.array(ids))
        assert [ids[i] for i in got] == [0, 1]


def test_one_sixtieth_plus_one_fortieth():
    # k=20, two arms: (40, 20) and (22, 36): 1/60 + 1/40 == 1/42 + 1/56 == 1/24
    assert Fraction(1, 60) + Fraction(1, 40) == Fraction(1, 42) + Fraction(1, 56)
    ranks = np.array([[40, 20], [22, 36], [23, 1]])
    s = rrf_scores(ranks, 20, (1.0, 1.0), (100, 100))
    assert s[0] != s[1]
    got = rrf_order(np.zeros(3, np.int64), ranks, 20, (1.0, 1.0), (100, 100), np.array([2, 1, 0]))
    assert got.tolist() == [2, 1, 0]  # (23, 1) = 1/43 + 1/21 is highest; then the tie by id: id 1, id 2


def test_weighted_tie():
    # k=60, weights (1, 0.5): 1/63 + 0.5/117 == 1/65 + 0.5/105
    assert Fraction(1, 63) + Fraction(1, 2 * 117) == Fraction(1, 65) + Fraction(1, 2 * 105)
    ranks = np.array([[3, 57], [5, 45]])
    s = rrf_scores(ranks, 60, (1.0, 0.5), (100, 100))
    assert s[0] != s[1]
    for ids in ([0, 1], [1, 0]):
        got = rrf_order(np.zeros(2, np.int64), ranks, 60, (1.0, 0.5), (100, 100), np.array(ids))
        assert [ids[i] for i in got] == [0, 1]
    classes = rrf_tie_classes(ranks, 60, (1.0, 0.5), (100, 100))
    assert classes[0] == classes[1]


def test_groups_stay_apart_and_depth_cuts_votes():
    ranks = np.array([[20, 8, 15], [1, 4, 0], [1, 4, 0], [20, 8, 15]])
    groups = np.array([1, 1, 0, 0])
    got = rrf_order(groups, ranks, 20, (1.0, 1.0, 1.0), (100, 100, 14), np.array([0, 1, 2, 3]))
    # depth 14 for the third arm drops its rank 15: (20, 8, -) = 1/40 + 1/28 < 5/56
    assert got.tolist() == [2, 3, 1, 0]


@pytest.mark.parametrize("k,weights,depths", [
    (20, (1.0, 1.0, 1.0), (100, 100, 100)),
    (60, (1.0, 0.5, 2.0), (100, 50, 100)),
    (1, (1.0, 1.0), (30, 30)),
    (60, (0.1, 0.3, 0.7), (100, 100, 100)),  # dyadic denominators 2**55: the Fraction fallback
])
def test_random_rank_matrices_match_fraction_oracle(k, weights, depths):
    rng = np.random.default_rng(7)
    for _ in range(20):
        n = 200
        ranks = rng.integers(0, 40, size=(n, len(weights)))
        ids = rng.permutation(n)
        got = rrf_order(np.zeros(n, np.int64), ranks, k, weights, depths, ids)
        assert got.tolist() == oracle(ranks, k, weights, depths, ids)


def test_fast_path_condition():
    assert clusters_are_ties(60, (1.0, 1.0, 1.0), (100, 100, 100), 3 / 61)
    assert not clusters_are_ties(60, (0.1, 0.3, 0.7), (100, 100, 100), 1.1 / 61)


def test_clusters_are_ties_is_the_rational_bound_written_out():
    # tol * D**2 < 1/2 with D = lcm(weight denominators) * prod(k_num + depth * k_den), on Fractions
    import math
    from fractions import Fraction

    from rulegauge.fusion.exact import float_tolerance

    rng = np.random.default_rng(12)
    for _ in range(300):
        n = int(rng.integers(1, 4))
        k = float(rng.choice([1.0, 60.0, 0.5, 2.25, float(rng.integers(1, 100)), float(rng.random() * 80)]))
        weights = tuple(float(rng.choice([1.0, 0.5, 2.0, 0.1, rng.random()])) for _ in range(n))
        depths = tuple(int(d) for d in rng.integers(1, 200, n))
        s_max = float(rng.random() * 0.1)
        kq, den = Fraction(k), 1
        for w in weights:
            den = math.lcm(den, Fraction(w).denominator)
        for d in depths:
            den *= kq.numerator + d * kq.denominator
        want = Fraction(float_tolerance(n, s_max)) * den * den < Fraction(1, 2)
        assert clusters_are_ties(k, weights, depths, s_max) == want
