"""rulegauge.metrics.stats: sign-flip permutation test and BCa bootstrap CI (checked against formulas computed here and
scipy as an oracle where it is installed), Holm, agreement, wins/ties/losses."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.stats import agree, bootstrap_ci, holm, permutation_test, wins_ties_losses


def _paired_data(seed: int = 7, n: int = 30) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    cand = base + rng.normal(0.08, 0.25, n)
    return base, cand


def _mc_tolerance(p: float, n1: int, n2: int) -> float:
    """Four standard errors of the difference of two independent Monte-Carlo p-values."""
    return 4.0 * math.sqrt(max(p * (1.0 - p), 1e-4) * (1.0 / n1 + 1.0 / n2))


def _exact_sign_flip_p(d: list[float]) -> float:
    """Share of the 2**n sign patterns whose |mean| reaches the observed |mean|."""
    obs = abs(sum(d) / len(d))
    means = [abs(sum(s * x for s, x in zip(signs, d, strict=True)) / len(d))
             for signs in itertools.product((1, -1), repeat=len(d))]
    return sum(m >= obs * (1 - 1e-12) for m in means) / len(means)


def test_permutation_all_zero_differences_give_p_one() -> None:
    r = permutation_test(np.zeros(12), n_resamples=999, seed=0)
    assert r.statistic == 0.0 and r.p_value == 1.0
    assert r.count == r.n_resamples == 999 and not r.exact


@pytest.mark.parametrize("d", [[0.5, -0.1, 0.3, 0.2], [1.0, 1.0, 1.0], [-1.0, 0.0, 0.0, -1.0, 0.5],
                               [0.25, -0.5, 0.75, 1.0, -0.25, 0.5, 0.5, 1.0]])
def test_permutation_is_exact_when_every_sign_pattern_fits(d: list[float]) -> None:
    # 2**n <= n_resamples: scipy enumerates every pattern; p equals the formula exactly
    r = permutation_test(d, n_resamples=500, seed=3)
    assert r.exact and r.n_resamples == 2 ** len(d)
    assert r.p_value == pytest.approx(_exact_sign_flip_p(d), abs=1e-12)
    assert r.p_value == pytest.approx(r.count / 2 ** len(d), abs=1e-12)
    assert r.statistic == pytest.approx(sum(d) / len(d))


def test_three_losses_no_win_is_p_one_quarter() -> None:
    # the sample's hit@5 case: 3 of 51 questions lose their hit, none gains one
    d = [0.0] * 48 + [-1.0] * 3
    r = permutation_test(d, n_resamples=10_000, seed=0)
    assert not r.exact
    assert abs(r.p_value - 0.25) < 4 * math.sqrt(0.25 * 0.75 / 10_000)


def test_permutation_is_scipy_with_the_seeded_generator() -> None:
    stats = pytest.importorskip("scipy.stats")  # the oracle: the [judge] extra, absent from the bare core
    base, cand = _paired_data()
    ours = permutation_test(cand - base, n_resamples=4_000, seed=11)
    ref = stats.permutation_test(
        (cand - base,), lambda x, axis: np.mean(x, axis=axis), vectorized=True,
        permutation_type="samples", n_resamples=4_000, alternative="two-sided",
        rng=np.random.default_rng(11))
    assert ours.p_value == ref.pvalue
    # for the symmetric sign-flip null, scipy's 2 * min(tail) is the |mean| count within MC error
    assert abs(ours.p_value - (ours.count + 1) / 4_001) < _mc_tolerance(ours.p_value, 4_000, 4_000)


def test_permutation_constant_differences_match_exact_probability() -> None:
    # n equal positive differences: |flipped mean| >= observed only when all signs agree,
    # probability 2 / 2**n (= 0.25 for n = 3).
    n_res = 40_000
    r = permutation_test([1.0, 1.0, 1.0], n_resamples=n_res, seed=11)
    exact = 2 / 2**3
    assert abs(r.p_value - exact) < 4 * math.sqrt(exact * (1 - exact) / n_res)


def test_permutation_agrees_with_scipy_oracle() -> None:
    stats = pytest.importorskip("scipy.stats")  # the oracle: the [judge] extra, absent from the bare core
    base, cand = _paired_data()
    n_res = 20_000
    ours = permutation_test(cand - base, n_resamples=n_res, seed=1)
    ref = stats.permutation_test(
        (cand, base), lambda x, y, axis: np.mean(x - y, axis=axis), vectorized=True,
        permutation_type="samples", n_resamples=n_res, alternative="two-sided",
        rng=np.random.default_rng(2))
    assert ours.statistic == pytest.approx(ref.statistic)
    assert abs(ours.p_value - ref.pvalue) < _mc_tolerance(ref.pvalue, n_res, n_res)


def test_permutation_is_deterministic_per_seed() -> None:
    base, cand = _paired_data(seed=5)
    np.random.seed(1)  # the global generator plays no part
    a = permutation_test(cand - base, n_resamples=5_000, seed=42)
    np.random.seed(2)
    b = permutation_test(cand - base, n_resamples=5_000, seed=42)
    assert a == b
    assert permutation_test(cand - base, n_resamples=5_000, seed=43).count != a.count


def test_permutation_does_not_mutate_input() -> None:
    d = np.array([0.1, -0.2, 0.3])
    permutation_test(d, n_resamples=100, seed=0)
    assert d.tolist() == [0.1, -0.2, 0.3]


@pytest.mark.parametrize("bad", [[], [1.0, math.inf], [math.nan, 1.0]])
def test_permutation_refuses_empty_or_non_finite(bad: list[float]) -> None:
    with pytest.raises(RulegaugeError):
        permutation_test(bad, n_resamples=10, seed=0)


@pytest.mark.parametrize("n", [0, -5, 2.5, True])
def test_permutation_refuses_bad_resample_count(n: object) -> None:
    with pytest.raises(RulegaugeError, match="n_resamples"):
        permutation_test([1.0, 2.0], n_resamples=n, seed=0)  # type: ignore[arg-type]


def test_bootstrap_constant_differences_give_zero_width_interval() -> None:
    assert bootstrap_ci([0.25] * 9, n_resamples=300, seed=0) == (0.25, 0.25)
    assert bootstrap_ci([-1.5], n_resamples=300, seed=0) == (-1.5, -1.5)


def _bca_by_formula(d: np.ndarray, boot: np.ndarray, confidence: float) -> tuple[float, float]:
    """Efron & Tibshirani (1993) eq. 14.9-14.15 from a bootstrap distribution of the mean."""
    stats = pytest.importorskip("scipy.stats")  # the oracle: the [judge] extra, absent from the bare core
    norm = stats.norm
    theta = d.mean()
    z0 = norm.ppf(np.mean(boot < theta))
    jack = np.array([np.delete(d, i).mean() for i in range(d.size)])
    dev = jack.mean() - jack
    a = np.sum(dev ** 3) / (6.0 * np.sum(dev ** 2) ** 1.5)
    out = []
    for q in ((1 - confidence) / 2, (1 + confidence) / 2):
        z = norm.ppf(q)
        out.append(float(np.percentile(boot, 100 * norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))))
    return out[0], out[1]


def test_bootstrap_is_bca_by_the_formula() -> None:
    stats = pytest.importorskip("scipy.stats")  # the oracle: the [judge] extra, absent from the bare core
    base, cand = _paired_data(seed=9, n=40)
    d = cand - base
    lo, hi = bootstrap_ci(d, confidence=0.9, n_resamples=5_000, seed=4)
    boot = stats.bootstrap((d,), np.mean, confidence_level=0.9, n_resamples=5_000,
                                 method="BCa", rng=np.random.default_rng(4)).bootstrap_distribution
    ref_lo, ref_hi = _bca_by_formula(d, boot, 0.9)
    assert lo == pytest.approx(ref_lo, rel=1e-9) and hi == pytest.approx(ref_hi, rel=1e-9)
    assert lo < float(d.mean()) < hi


def test_bootstrap_agrees_with_a_percentile_oracle_on_symmetric_data() -> None:
    stats = pytest.importorskip("scipy.stats")  # the oracle: the [judge] extra, absent from the bare core
    # for a near-symmetric distribution BCa and the percentile interval nearly coincide
    d = np.random.default_rng(21).normal(0.1, 0.3, 200)
    lo, hi = bootstrap_ci(d, confidence=0.9, n_resamples=20_000, seed=4)
    ref = stats.bootstrap((d,), np.mean, confidence_level=0.9, n_resamples=20_000,
                                method="percentile", rng=np.random.default_rng(5))
    tol = 0.1 * float(np.std(d)) / math.sqrt(len(d))
    assert lo == pytest.approx(ref.confidence_interval.low, abs=tol)
    assert hi == pytest.approx(ref.confidence_interval.high, abs=tol)


def test_bootstrap_with_one_differing_question_is_finite_and_quiet() -> None:
    # BCa's bias correction is undefined for such a lumpy distribution in some resamples;
    # the interval must still be finite and no warning may escape
    lo, hi = bootstrap_ci([0.0] * 50 + [-1.0], n_resamples=2_000, seed=0)
    assert math.isfinite(lo) and math.isfinite(hi) and lo <= hi <= 0.0


def test_bootstrap_is_deterministic_per_seed() -> None:
    base, cand = _paired_data(seed=3)
    np.random.seed(1)
    a = bootstrap_ci(cand - base, seed=8, n_resamples=2_000)
    np.random.seed(2)
    assert a == bootstrap_ci(cand - base, seed=8, n_resamples=2_000)
    assert a != bootstrap_ci(cand - base, seed=9, n_resamples=2_000)


def test_agree_compares_the_test_with_the_interval() -> None:
    assert agree(0.01, (-0.3, -0.1), 0.95) and agree(0.3, (-0.3, 0.1), 0.95)
    assert not agree(0.25, (-0.15, -0.02), 0.95)  # three losses: p 0.25, CI below 0
    assert not agree(0.01, (-0.3, 0.0), 0.95)


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5, -0.1])
def test_bootstrap_refuses_bad_confidence(confidence: float) -> None:
    with pytest.raises(RulegaugeError, match="confidence"):
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
    with pytest.raises(RulegaugeError, match=r"\[0, 1\]"):
        holm([0.1, 1.2])


def test_wins_ties_losses_follow_the_direction() -> None:
    base = [1.0, 0.0, 0.5, math.inf]
    cand = [0.0, 1.0, 0.5, math.inf]
    higher = wins_ties_losses(base, cand, higher_is_better=True)
    assert (higher.wins, higher.ties, higher.losses) == (1, 2, 1)
    lower = wins_ties_losses([3.0, math.inf, 2.0], [1.0, 4.0, math.inf], higher_is_better=False)
    assert (lower.wins, lower.ties, lower.losses) == (2, 0, 1)


def test_wins_ties_losses_refuses_nan() -> None:
    with pytest.raises(RulegaugeError, match="NaN"):
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
