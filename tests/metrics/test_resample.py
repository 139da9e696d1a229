"""rulegauge.metrics.resample against scipy (the development dependency it follows draw for
draw): the sign-flip test's p-values and the BCa intervals on seeded inputs of every shape
the comparisons meet (few questions, ties, zeros, one non-zero difference, exact and random
nulls, a short last batch)."""

import numpy as np
import pytest
import scipy.stats

from rulegauge.metrics.resample import bca_interval, bootstrap_means, sign_flip_null, two_sided_p


def _inputs():
    rng = np.random.default_rng(7)
    yield np.array([0.5, -0.25, 0.75])
    yield np.array([0.0] * 40 + [1.0])  # one question differs
    yield np.array([1.0, 1.0, -1.0, 0.0, 0.5, 0.5, 0.5, -0.5, 0.0, 1.0, 1.0, 0.0])  # ties
    for n in (5, 13, 14, 51, 120):
        yield rng.choice([-1.0, -0.5, 0.0, 0.2, 0.5, 1.0], size=n)
        yield rng.normal(0.03, 0.3, size=n)


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


@pytest.mark.parametrize("n_resamples,batch", [(10_000, 10_000), (2_500, 1_000), (999, 10_000)])
def test_sign_flip_p_equals_scipy(n_resamples, batch):
    for d in _inputs():
        if not np.any(d):
            continue
        null, exact = sign_flip_null(d, n_resamples, np.random.default_rng(3), batch)
        ref = scipy.stats.permutation_test((d,), _mean, permutation_type="samples", vectorized=True,
                                           n_resamples=n_resamples, alternative="two-sided",
                                           batch=batch, rng=np.random.default_rng(3))
        assert exact == (2.0 ** d.size <= n_resamples)
        assert null.size == ref.null_distribution.size
        assert np.allclose(np.sort(null), np.sort(ref.null_distribution), rtol=0, atol=1e-15)
        assert two_sided_p(null, float(np.mean(d)), exact=exact) == float(ref.pvalue)


def test_exact_null_is_every_sign_pattern_once():
    d = np.array([1.0, 2.0, 4.0])
    null, exact = sign_flip_null(d, 8, np.random.default_rng(0), 10)
    assert exact and sorted((null * 3).tolist()) == [-7, -5, -3, -1, 1, 3, 5, 7]
    assert two_sided_p(null, 7 / 3, exact=True) == 2 * 1 / 8  # only the observed pattern is as extreme


@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_bca_equals_scipy(confidence):
    for d in _inputs():
        if np.all(d == d[0]):
            continue
        means = bootstrap_means(d, 4_000, np.random.default_rng(5), 1_500)
        ref = scipy.stats.bootstrap((d,), _mean, vectorized=True, confidence_level=confidence,
                                    n_resamples=4_000, method="BCa", batch=1_500,
                                    rng=np.random.default_rng(5))
        assert np.array_equal(means, ref.bootstrap_distribution)
        low, high = bca_interval(d, means, confidence)
        want = (float(ref.confidence_interval.low), float(ref.confidence_interval.high))
        if np.isnan(want[0]):
            assert np.isnan(low) and np.isnan(high)
        else:
            assert (low, high) == pytest.approx(want, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.1, 0.5, 0.05 / 7, 1e-4])
def test_min_resamples_is_where_the_test_can_first_reach_alpha(alpha: float) -> None:
    """Below min_resamples no difference, however large, is significant: every sign pattern
    but the identity flips a sign of an all-positive sample, so none is as extreme and p is
    the smallest the test can give, 2/(B+1), which must be < alpha (issue 43 item 17)."""
    from rulegauge.metrics.resample import min_resamples, resamples_problem, smallest_p

    least = min_resamples(alpha)
    assert smallest_p(least) < alpha <= smallest_p(least - 1) if least > 1 else smallest_p(1) < alpha
    d = np.full(40, 1.0) + np.linspace(0, 0.1, 40)  # 2**40 patterns: drawn, never exact
    for b, significant in ((least, True), (max(1, least - 1), least == 1)):
        null, exact = sign_flip_null(d, b, np.random.default_rng(0), 10_000)
        assert not exact
        assert (two_sided_p(null, float(d.mean()), exact=False) < alpha) is significant
    assert resamples_problem(least, alpha) is None
    if least > 1:
        assert f"use at least {least:,}" in (resamples_problem(least - 1, alpha) or "")
    assert min_resamples(0.05) == 40
