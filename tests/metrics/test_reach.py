"""rulegauge.metrics.reach: the sign-flip test's smallest p and smallest n, and a family
that cannot flag anything saying so (held to the test itself and to Holm's first step)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegauge.metrics.multiplicity import family_of
from rulegauge.metrics.reach import adjusted_floor, limited, resamples_needed, smallest_n, smallest_p
from rulegauge.metrics.stats import holm, permutation_test


@pytest.mark.parametrize(("n", "n_resamples"), [(5, 10_000), (6, 10_000), (8, 10_000), (13, 10_000),
                                                  (14, 10_000), (40, 2000)])
def test_the_smallest_p_is_the_tests_own(n: int, n_resamples: int) -> None:
    """Every difference -1 is the most extreme data there is: the permutation test's p
    is the floor (exact 2 / 2**n; drawn 2 / (B + 1) unless a drawn pattern flips nothing)."""
    p = permutation_test(-np.ones(n), n_resamples, seed=3).p_value
    assert p == pytest.approx(smallest_p(n, n_resamples)) or (2 ** n > n_resamples and p > smallest_p(n, n_resamples))
    assert smallest_p(5, 10_000) == 2 / 32 and smallest_p(20, 10_000) == 2 / 10_001
    assert smallest_p(0, 100) == 1.0


def test_the_smallest_n_that_can_reject() -> None:
    assert smallest_n(0.05, 10_000) == 6  # 2/32 = 0.0625 >= 0.05 > 2/64
    assert smallest_n(0.05 / 6, 10_000) == 8  # 2/128 = 0.0156 ... 2/256 < 0.00833
    assert smallest_n(0.05, 10) is None  # 2/8 exact at n=3, then 2/11 drawn: never below 0.05


def test_holm_over_more_tests_than_the_resamples_allow_flags_nothing() -> None:
    """251 tests at the smallest p 2/10001: Holm's first step is 251 x 2/10001 > 0.05, so
    nothing is flagged even with every p at its floor; the family says so, with the
    resamples that would let a lone extreme effect through; BH can still flag."""
    floor = smallest_p(51, 10_000)
    assert 251 * floor >= 0.05 > 250 * floor
    assert not np.any(holm([floor] * 251) < 0.05)
    labels = [(f"c{i}", "recall@5") for i in range(251)]
    _, fam = family_of(labels, [floor] * 251, "holm")
    out = limited(fam, [51] * 251, 10_000)
    assert out.limit.startswith("CANNOT FLAG ANYTHING: its smallest possible p is 0.0002 (2/(10000+1) "
                                "with 10000 resamples), x 251 tests = 0.0502 >= alpha 0.05 (Holm first step)")
    assert f"at least {resamples_needed(251, 0.05):,}" in out.limit and out.limit in out.line()
    assert 251 * 2 / (resamples_needed(251, 0.05) + 1) < 0.05 <= 251 * 2 / resamples_needed(251, 0.05)
    _, bh = family_of(labels, [floor] * 251, "bh")
    assert limited(bh, [51] * 251, 10_000).limit == ""  # BH's smallest adjusted p is the floor


def test_few_questions_cannot_reject_and_some_tests_never_can() -> None:
    _, fam = family_of([("a", "m1"), ("a", "m2")], [0.2, 0.5], "holm")
    out = limited(fam, [5, 5], 10_000)
    assert out.limit.startswith("CANNOT FLAG ANYTHING: its smallest possible p is 0.0625 (2/2^5: "
                                "5 questions, every sign pattern)")
    assert "more questions per test (at least 7)" in out.limit  # 2 tests: 2/2^7 x 2 < 0.05
    mixed = limited(fam, [5, 40], 10_000)
    assert mixed.limit == ("1 of 2 test(s) can never be flagged: fewer than 6 questions (smallest p "
                           "2/2^n >= alpha 0.05)")
    assert limited(fam, [40, 40], 10_000) == fam  # nothing to say: unchanged
    assert adjusted_floor("holm", [0.01, 0.03], 0.03) == 0.03  # the last step's factor is 1
    assert adjusted_floor("holm", [0.04, 0.04], 0.04) == 0.08
    assert adjusted_floor("bh", [0.04, 0.04], 0.04) == 0.04
