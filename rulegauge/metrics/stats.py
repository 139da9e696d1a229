"""Paired significance statistics for comparing two runs question by question.

All functions are pure: they take arrays of per-question differences
(``candidate - base``, one value per question present in both runs) and never
mutate them. The resampling itself is scipy's (the house rule: a well-kept
library where one has it); randomness comes from a local
:class:`numpy.random.Generator` built from the caller's ``seed``, so the same seed
and data give the same numbers, in any process.

* :func:`permutation_test`: paired (sign-flip) permutation test of the mean
  difference, two-sided: ``scipy.stats.permutation_test`` with one sample and
  ``permutation_type="samples"`` (each difference's sign flipped at random). With
  ``2**n <= n_resamples`` scipy enumerates every sign pattern (an exact test,
  ``p = count / 2**n``); otherwise it draws ``n_resamples`` patterns and
  ``p = (count + 1) / (n_resamples + 1)`` (Phipson & Smyth 2010, never zero).
* :func:`bootstrap_ci`: BCa (bias-corrected and accelerated) bootstrap confidence
  interval of the mean difference, ``scipy.stats.bootstrap(method="BCa")``
  (Efron & Tibshirani 1993, ch. 14).
* :func:`holm`: Holm-Bonferroni step-down adjustment (Holm 1979), hand-written:
  scipy has no Holm (``scipy.stats.false_discovery_control`` is BH/BY only) and
  the five lines are checked against hand-computed values.

Consistency. The permutation p and the bootstrap CI answer different questions
and can disagree when few questions differ: three losses and no win give an exact
sign-flip p of 2/8 = 0.25, while more than 97.5% of bootstrap resamples contain
at least one of the three losses, so any bootstrap interval sits below 0.
:func:`agree` says whether they agree; the comparison reports a disagreement
(the permutation p is the one the gate uses).

Each call builds its own generator from ``seed``; callers that test several
metrics with one seed therefore get results that do not depend on which other
metrics were tested, or in what order.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.stats

from rulegauge.core.errors import RulegaugeError
from rulegauge.core.limits import count_problem

# Resampled means closer than this (relative to the observed magnitude) count as
# equal when counting "as extreme" nulls: sign flips reorder the summation. scipy's
# permutation_test uses the same relative tolerance internally.
_REL_TIE = 1e-12
# scipy evaluates the statistic on batches of at most this many resamples (memory bound).
_BATCH = 10_000


@dataclass(frozen=True)
class PermutationResult:
    """Outcome of :func:`permutation_test`.

    ``statistic`` is the observed mean difference; ``count`` the number of null
    means at least as extreme in absolute value; ``n_resamples`` the size of the
    null distribution (``2**n`` when ``exact``).
    """

    statistic: float
    p_value: float
    count: int
    n_resamples: int
    exact: bool = False


def _checked(diffs: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    d = np.array(diffs, dtype=np.float64)  # a copy: callers' arrays are never touched
    if d.ndim != 1:
        raise RulegaugeError(f"{what}: differences must be one-dimensional, got shape {d.shape}")
    if d.size == 0:
        raise RulegaugeError(f"{what}: no paired differences (no question is present in both runs)")
    if not np.all(np.isfinite(d)):
        raise RulegaugeError(f"{what}: {int(np.sum(~np.isfinite(d)))} non-finite difference(s); "
                           "a mean difference is undefined")
    return d


def _check_resamples(n_resamples: int, what: str) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer) \
            or n_resamples < 1:
        raise RulegaugeError(f"{what}: n_resamples must be a positive integer, got {n_resamples!r}")
    problem = count_problem("resamples", int(n_resamples))
    if problem:  # each resample is a pass over every question: bounded
        raise RulegaugeError(f"{what}: {problem}")


def _mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.asarray(np.mean(x, axis=axis))


def permutation_test(diffs: Sequence[float] | np.ndarray, n_resamples: int = 10_000,
                     seed: int = 0) -> PermutationResult:
    """Two-sided paired permutation (sign-flip) test of ``mean(diffs) == 0``.

    Under the null hypothesis the two runs are exchangeable within each
    question, so each difference's sign is equally likely to be + or -.
    ``scipy.stats.permutation_test((diffs,), mean, permutation_type="samples")``
    flips the signs (every pattern when ``2**n <= n_resamples``, else
    ``n_resamples`` random ones from ``numpy.random.default_rng(seed)``); the
    two-sided p is ``min(1, 2 * min(P(null <= obs), P(null >= obs)))``, which for
    the symmetric sign-flip null equals the share of nulls with
    ``|mean| >= |observed|``.

    Edge cases: all differences zero -> every null ties the observation and
    p = 1. Empty or non-finite input raises :class:`RulegaugeError` (a p-value of
    an undefined mean would be a plausible-looking lie).

    Reference: Phipson & Smyth (2010), Stat. Appl. Genet. Mol. Biol. 9(1);
    Good, "Permutation Tests" (2000), ch. 3.
    """
    d = _checked(diffs, "permutation test")
    _check_resamples(n_resamples, "permutation test")
    observed = float(d.mean())
    if not np.any(d):
        exact = 2.0 ** d.size <= n_resamples
        size = 2 ** d.size if exact else int(n_resamples)
        return PermutationResult(0.0, 1.0, size, size, exact)
    res = scipy.stats.permutation_test(
        (d,), _mean, permutation_type="samples", vectorized=True, n_resamples=int(n_resamples),
        alternative="two-sided", batch=_BATCH, rng=np.random.default_rng(seed))
    null = np.asarray(res.null_distribution, dtype=np.float64)
    count = int(np.count_nonzero(np.abs(null) >= abs(observed) * (1.0 - _REL_TIE)))
    return PermutationResult(observed, float(res.pvalue), count, int(null.size),
                             bool(null.size < n_resamples or 2.0 ** d.size <= n_resamples))


def bootstrap_ci(diffs: Sequence[float] | np.ndarray, confidence: float = 0.95,
                 n_resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """BCa bootstrap confidence interval of the mean paired difference.

    ``scipy.stats.bootstrap((diffs,), mean, method="BCa")``: questions are
    resampled with replacement (the pair stays together) with a generator from
    ``seed``; the percentile interval is corrected for bias (the share of
    resampled means below the observed one) and skew (the jackknife acceleration).

    Edge cases: a single question or identical differences give a zero-width
    interval at that value (the bootstrap distribution is degenerate and BCa is
    undefined there). Empty or non-finite input raises :class:`RulegaugeError`;
    ``confidence`` must lie strictly between 0 and 1.

    Reference: Efron & Tibshirani, "An Introduction to the Bootstrap" (1993), ch. 14.
    """
    d = _checked(diffs, "bootstrap")
    _check_resamples(n_resamples, "bootstrap")
    if not 0.0 < confidence < 1.0:
        raise RulegaugeError(f"bootstrap: confidence must be in (0, 1), got {confidence!r}")
    if np.all(d == d[0]):
        return float(d[0]), float(d[0])
    with warnings.catch_warnings():
        # a near-degenerate resample distribution (e.g. one non-zero difference in many)
        # makes BCa warn and return NaN; the percentile interval is then reported instead
        warnings.simplefilter("ignore", scipy.stats.DegenerateDataWarning)
        # and its acceleration divides 0 by 0 when the jackknife means are all equal (few
        # differing questions): NaN again, handled the same way
        warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
        res = scipy.stats.bootstrap((d,), _mean, vectorized=True, confidence_level=confidence,
                                    n_resamples=int(n_resamples), method="BCa", batch=_BATCH,
                                    rng=np.random.default_rng(seed))
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if np.isnan(low) or np.isnan(high):
        tail = (1.0 - confidence) / 2.0
        low, high = (float(x) for x in np.quantile(res.bootstrap_distribution, [tail, 1 - tail]))
    return low, high


def agree(p_value: float, ci: tuple[float, float], confidence: float) -> bool:
    """True when the test and the interval tell the same story at level
    ``1 - confidence``: p below it exactly when the interval excludes 0."""
    excludes_zero = ci[0] > 0.0 or ci[1] < 0.0
    return (p_value < 1.0 - confidence) == excludes_zero


def checked_p_values(p_values: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    """``p_values`` as a 1-D float array; NaN allowed (untested), anything outside [0, 1]
    raises :class:`RulegaugeError` naming ``what``."""
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise RulegaugeError(f"{what}: p-values must be one-dimensional, got shape {p.shape}")
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0.0) | (p[ok] > 1.0)):
        raise RulegaugeError(f"{what}: p-values must lie in [0, 1], got {p[ok].tolist()}")
    return p


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values, in the input order.

    With the m finite p-values sorted ascending ``p(1) <= ... <= p(m)``, the
    adjusted value is ``max_{j<=i} min(1, (m - j + 1) * p(j))``; reject at level
    alpha where the adjusted value is ``<= alpha``. Ties keep input order.

    Edge cases: NaN entries (tests that could not be run) stay NaN and do not
    count towards m; an empty input gives an empty array. Values outside [0, 1]
    raise :class:`RulegaugeError`.

    Reference: Holm (1979), "A simple sequentially rejective multiple test
    procedure", Scand. J. Statist. 6(2):65-70.
    """
    p = checked_p_values(p_values, "holm")
    ok = ~np.isnan(p)
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(ok)
    m = idx.size
    if m == 0:
        return out
    order = idx[np.argsort(p[idx], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled)
    return out


@dataclass(frozen=True)
class WinsTiesLosses:
    """Per-question comparison counts, from the candidate's point of view."""

    wins: int
    ties: int
    losses: int


def wins_ties_losses(base: Sequence[float] | np.ndarray, candidate: Sequence[float] | np.ndarray,
                     *, higher_is_better: bool, atol: float = 1e-12) -> WinsTiesLosses:
    """Count questions where the candidate is better, equal, or worse.

    Values within ``atol`` of each other tie (so do two infinities of the same
    sign, e.g. ``first_rel_rank = +inf`` on both sides: the page was retrieved by
    neither). NaN on either side raises: the caller must drop non-applicable
    questions explicitly.
    """
    b = np.asarray(base, dtype=np.float64)
    c = np.asarray(candidate, dtype=np.float64)
    if b.shape != c.shape or b.ndim != 1:
        raise RulegaugeError(f"wins/ties/losses: shapes differ or are not 1-D ({b.shape}, {c.shape})")
    if np.any(np.isnan(b) | np.isnan(c)):
        raise RulegaugeError("wins/ties/losses: NaN values; drop non-applicable questions first")
    with np.errstate(invalid="ignore"):
        tie = (b == c) | (np.abs(c - b) <= atol)
    better = (c > b) if higher_is_better else (c < b)
    wins = int(np.count_nonzero(better & ~tie))
    ties = int(np.count_nonzero(tie))
    return WinsTiesLosses(wins, ties, int(b.size) - wins - ties)
