"""The resampling under the paired statistics: sign-flip null distributions and the BCa
bootstrap interval of a mean, in numpy.

These follow ``scipy.stats.permutation_test(..., permutation_type="samples")`` with one
sample and ``scipy.stats.bootstrap(..., method="BCa")`` step for step: the same draws from
the caller's generator in the same order, the same tie tolerance and the same BCa
formulas, so :mod:`rulegauge.metrics.stats` gives scipy's p-values and intervals
(``tests/metrics/test_resample.py`` holds them equal to scipy's, which is a development
dependency). Why not call scipy: the core install (what a CI gate installs) then needs no
scipy at all (143 MB, the largest package of a gate's site-packages), and these two
procedures are each a few lines of numpy.

* :func:`sign_flip_null`: the null distribution of ``mean(s * d)`` over sign patterns
  ``s``. With ``2**n <= n_resamples`` every pattern (exact); otherwise ``n_resamples``
  patterns, each question's sign drawn as scipy draws it (``rng.permuted`` of the pair
  ``(0, 1)``: position 0 holding 0 keeps the sign).
* :func:`bca_interval`: Efron's bias-corrected and accelerated percentile interval
  (Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 14.3, eq. 14.9-14.15):
  bias ``z0 = Phi^-1(share of resampled means below the observed, ties counted half)``,
  acceleration ``a`` from the jackknife, ends at the ``Phi(z0 + (z0 + z)/(1 - a (z0 + z)))``
  quantiles of the resampled means (linear interpolation, numpy's default).

Edge cases: a degenerate bootstrap distribution makes ``z0`` infinite or ``a`` undefined:
the interval is then NaN, and the caller reports the percentile interval (as scipy's
``DegenerateDataWarning`` path does).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from statistics import NormalDist

import numpy as np

from rulegauge.core.limits import COUNTS, count_problem

_NORMAL = NormalDist()


def _ndtri(p: float) -> float:
    """The standard normal quantile, -inf/inf at 0/1 (scipy's ``ndtri`` convention)."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return _NORMAL.inv_cdf(p)


def _ndtr(x: float) -> float:
    """The standard normal distribution function, accurate in both tails."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def flip_batches(n: int, n_resamples: int, rng: np.random.Generator, batch: int
                 ) -> tuple[Iterator[np.ndarray], bool]:
    """``(batches, exact)``: the sign patterns of the paired sign-flip test of ``n``
    differences as boolean arrays (patterns x n, True = the sign is flipped), in batches of
    at most ``batch`` patterns; every pattern when ``2**n <= n_resamples`` (exact), else
    ``n_resamples`` drawn from ``rng`` as scipy draws them (module docstring). The one home
    of the patterns: :func:`sign_flip_null` and the gate's power by resampling
    (:mod:`rulegauge.regression.power_resample`) both take them from here."""
    if 2.0 ** n <= n_resamples:
        patterns = np.arange(2 ** n, dtype=np.int64)
        bits = (patterns[:, None] >> np.arange(n - 1, -1, -1, dtype=np.int64)) & 1
        return iter((bits == 1,)), True

    def drawn() -> Iterator[np.ndarray]:
        size = min(batch, n_resamples)
        pairs = np.tile(np.arange(2), (size, n, 1))
        for k in range(0, n_resamples, size):
            # scipy permutes a whole batch each time, even for a short last one: the same draws
            yield rng.permuted(pairs, axis=-1)[:min(size, n_resamples - k), :, 0] == 1

    return drawn(), False


def sign_flip_null(d: np.ndarray, n_resamples: int, rng: np.random.Generator,
                   batch: int) -> tuple[np.ndarray, bool]:
    """``(null means, exact)`` of the paired sign-flip test of ``d`` (module docstring)."""
    batches, exact = flip_batches(int(d.size), n_resamples, rng, batch)
    return np.concatenate([np.mean(np.where(f, -d, d), axis=-1) for f in batches]), exact


def two_sided_p(null: np.ndarray, observed: float, *, exact: bool) -> float:
    """scipy's two-sided permutation p: ``2 * min(P(null <= obs), P(null >= obs))``, each
    tail counted with a tolerance of 100 epsilon of ``|obs|`` and, when not exact, the
    observed pattern added once (``(count + 1) / (B + 1)``, Phipson & Smyth 2010); at most 1."""
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)
    add = 0 if exact else 1
    low = (int(np.count_nonzero(null <= observed + gamma)) + add) / (null.size + add)
    high = (int(np.count_nonzero(null >= observed - gamma)) + add) / (null.size + add)
    return float(min(1.0, 2.0 * min(low, high)))


def smallest_p(n_resamples: int) -> float:
    """The smallest two-sided p-value :func:`two_sided_p` can give with ``n_resamples``
    random sign patterns: no null as extreme as the observation, ``2 (0 + 1) / (B + 1)``.
    (Enumerating every pattern, ``2**n <= B``, the observed pattern itself counts:
    ``2 / 2**n``, larger still.)"""
    return float(min(1.0, 2.0 * ((0 + 1) / (n_resamples + 1))))


def min_resamples(alpha: float) -> int:
    """The fewest sign patterns with which the permutation test can give ``p < alpha`` (the
    gate's comparison, :func:`rulegauge.metrics.multiplicity`): below it no difference, however
    large, is ever significant. 40 at alpha 0.05 (2/41 < 0.05 = 2/40); for ``0 < alpha < 1``."""
    b = max(1, math.floor(2.0 / alpha - 1.0))
    while b > 1 and smallest_p(b - 1) < alpha:
        b -= 1
    while not smallest_p(b) < alpha:
        b += 1
    return b


def resamples_problem(n_resamples: object, alpha: float) -> str | None:
    """Why ``n_resamples`` is no usable count of sign patterns for a test at ``alpha``, or
    None: not an integer in ``[1, COUNTS["resamples"]]`` (:mod:`rulegauge.core.limits`, the
    one bound for ``power --resamples`` and a policy's ``n_resamples``), or below
    :func:`min_resamples` (a test that can never be significant)."""
    problem = count_problem("resamples", n_resamples)
    if problem is not None or not isinstance(n_resamples, int):
        return problem
    least = min_resamples(alpha)
    if n_resamples >= least:
        return None
    more = (f"use at least {least:,}" if least <= COUNTS["resamples"] else
            f"at most {COUNTS['resamples']:,} are allowed: raise alpha or test fewer at once")
    return (f"{n_resamples:,} sign patterns: the permutation test's smallest two-sided p-value is "
            f"2/({n_resamples:,}+1) = {smallest_p(n_resamples):.3g}, never below alpha "
            f"{alpha:.3g}, so its significance check could never fail; {more}")


def bootstrap_means(d: np.ndarray, n_resamples: int, rng: np.random.Generator,
                    batch: int) -> np.ndarray:
    """Means of ``n_resamples`` resamples of ``d`` with replacement, drawn in batches of
    ``batch`` as scipy draws them (``rng.integers(0, n, (batch, n))``)."""
    n = int(d.size)
    parts = []
    for k in range(0, n_resamples, batch):
        idx = rng.integers(0, n, (min(batch, n_resamples - k), n), dtype=np.int64)
        parts.append(np.mean(d[idx], axis=-1))
    return np.concatenate(parts)


def bca_interval(d: np.ndarray, means: np.ndarray, confidence: float) -> tuple[float, float]:
    """The BCa interval at ``confidence`` of ``mean(d)`` from the bootstrap ``means``
    (module docstring); NaN ends when the bias or acceleration is undefined."""
    theta = float(np.mean(d))
    share = (int(np.count_nonzero(means < theta)) + int(np.count_nonzero(means <= theta))) \
        / (2 * means.size)
    z0 = _ndtri(share)
    n = int(d.size)
    # jackknife: the mean without question i, as scipy's leave-one-out index rows
    keep = ~np.eye(n, dtype=bool)
    jack = np.mean(np.broadcast_to(d, (n, n))[keep].reshape(n, n - 1), axis=-1)
    u = (n - 1.0) * (np.mean(jack) - jack)
    nf = float(n)
    with np.errstate(divide="ignore", invalid="ignore"):  # no spread: 0/0, reported as NaN
        a = float(1 / 6 * (np.sum(u ** 3) / nf ** 3) / (np.sum(u ** 2) / nf ** 2) ** (3 / 2))
    if not (math.isfinite(z0) and math.isfinite(a)):
        return math.nan, math.nan
    z = _ndtri((1.0 - confidence) / 2.0)
    ends = []
    for zz in (z, -z):
        num = z0 + zz
        ends.append(_ndtr(z0 + num / (1.0 - a * num)))
    low, high = np.quantile(means, ends)
    return float(low), float(high)
