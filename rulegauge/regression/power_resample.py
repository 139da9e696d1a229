"""The power of the gate's own test by resampling: the permutation test's MDE.

The paired t-test (:mod:`rulegauge.regression.power`) is the analytic reference; the gate
runs the paired sign-flip permutation test (:func:`rulegauge.metrics.stats.permutation_test`),
whose power departs from normal theory when most questions do not change (a few
differences of 0.5 or 1 among zeros: heavy tails, a discrete null). This module gives the
permutation test's power and MDE under a resampling model of a new comparison
(bootstrap power analysis; Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993,
ch. 16; for IR, Sakai, "Statistical reform in information retrieval?", SIGIR Forum 48,
2014, on resampling-based power):

* **model**: the paired differences of a comparison are ``n`` draws with replacement from
  a pool of centred paired differences (the grid neighbours' of the gated config, each
  neighbour centred on its mean, as the ``grid`` SD pools them; or a comparison's own,
  centred), shifted down by ``delta``; ``draws`` such comparisons from one local
  generator (``numpy.random.default_rng(seed)``);
* **test**: each is tested as the gate tests it, two-sided at ``alpha_test`` with
  ``n_resamples`` sign patterns (every pattern when ``2**n <= n_resamples``, as the gate),
  drawn by the gate's own generator (:func:`rulegauge.metrics.resample.flip_batches`), one
  pattern set per block of draws; a detection is a worsening (mean < 0) with p < alpha_test.

**Exact thresholds.** For a drawn ``d`` and a pattern flipping the set ``F`` (``c = |F|``),
the null mean of ``d - delta`` is at most the observed mean exactly when
``delta <= mean(d_F)`` (expand ``sum(s (d - delta)) <= sum(d - delta)``); the identity
pattern (``c = 0``) always ties. So the lower-tail count falls as ``delta`` grows, and the
p-value (``2 (count + 1) / (B + 1)``, Phipson & Smyth 2010; ``2 count / 2**n`` exact) drops
below alpha once ``delta`` passes the ``(J+1)``-th largest ``mean(d_F)``, ``J`` the largest
count that still rejects; it must also pass ``mean(d)`` (a worsening). Each draw therefore
has one threshold ``delta*``, it is detected at every ``delta > delta*``, and the power is
the share of thresholds below ``delta``: an exact step function of ``delta`` for the
drawn comparisons, the MDE at ``power`` its ``ceil(power * draws)``-th smallest threshold
(at least 0). Edge cases: a draw whose test can never reach the level (``2 / 2**n >=
alpha_test``) has threshold +inf (the power stays below 1; an MDE beyond it is inf); the
upper tail is not counted (for a worsening it holds at least half the nulls, so the
two-sided p is the lower tail's); the gate's tie tolerance (100 epsilon of the observed
mean) only matters at ``delta`` equal to a threshold. ``tests/regression/test_power_resample.py``
holds each draw's decision equal to :func:`permutation_test` on ``d - delta`` with the same
patterns, and ``benchmarks/bench_power.py`` the predicted power to the real gate's
detection rate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.resample import flip_batches

DRAWS = 2000
BLOCKS = 8  # pattern sets: each block of draws gets its own (the gate draws one per comparison)
_CHUNK = 1 << 22  # float64 elements per (draws x patterns) product, a memory bound (32 MiB)


@dataclass(frozen=True)
class ResampledPower:
    """The permutation test's detection thresholds of ``draws`` resampled comparisons of
    ``n`` questions (module docstring), sorted; with the inputs that made them."""

    thresholds: tuple[float, ...]
    n: int
    alpha_test: float
    n_resamples: int
    draws: int
    seed: int
    exact: bool
    pool: int  # differences resampled

    def power(self, delta: float) -> float:
        """Share of the drawn comparisons detected at a drop of ``delta`` (> threshold)."""
        t = np.asarray(self.thresholds)
        return float(np.count_nonzero(t < delta)) / self.draws

    def se(self, delta: float) -> float:
        """Binomial standard error of :meth:`power` over the draws."""
        p = self.power(delta)
        return math.sqrt(p * (1.0 - p) / self.draws)

    def mde(self, power: float) -> float:
        """The smallest drop detected in at least ``power`` of the draws: the
        ``ceil(power * draws)``-th smallest threshold, at least 0; inf when fewer draws
        than that can ever be detected."""
        k = math.ceil(power * self.draws - 1e-9)
        t = self.thresholds[k - 1] if k >= 1 else -math.inf
        return math.inf if t == math.inf else max(0.0, t)

    def inside(self, power: float) -> float:
        """A drop inside the step where the power first reaches ``power``: midway between
        :meth:`mde` and the next larger threshold. The power is the same anywhere in the
        step; at its ends the drawn differences tie the null (a metric's discrete values
        make thresholds repeat), and there the gate's float tolerance decides, so a
        simulation plants this drop, not the MDE itself. inf as :meth:`mde`."""
        low = self.mde(power)
        if low == math.inf:
            return math.inf
        t = np.asarray(self.thresholds)
        above = t[t > low]
        if above.size == 0 or above[0] == math.inf:
            return low + max(1e-9, 1e-6 * low)
        return float((low + above[0]) / 2.0)

    def describe(self) -> str:
        how = "every sign pattern" if self.exact else f"{self.n_resamples} sign patterns"
        return (f"permutation test by resampling: {self.draws} draws of {self.n} from "
                f"{self.pool} centred differences, {how}, seed {self.seed}")


def largest_count(alpha: float, size: int, add: int) -> int:
    """The largest lower-tail count whose p-value ``2 (count + add) / (size + add)`` is below
    ``alpha``, in the gate's own float arithmetic (``metrics.resample.two_sided_p``); -1 when
    none."""
    def rejects(count: int) -> bool:
        return min(1.0, 2.0 * ((count + add) / (size + add))) < alpha

    j = math.ceil(alpha * (size + add) / 2.0 - add) - 1
    while j >= 0 and not rejects(j):
        j -= 1
    while rejects(j + 1):
        j += 1
    return max(j, -1)


def _top(d: np.ndarray, flips: np.ndarray, keep: int, top: np.ndarray | None) -> np.ndarray:
    """The ``keep`` largest ``mean(d_F)`` per row of ``d`` over the patterns ``flips``
    (those flipping nothing left out), merged with ``top`` (rows x <= keep), descending
    order not kept."""
    counts = flips.sum(axis=1)
    live = counts > 0
    f, c = flips[live].astype(np.float64), counts[live].astype(np.float64)
    parts = [] if top is None else [top]
    step = max(1, _CHUNK // max(1, d.shape[0]))
    for k in range(0, f.shape[0], step):
        parts.append((d @ f[k:k + step].T) / c[k:k + step])
    means = np.concatenate(parts, axis=1) if parts else np.zeros((d.shape[0], 0))
    return means if means.shape[1] <= keep else _largest(means, keep)


def _largest(values: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` largest values of each row (rows x k, any order). Wide rows are cut first:
    the k-th largest of ``G >= k`` group maxima is a value at least k values reach, so only
    those at or above it are sorted (a full partition of 10,000 nulls per draw was most of
    the time)."""
    rows, width = values.shape
    groups = max(4 * k, 64)
    if width < 4 * groups:
        return -np.partition(-values, k - 1, axis=1)[:, :k]
    size = -(-width // groups)
    padded = np.full((rows, groups * size), -np.inf)
    padded[:, :width] = values
    maxima = padded.reshape(rows, groups, size).max(axis=2)
    cut = -np.partition(-maxima, k - 1, axis=1)[:, k - 1]
    r, c = np.nonzero(values >= cut[:, None])
    v = values[r, c]
    order = np.lexsort((-v, r))
    starts = np.searchsorted(r[order], np.arange(rows))
    out: np.ndarray = v[order][starts[:, None] + np.arange(k)]
    return out


def thresholds(d: np.ndarray, batches: Iterable[np.ndarray], *, exact: bool, n_resamples: int,
               alpha_test: float) -> np.ndarray:
    """Per row of ``d`` (comparisons x questions), the drop ``delta*`` above which the
    permutation test with these sign patterns (``batches`` of
    :func:`rulegauge.metrics.resample.flip_batches`) finds ``d - delta`` significantly worse
    at ``alpha_test`` (module docstring); +inf where it never can."""
    size = 2 ** d.shape[1] if exact else n_resamples
    add = 0 if exact else 1
    allowed = largest_count(alpha_test, size, add)
    top: np.ndarray | None = None
    zeros = 0
    for flips in batches:
        # the identity pattern (and, drawn, any other flipping nothing) always counts
        zeros += int(np.count_nonzero(~flips.any(axis=1)))
        top = _top(d, flips, max(1, allowed + 1), top)
    j = allowed - zeros  # flipped-set means >= delta that a rejection allows
    if j < 0 or top is None:
        return np.full(d.shape[0], math.inf)
    # fewer live patterns than allowed: any worsening rejects
    kth = (np.full(d.shape[0], -math.inf) if top.shape[1] <= j
           else -np.partition(-top, j, axis=1)[:, j])
    out: np.ndarray = np.maximum(d.mean(axis=1), kth)
    return out


def resampled_power(pool: np.ndarray, n: int, alpha_test: float, *,
                    n_resamples: int = 10_000, draws: int = DRAWS, seed: int = 0,
                    batch: int = 10_000) -> ResampledPower:
    """:class:`ResampledPower` of the gate's permutation test over ``n`` questions whose
    paired differences are drawn from ``pool`` (centred: mean 0), at ``alpha_test``.

    Raises :class:`RulegaugeError` for an empty or non-finite pool, ``n < 1``, or
    alpha_test outside (0, 1)."""
    values = np.array(pool, dtype=np.float64)  # a copy: the caller's array is not touched
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)):
        raise RulegaugeError("power by resampling: the pool of paired differences must be a "
                             "non-empty list of finite numbers")
    if n < 1 or draws < 1 or n_resamples < 1:
        raise RulegaugeError(f"power by resampling: n, draws and n_resamples must be >= 1, got "
                             f"{n}, {draws}, {n_resamples}")
    if not 0.0 < alpha_test < 1.0:
        raise RulegaugeError(f"power by resampling: alpha must be in (0, 1), got {alpha_test!r}")
    rng = np.random.default_rng(seed)
    drawn = values[rng.integers(0, values.size, size=(draws, n))]
    out = np.empty(draws, dtype=np.float64)
    exact = False
    for block in np.array_split(np.arange(draws), min(BLOCKS, draws)):
        batches, exact = flip_batches(n, n_resamples, rng, batch)
        out[block] = thresholds(drawn[block], batches, exact=exact, n_resamples=n_resamples,
                                 alpha_test=alpha_test)
    return ResampledPower(tuple(np.sort(out).tolist()), n, alpha_test, n_resamples, draws, seed,
                          exact, int(values.size))
