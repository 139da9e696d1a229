"""RBO_ext and Jaccard@k (rulegauge.metrics.overlap) against the paper's equations computed
with exact fractions, and against a second implementation (the ranked-overlap package)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.overlap import jaccard, rbo_ext


def eq32(first: list[str], second: list[str], p: Fraction) -> Fraction:
    """Webber, Moffat, Zobel (2010) eq. 32, term by term, in exact arithmetic."""
    short, long_ = (first, second) if len(first) <= len(second) else (second, first)
    s, l = len(short), len(long_)  # noqa: E741

    def x(d: int) -> int:  # overlap at depth d; the short list stops at s
        return len(set(short[:min(d, s)]) & set(long_[:d]))

    head = sum((Fraction(x(d), d) * p ** d for d in range(1, l + 1)), Fraction(0))
    tail = sum((Fraction(x(s) * (d - s), s * d) * p ** d for d in range(s + 1, l + 1)), Fraction(0))
    return (1 - p) / p * (head + tail) + (Fraction(x(l) - x(s), l) + Fraction(x(s), s)) * p ** l


def test_equal_lists_by_hand() -> None:
    # S = a b c, L = a c b, p = 1/2: X = 1, 1, 3 -> eq. 23:
    # X_3/3 p^3 + (1-p)/p (1/1 p + 1/2 p^2 + 3/3 p^3) = 1/8 + (1/2 + 1/8 + 1/8) = 7/8
    assert rbo_ext(list("abc"), list("acb"), 0.5, 3) == pytest.approx(7 / 8, abs=1e-15)
    assert rbo_ext(list("abc"), list("abc"), 0.9, 3) == pytest.approx(1.0, abs=1e-15)
    assert rbo_ext(list("abc"), list("xyz"), 0.9, 3) == 0.0


def test_uneven_lists_follow_eq_32() -> None:
    # a short list that is a prefix of the long one: its agreement (1) is extrapolated
    assert rbo_ext(list("ab"), list("abcd"), 0.9, 10) == pytest.approx(1.0, abs=1e-15)
    # S = a x, L = a b x d, p = 1/2: X_1..4 = 1, 1, 2, 2, X_s = 1
    # (1-p)/p [(1/2 + 1/2/4 + 2/3/8 + 2/4/16) + (1*1/(2*3)/8 + 1*2/(2*4)/16)] + ((2-1)/4 + 1/2)/16
    by_hand = (Fraction(1, 2) + Fraction(1, 8) + Fraction(2, 24) + Fraction(2, 64)
               + Fraction(1, 48) + Fraction(2, 128)) + (Fraction(1, 4) + Fraction(1, 2)) / 16
    assert eq32(list("ax"), list("abxd"), Fraction(1, 2)) == by_hand
    assert rbo_ext(list("ax"), list("abxd"), 0.5, 10) == pytest.approx(float(by_hand), abs=1e-15)
    # symmetric in its arguments
    assert rbo_ext(list("abxd"), list("ax"), 0.5, 10) == rbo_ext(list("ax"), list("abxd"), 0.5, 10)


def test_random_lists_equal_eq_32_in_exact_arithmetic() -> None:
    rng = random.Random(7)
    for _ in range(300):
        a = rng.sample("abcdefghijklmnop", rng.randint(1, 9))
        b = rng.sample("abcdefghijklmnop", rng.randint(1, 9))
        p = rng.choice([Fraction(1, 2), Fraction(4, 5), Fraction(9, 10), Fraction(49, 50)])
        assert rbo_ext(a, b, float(p), 9) == pytest.approx(float(eq32(a, b, p)), abs=1e-12)


def test_equal_length_lists_equal_the_ranked_overlap_package() -> None:
    """ranked-overlap computes eq. 23; on lists of one length it is eq. 32 (on uneven lists
    it keeps the short list's overlap fixed instead of extrapolating it, so they part)."""
    ro = pytest.importorskip("ranked_overlap")
    rng = random.Random(3)
    for _ in range(500):
        k = rng.randint(1, 15)
        a, b = rng.sample(range(30), k), rng.sample(range(30), k)
        p = rng.choice([0.5, 0.8, 0.9, 0.98])
        assert rbo_ext(a, b, p, k) == pytest.approx(ro.rbo(a, b, p), abs=1e-12)
    assert rbo_ext([1, 2, 3], [1, 3, 2], 0.9, 3) == pytest.approx(0.955, abs=1e-12)  # its docstring


def test_depth_cuts_both_lists_first() -> None:
    a, b = [*"abcdefghij", "x"], [*"abcdefghij", "y"]
    assert rbo_ext(a, b, 0.9, 10) == 1.0
    assert rbo_ext(a, b, 0.9, 11) < 1.0
    assert jaccard(a, b, 10) == 1.0
    assert jaccard(a, b, 11) == pytest.approx(10 / 12)


def test_jaccard_and_empty_lists() -> None:
    assert jaccard(list("abc"), list("bcd"), 3) == pytest.approx(2 / 4)
    assert jaccard(list("abc"), list("cba"), 3) == 1.0  # order inside the top k ignored
    assert (jaccard([], [], 10), rbo_ext([], [], 0.9, 10)) == (1.0, 1.0)
    assert (jaccard([], ["a"], 10), rbo_ext(["a"], [], 0.9, 10)) == (0.0, 0.0)


@pytest.mark.parametrize(("p", "depth"), [(0.0, 10), (1.0, 10), (float("nan"), 10), (0.9, 0),
                                          (0.9, 2.5)])
def test_parameters_are_bounded(p: float, depth: int) -> None:
    with pytest.raises(RulegaugeError):
        rbo_ext(["a"], ["a"], p, depth)


def test_an_id_twice_is_refused() -> None:
    with pytest.raises(RulegaugeError, match="twice"):
        rbo_ext(["a", "a"], ["a"], 0.9, 10)
