"""harness.regression.stats: sign-flip permutation test, bootstrap CI, Holm, wins/ties/losses."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from harness.core.errors import HarnessError
from harness.regression.stats import bootstrap_ci, holm, permutation_test, wins_ties_losses


def _paired_data(seed: int = 7, n: int = 30) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    cand = base + rng.normal(0.08, 0.25, n)
    return base, cand


def _mc_tolerance(p: float, n1: int, n2: int) -> float:
    """Four standard errors of the difference of two independent Monte-Carlo p-values."""
    return 4.0 * math.sqrt(max(p * (1.0 - p), 1e-4) * (1.0 / n1 + 1.0 / n2))


def test_permutation_all_zero_differences_give_p_one() -> None:
    r = permutation_test(np.zeros(12), n_resamples=999, seed=0)
    assert r.statistic == 0.0
    assert r.count == 999
    assert r.p_value == (999 + 1) / (999 + 1)


def test_permutation_p_value_formula() -> None:
    r = permutation_test([0.5, -0.1, 0.3, 0.2], n_resamples=500, seed=3)
    assert r.p_value == (r.count + 1) / (500 + 1)
    assert r.statistic == pytest.approx((0.5 - 0.1 + 0.3 + 0.2) / 4)


def test_permutation_constant_differences_match_exact_probability() -> None:
    # n equal positive differences: |flipped mean| >= observed only when all signs agree,
    # probability 2 / 2**n (= 0.25 for n = 3).
    n_res = 40_000
    r = permutation_test([1.0, 1.0, 1.0], n_resamples=n_res, seed=11)
    exact = 2 / 2**3
    assert abs(r.p_value - exact) < 4 * math.sqrt(exact * (1 - exact) / n_res)


def test_permutation_agrees_with_scipy_oracle() -> None:
    base, cand = _paired_data()
    n_res = 20_000
    ours = permutation_test(cand - base, n_resamples=n_res, seed=1)
    ref = scipy.stats.permutation_test(
        (cand, base), lambda x, y, axis: np.mean(x - y, axis=axis), vectorized=True,
        permutation_type="samples", n_resamples=n_res, alternative="two-sided",
        rng=np.random.default_rng(2))
    assert ours.statistic == pytest.approx(ref.statistic)
    assert abs(ours.p_value - ref.pvalue) < _mc_tolerance(ref.pvalue, n_res, n_res)


def test_permutation_is_deterministic_per_seed() -> None:
    base, cand = _paired_data(seed=5)
    a = permutation_test(cand - base, n_resamples=5_000, seed=42)
    b = permutation_test(cand - base, n_resamples=5_000, seed=42)
    assert a == b
    assert permutation_test(cand - base, n_resamples=5_000, seed=43).count != a.count


def test_permutation_does_not_mutate_input() -> None:
    d = np.array([0.1, -0.2, 0.3])
    permutation_test(d, n_resamples=100, seed=0)
    assert d.tolist() == [0.1, -0.2, 0.3]


@pytest.mark.parametrize("bad", [[], [1.0, math.inf], [math.nan, 1.0]])
def test_permutation_refuses_empty_or_non_finite(bad: list[float]) -> None:
    with pytest.raises(HarnessError):
        permutation_test(bad, n_resamples=10, seed=0)


@pytest.mark.parametrize("n", [0, -5, 2.5, True])
def test_permutation_refuses_bad_resample_count(n: object) -> None:
    with pytest.raises(HarnessError, match="n_resamples"):
        permutation_test([1.0, 2.0], n_resamples=n, seed=0)  # type: ignore[arg-type]


def test_bootstrap_constant_differences_give_zero_width_interval() -> None:
    assert bootstrap_ci([0.25] * 9, n_resamples=300, seed=0) == (0.25, 0.25)
    assert bootstrap_ci([-1.5], n_resamples=300, seed=0) == (-1.5, -1.5)


def test_bootstrap_agrees_with_scipy_oracle() -> None:
    base, cand = _paired_data(seed=9, n=40)
    d = cand - base
    n_res = 20_000
    lo, hi = bootstrap_ci(d, confidence=0.9, n_resamples=n_res, seed=4)
    ref = scipy.stats.bootstrap((d,), np.mean, confidence_level=0.9, n_resamples=n_res,
                                method="percentile", rng=np.random.default_rng(5))
    # Monte-Carlo error of a 5% quantile of the mean: a few percent of the spread of d / sqrt(n)
    tol = 0.1 * float(np.std(d)) / math.sqrt(len(d))
    assert lo == pytest.approx(ref.confidence_interval.low, abs=tol)
    assert hi == pytest.approx(ref.confidence_interval.high, abs=tol)
    assert lo < float(d.mean()) < hi


def test_bootstrap_is_deterministic_per_seed() -> None:
    base, cand = _paired_data(seed=3)
    assert bootstrap_ci(cand - base, seed=8, n_resamples=2_000) == \
        bootstrap_ci(cand - base, seed=8, n_resamples=2_000)


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5, -0.1])
def test_bootstrap_refuses_bad_confidence(confidence: float) -> None:
    with pytest.raises(HarnessError, match="confidence"):
        bootstrap_ci([1.0, 2.0], confidence=confidence)


def test_holm_matches_hand_computed_values() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted: 0.005 (x4), 0.01 (x3), 0.03 (x2), 0.04 (x1), then running maximum
    expected = [3 * 0.01, max(2 * 0.03, 1 * 0.04), 2 * 0.03, 4 * 0.005]
    assert holm(p).tolist() == pytest.approx(expected)


def test_holm_caps_at_one_keeps_nan_and_ties() -> None:
    out = holm([0.5, math.nan, 0.5, 0.2])
    # m = 3 finite values: 0.2 * 3 = 0.6; the two 0.5s: min(1, 2 * 0.5) = 1, then 1
    assert math.isnan(out[1])
    assert out[[0, 2, 3]].tolist() == pytest.approx([min(1.0, 2 * 0.5), 1.0, 3 * 0.2])
    assert holm([]).tolist() == []
    assert math.isnan(holm([math.nan])[0])


def test_holm_refuses_values_outside_unit_interval() -> None:
    with pytest.raises(HarnessError, match=r"\[0, 1\]"):
        holm([0.1, 1.2])


def test_wins_ties_losses_follow_the_direction() -> None:
    base = [1.0, 0.0, 0.5, math.inf]
    cand = [0.0, 1.0, 0.5, math.inf]
    higher = wins_ties_losses(base, cand, higher_is_better=True)
    assert (higher.wins, higher.ties, higher.losses) == (1, 2, 1)
    lower = wins_ties_losses([3.0, math.inf, 2.0], [1.0, 4.0, math.inf], higher_is_better=False)
    assert (lower.wins, lower.ties, lower.losses) == (2, 0, 1)


def test_wins_ties_losses_refuses_nan() -> None:
    with pytest.raises(HarnessError, match="NaN"):
        wins_ties_losses([1.0, math.nan], [1.0, 1.0], higher_is_better=True)


@pytest.mark.slow  # importing ranx and compiling its numba kernel takes several seconds
def test_permutation_agrees_with_ranx_fisher_randomisation_test() -> None:
    """Second independent oracle: ranx's Fisher randomisation test (Smucker et al. 2007),
    which reports count / n without the +1 (a difference of at most 1 / n)."""
    ranx_tests = pytest.importorskip("ranx.statistical_tests")
    base, cand = _paired_data(seed=13, n=25)
    n_res = 20_000
    ours = permutation_test(cand - base, n_resamples=n_res, seed=0)
    ref, _ = ranx_tests.fisher_randomization_test(base, cand, n_permutations=n_res, max_p=0.05,
                                                  random_seed=1)
    assert abs(ours.p_value - ref) < _mc_tolerance(ref, n_res, n_res) + 1 / n_res
