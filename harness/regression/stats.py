"""Paired significance statistics for comparing two runs question by question.

All functions are pure: they take arrays of per-question differences
(``candidate - base``, one value per question present in both runs) and never
mutate them. Randomness comes from a local :class:`numpy.random.Generator`
seeded by the caller, so the same seed and data give the same numbers.

* :func:`permutation_test`: paired (sign-flip) permutation test of the mean
  difference, two-sided, Monte-Carlo with ``p = (count + 1) / (n_resamples + 1)``
  (Phipson & Smyth 2010, "Permutation p-values should never be zero").
* :func:`bootstrap_ci`: percentile bootstrap confidence interval of the mean
  difference (Efron & Tibshirani 1993, ch. 13).
* :func:`holm`: Holm-Bonferroni step-down adjustment (Holm 1979).

Each test builds its own generator from ``seed``; callers that test several
metrics with one seed therefore get results that do not depend on which other
metrics were tested, or in what order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.core.errors import HarnessError

# Resampled means closer than this (relative to the observed magnitude) count as
# equal: sign flips reorder the summation, and exact-zero float differences
# would otherwise make ties depend on rounding. scipy uses the same idea.
_REL_TIE = 1e-12
# Rows per resampling batch are chosen so one batch holds at most this many values.
_BATCH_VALUES = 2_000_000


@dataclass(frozen=True)
class PermutationResult:
    """Outcome of :func:`permutation_test`.

    ``statistic`` is the observed mean difference; ``count`` the number of
    resampled means at least as extreme (in absolute value).
    """

    statistic: float
    p_value: float
    count: int
    n_resamples: int


def _checked(diffs: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim != 1:
        raise HarnessError(f"{what}: differences must be one-dimensional, got shape {d.shape}")
    if d.size == 0:
        raise HarnessError(f"{what}: no paired differences (no question is present in both runs)")
    if not np.all(np.isfinite(d)):
        raise HarnessError(f"{what}: {int(np.sum(~np.isfinite(d)))} non-finite difference(s); "
                           "a mean difference is undefined")
    return d


def _batches(n_resamples: int, n: int) -> list[int]:
    size = max(1, _BATCH_VALUES // max(n, 1))
    full, rest = divmod(n_resamples, size)
    return [size] * full + ([rest] if rest else [])


def _check_resamples(n_resamples: int, what: str) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer) \
            or n_resamples < 1:
        raise HarnessError(f"{what}: n_resamples must be a positive integer, got {n_resamples!r}")


def permutation_test(diffs: Sequence[float] | np.ndarray, n_resamples: int = 10_000,
                     seed: int = 0) -> PermutationResult:
    """Two-sided paired permutation (sign-flip) test of ``mean(diffs) == 0``.

    Under the null hypothesis the two runs are exchangeable within each
    question, so each difference's sign is equally likely to be + or -. Each
    resample flips every sign independently with probability 1/2 and records the
    mean; ``count`` is the number of resampled means with
    ``|mean| >= |observed mean|`` and ``p = (count + 1) / (n_resamples + 1)``
    (the observed labelling counts as one of the permutations, so p is never 0).

    Edge cases: all differences zero -> every resample ties the observation and
    p = 1. Empty or non-finite input raises :class:`HarnessError` (a p-value of
    an undefined mean would be a plausible-looking lie).

    Reference: Phipson & Smyth (2010), Stat. Appl. Genet. Mol. Biol. 9(1);
    Good, "Permutation Tests" (2000), ch. 3.
    """
    d = _checked(diffs, "permutation test")
    _check_resamples(n_resamples, "permutation test")
    rng = np.random.default_rng(seed)
    observed = float(d.mean())
    threshold = abs(observed) * (1.0 - _REL_TIE)
    count = 0
    for rows in _batches(n_resamples, d.size):
        signs = rng.integers(0, 2, size=(rows, d.size), dtype=np.int8) * 2 - 1
        means = (signs * d).mean(axis=1)
        count += int(np.count_nonzero(np.abs(means) >= threshold))
    return PermutationResult(observed, (count + 1) / (n_resamples + 1), count, n_resamples)


def bootstrap_ci(diffs: Sequence[float] | np.ndarray, confidence: float = 0.95,
                 n_resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean paired difference.

    Questions are resampled with replacement (the pair stays together); the
    interval is the ``(1-confidence)/2`` and ``(1+confidence)/2`` quantiles
    (numpy's default linear interpolation) of the resampled means.

    Edge cases: a single question or identical differences give a zero-width
    interval at that value. Empty or non-finite input raises
    :class:`HarnessError`; ``confidence`` must lie strictly between 0 and 1.

    Reference: Efron & Tibshirani, "An Introduction to the Bootstrap" (1993), ch. 13.
    """
    d = _checked(diffs, "bootstrap")
    _check_resamples(n_resamples, "bootstrap")
    if not 0.0 < confidence < 1.0:
        raise HarnessError(f"bootstrap: confidence must be in (0, 1), got {confidence!r}")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=np.float64)
    start = 0
    for rows in _batches(n_resamples, d.size):
        idx = rng.integers(0, d.size, size=(rows, d.size))
        means[start:start + rows] = d[idx].mean(axis=1)
        start += rows
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values, in the input order.

    With the m finite p-values sorted ascending ``p(1) <= ... <= p(m)``, the
    adjusted value is ``max_{j<=i} min(1, (m - j + 1) * p(j))``; reject at level
    alpha where the adjusted value is ``<= alpha``. Ties keep input order.

    Edge cases: NaN entries (tests that could not be run) stay NaN and do not
    count towards m; an empty input gives an empty array. Values outside [0, 1]
    raise :class:`HarnessError`.

    Reference: Holm (1979), "A simple sequentially rejective multiple test
    procedure", Scand. J. Statist. 6(2):65-70.
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise HarnessError(f"holm: p-values must be one-dimensional, got shape {p.shape}")
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0.0) | (p[ok] > 1.0)):
        raise HarnessError(f"holm: p-values must lie in [0, 1], got {p[ok].tolist()}")
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
        raise HarnessError(f"wins/ties/losses: shapes differ or are not 1-D ({b.shape}, {c.shape})")
    if np.any(np.isnan(b) | np.isnan(c)):
        raise HarnessError("wins/ties/losses: NaN values; drop non-applicable questions first")
    with np.errstate(invalid="ignore"):
        tie = (b == c) | (np.abs(c - b) <= atol)
    better = (c > b) if higher_is_better else (c < b)
    wins = int(np.count_nonzero(better & ~tie))
    ties = int(np.count_nonzero(tie))
    return WinsTiesLosses(wins, ties, int(b.size) - wins - ties)
