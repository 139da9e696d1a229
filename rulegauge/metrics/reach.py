"""What a family of sign-flip tests can flag at all: the smallest p-value, the smallest n.

The paired sign-flip permutation test (:func:`rulegauge.metrics.stats.permutation_test`)
cannot give every p-value. Over ``n`` questions with ``2**n <= n_resamples`` it
enumerates every sign pattern and the observed pattern always counts, so its two-sided
p is at least ``2 / 2**n`` (6 questions: 0.031; 5: 0.0625, never below 0.05); with drawn
patterns it is at least ``2 / (n_resamples + 1)`` (Phipson & Smyth 2010: the observed
pattern is added). :func:`smallest_p` is that floor, in the test's own float arithmetic
(:func:`rulegauge.metrics.resample.two_sided_p`), and :func:`smallest_n` the fewest
questions whose test can reject at a level.

A family adjusts those floors too (:mod:`rulegauge.metrics.multiplicity`): Holm's first
step multiplies the smallest p by the family size ``m``, so when ``m * min p_floor >=
alpha`` Holm flags nothing whatever the data (10,000 resamples: a family of more than 250
tests); Benjamini-Hochberg's smallest adjusted p is the smallest p itself. Any test's
adjusted p is at least its own floor, so a test whose floor reaches alpha can never be
flagged. :func:`limited` writes this into the family (``CorrectionFamily.limit``, printed
on its line by every command) with the remedy: more resamples (``ceil(2 m / alpha)``
makes a lone extreme effect flaggable), or more questions, or a smaller family.

Edge cases: ``n < 1`` has no test (floor 1); an empty family has no limit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from rulegauge.metrics.multiplicity import CorrectionFamily

MAX_N = 64  # past this, 2**n exceeds any bounded resample count: the drawn floor holds


def smallest_p(n: int, n_resamples: int) -> float:
    """The smallest two-sided p-value the sign-flip test over ``n`` questions with
    ``n_resamples`` patterns can give (module docstring); 1 for ``n < 1``."""
    if n < 1:
        return 1.0
    size = 2.0 ** n if 2.0 ** n <= n_resamples else float(n_resamples + 1)
    # every pattern: the identity's count is 1 of 2**n; drawn: (0 + 1) / (B + 1)
    return min(1.0, 2.0 * (1.0 / size))


def smallest_n(alpha: float, n_resamples: int) -> int | None:
    """The fewest questions whose sign-flip test can reject at ``alpha`` (p < alpha);
    None when no number can (``2 / (n_resamples + 1) >= alpha``)."""
    for n in range(1, MAX_N + 1):
        if smallest_p(n, n_resamples) < alpha:
            return n
    return None


def adjusted_floor(method: str, floors: Sequence[float], own: float) -> float:
    """The smallest adjusted p-value a test whose own floor is ``own`` can get in a family
    whose tests have ``floors`` (itself included): Holm ``max(m * min(floors), own)``,
    Benjamini-Hochberg ``own`` (module docstring)."""
    if method == "holm" and floors:
        return max(min(1.0, len(floors) * min(floors)), own)
    return own


def resamples_needed(size: int, alpha: float) -> int:
    """Resamples with which Holm's first step can flag a lone extreme effect in a family
    of ``size``: ``2 size / (B + 1) < alpha``."""
    return math.floor(2 * size / alpha)


def limited(family: CorrectionFamily, ns: Sequence[int], n_resamples: int) -> CorrectionFamily:
    """``family`` with its :attr:`~CorrectionFamily.limit` set when it cannot flag
    anything, or some of its tests never can (``ns``: each member's paired questions, in
    member order); unchanged otherwise."""
    if not ns:
        return family
    floors = [smallest_p(n, n_resamples) for n in ns]
    low = min(floors)
    why = (f"its smallest possible p is {low:.3g} ("
           + (f"2/2^{max(ns)}: {max(ns)} questions, every sign pattern" if 2.0 ** max(ns) <= n_resamples
              else f"2/({n_resamples}+1) with {n_resamples} resamples") + ")")
    first = adjusted_floor(family.method, floors, low)
    if first >= family.alpha:
        times = f", x {len(floors)} tests = {first:.3g}" if family.method == "holm" and len(floors) > 1 else ""
        if 2.0 ** max(ns) <= n_resamples or n_resamples >= resamples_needed(len(floors), family.alpha):
            level = family.alpha / (len(floors) if family.method == "holm" else 1)
            fix = (f"more questions per test (at least {smallest_n(level, n_resamples) or 'more'}) "
                   "or a smaller family")
        else:
            fix = (f"raise the resamples to at least {resamples_needed(len(floors), family.alpha):,} "
                   "or narrow the family (fewer configs or metrics)")
        text = (f"CANNOT FLAG ANYTHING: {why}{times} >= alpha {family.alpha:g}"
                f"{' (Holm first step)' if family.method == 'holm' else ''}; {fix}")
        return replace(family, limit=text)
    never = sum(1 for f in floors if f >= family.alpha)
    if never:
        text = (f"{never} of {len(floors)} test(s) can never be flagged: fewer than "
                f"{smallest_n(family.alpha, n_resamples)} questions (smallest p 2/2^n >= alpha "
                f"{family.alpha:g})")
        return replace(family, limit=text)
    return family
