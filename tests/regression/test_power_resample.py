"""The permutation test's power by resampling (``rulegauge.regression.power_resample``):
each draw's threshold decides as the gate's test does, the thresholds by hand on a tiny
case, the normal-theory limit, the edges and the seed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.resample import flip_batches
from rulegauge.metrics.stats import permutation_test
from rulegauge.regression.power import mde
from rulegauge.regression.power_resample import resampled_power, thresholds

BATCH = 10_000  # the batch of rulegauge.metrics.stats (the gate's draws come in these)


def _gate_detects(d: np.ndarray, n_resamples: int, seed: int, alpha: float) -> bool:
    """The gate's significance check on differences ``d`` (family of one)."""
    return bool(d.mean() < 0 and permutation_test(d, n_resamples, seed).p_value < alpha)


@pytest.mark.parametrize(("n", "n_resamples"), [(8, 500), (14, 300), (30, 999)])
def test_each_threshold_decides_as_the_gates_permutation_test_with_its_patterns(
        n: int, n_resamples: int) -> None:
    """For drawn differences of a discrete metric (steps of 0.5 around many zeros, as
    recall@5), the threshold from the gate's own sign patterns (seed s) says, for every
    drop on a grid, what ``permutation_test(d - delta, n_resamples, s)`` says: exact
    patterns at n = 8 (2**8 <= 500), drawn ones at 14 and 30."""
    rng = np.random.default_rng(7)
    values = np.array([-1.0, -0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 1.0])
    alpha = 0.1
    for s in range(25):
        d = values[rng.integers(0, values.size, n)] + rng.normal(0, 1e-3, n)
        batches, exact = flip_batches(n, n_resamples, np.random.default_rng(s), BATCH)
        (t,) = thresholds(d[None, :], batches, exact=exact, n_resamples=n_resamples,
                          alpha_test=alpha)
        assert exact == (2 ** n <= n_resamples)
        for delta in np.linspace(-0.3, 1.2, 61):
            if math.isfinite(t) and abs(delta - t) < 1e-9:
                continue  # at the threshold itself the gate's tie tolerance decides
            assert (delta > t) == _gate_detects(d - delta, n_resamples, s, alpha), (s, delta, t)


def test_thresholds_by_hand_on_three_questions() -> None:
    """n = 3, every one of the 8 patterns, alpha 0.5: p = 2 count / 8 < 0.5 needs
    count <= 1, and the identity always counts, so no flipped set may have mean(d_F) >=
    delta: the threshold is max over non-empty F of mean(d_F) = max(d) = 0.3."""
    d = np.array([0.1, -0.2, 0.3])
    batches, exact = flip_batches(3, 500, np.random.default_rng(0), BATCH)
    (t,) = thresholds(d[None, :], batches, exact=exact, n_resamples=500, alpha_test=0.5)
    assert exact and t == pytest.approx(0.3)
    assert _gate_detects(d - 0.31, 500, 0, 0.5) and not _gate_detects(d - 0.29, 500, 0, 0.5)


def test_a_level_the_test_cannot_reach_is_an_infinite_threshold() -> None:
    """Three questions, alpha 0.05: the smallest exact p is 2 / 8 = 0.25, so no drop is
    ever detected: power 0 at any drop, MDE inf."""
    found = resampled_power(np.array([-0.5, 0.0, 0.5]), 3, 0.05, n_resamples=500, draws=50)
    assert all(t == math.inf for t in found.thresholds)
    assert found.power(10.0) == 0.0 and found.mde(0.8) == math.inf


def test_on_normal_differences_the_mde_is_the_t_tests() -> None:
    """Normal differences (300 pooled, centred), n = 40: the permutation test's MDE by
    resampling is within 3% of the paired t-test's at powers 0.5, 0.8, 0.95 (they agree
    as n grows: Hoeffding 1952), and the power there is the target."""
    rng = np.random.default_rng(1)
    pool = rng.normal(size=300)
    pool -= pool.mean()
    sd = float(np.sqrt(np.mean(pool ** 2)))
    found = resampled_power(pool, 40, 0.05, n_resamples=2000, draws=2000, seed=3)
    for target in (0.5, 0.8, 0.95):
        m = found.mde(target)
        assert m == pytest.approx(mde(sd, 40, target, 0.05), rel=0.03)
        assert found.power(np.nextafter(m, math.inf)) >= target > found.power(m)


def test_the_power_curve_rises_and_the_mde_inverts_it() -> None:
    pool = np.array([-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.5])
    pool -= pool.mean()
    found = resampled_power(pool, 36, 0.05, n_resamples=1000, draws=400, seed=2)
    powers = [found.power(x) for x in np.linspace(0, 1, 21)]
    assert powers == sorted(powers) and powers[-1] == 1.0
    assert found.mde(0.0) == 0.0  # no power asked: no drop needed (never negative)
    assert found.se(found.mde(0.5)) == pytest.approx(
        math.sqrt(found.power(found.mde(0.5)) * (1 - found.power(found.mde(0.5))) / 400))


def test_a_seed_gives_the_same_thresholds_and_the_pool_is_not_touched() -> None:
    pool = np.array([-0.5, 0.0, 0.0, 0.5, 1.0, -1.0])
    before = pool.copy()
    a = resampled_power(pool, 20, 0.05, n_resamples=400, draws=100, seed=5)
    b = resampled_power(pool, 20, 0.05, n_resamples=400, draws=100, seed=5)
    c = resampled_power(pool, 20, 0.05, n_resamples=400, draws=100, seed=6)
    assert a == b and a.thresholds != c.thresholds
    assert np.array_equal(pool, before)


@pytest.mark.parametrize(("pool", "n", "alpha"), [
    (np.array([]), 5, 0.05), (np.array([0.0, math.nan]), 5, 0.05),
    (np.array([0.1, -0.1]), 0, 0.05), (np.array([0.1, -0.1]), 5, 1.0)])
def test_bad_inputs_are_refused(pool: np.ndarray, n: int, alpha: float) -> None:
    with pytest.raises(RulegaugeError, match="power by resampling"):
        resampled_power(pool, n, alpha)
