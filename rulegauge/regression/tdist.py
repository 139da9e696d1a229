"""Student's t and the noncentral t in numpy: the tails the paired t-test's power needs.

``T = (Z + nc) / sqrt(V / df)`` with ``Z`` standard normal and ``V`` chi-square with ``df``
degrees of freedom. Conditioning on ``S = sqrt(V / df)``,

    P(T > c) = E[ Phi_bar(c S - nc) ] = integral over s of Phi_bar(c s - nc) f_S(s) ds,

with ``f_S(s) = 2 df s f_chi2(df s^2; df)``. :func:`nct_sf` evaluates that integral by
composite Gauss-Legendre quadrature over the range holding all but ~1e-30 of ``S``'s mass,
with the stretch where the tail factor falls from 1 to 0 pieced apart (the integrand is
smooth and bounded, so the quadrature error is far below what the power solver needs);
:func:`t_isf` inverts the central case (``nc = 0``) by bisection to the last bits.
``tests/regression/test_tdist.py`` holds both equal to scipy's ``nct.sf`` (to 1e-9) and
``t.isf`` (to 1e-12) over the degrees of freedom and noncentralities a gate meets.

Why not scipy: the core install (what a CI gate installs) needs no scipy for anything
else (the largest package of a gate's site-packages, 143 MB), and these two functions
are an integral and a bisection.

Reference: N. L. Johnson, S. Kotz, N. Balakrishnan, *Continuous Univariate
Distributions*, vol. 2 (1995), ch. 31 (the noncentral t as a normal mixture).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from functools import lru_cache
from statistics import NormalDist

import numpy as np

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(32)
_PIECES = 48  # per stretch of the range (below, across and above the tail's fall)
_ERFC = np.frompyfunc(math.erfc, 1, 1)
_NORMAL = NormalDist()


def norm_isf(q: float) -> float:
    """The standard normal upper quantile: ``z`` with ``P(Z > z) = q``."""
    return -_NORMAL.inv_cdf(q)


def _s_range(df: int) -> tuple[float, float]:
    """An interval of ``S = sqrt(V/df)`` outside which its density is negligible (< 1e-30
    of the mass: 12 standard deviations of the chi-square beside the bulk, never below 0)."""
    spread = 12.0 * math.sqrt(2.0 * df) + 60.0
    low = max(0.0, df - spread) / df
    high = (df + spread) / df
    return math.sqrt(low), math.sqrt(high)


def nct_sf(c: float, df: int, nc: float) -> float:
    """``P(T > c)`` for the noncentral t with ``df`` degrees of freedom and noncentrality
    ``nc`` (module docstring); ``nc = 0`` is Student's t."""
    if df < 1:
        raise ValueError(f"nct_sf: df must be >= 1, got {df}")
    lo, hi = _s_range(df)
    # the tail factor falls from 1 to 0 where c s - nc crosses [-10, 10]: that stretch
    # gets its own pieces (for small df and a far quantile it is a sliver near s = 0)
    cuts = {lo, hi}
    if c != 0.0:
        cuts |= {min(hi, max(lo, (nc + k) / c)) for k in (-10.0, 10.0)}
    bounds = sorted(cuts)
    edges = np.concatenate([np.linspace(a, b, _PIECES + 1)[:-1]
                            for a, b in itertools.pairwise(bounds) if b > a] + [[hi]])
    half = (edges[1:] - edges[:-1])[:, None] / 2.0
    s = (edges[:-1, None] + half + half * _NODES[None, :]).ravel()
    w = (half * _WEIGHTS[None, :]).ravel()
    v = df * s * s
    # log f_S(s) = log(2 df s) + log f_chi2(v; df), computed in logs: v**(df/2) overflows
    with np.errstate(divide="ignore"):
        log_f = (np.log(2.0 * df * s) + (df / 2.0 - 1.0) * np.log(v) - v / 2.0
                 - (df / 2.0) * math.log(2.0) - math.lgamma(df / 2.0))
    dens = np.where(s > 0, np.exp(log_f), 0.0)
    tail = 0.5 * np.asarray(_ERFC((c * s - nc) / math.sqrt(2.0)), dtype=np.float64)
    # divided by the quadrature of the density itself (1 up to rounding): for large df the
    # log density is a difference of numbers near df log df, whose rounding would otherwise
    # scale the tail by 1 + 1e-10
    mass = w * dens
    return float(min(1.0, max(0.0, float(np.sum(mass * tail) / np.sum(mass)))))


@lru_cache(maxsize=4096)
def t_isf(q: float, df: int) -> float:
    """Student's t upper quantile: ``c`` with ``P(T > c) = q`` (``0 < q < 1``), by
    bisection on :func:`nct_sf` with ``nc = 0`` until the interval is one float wide
    (cached: the power solvers ask for one quantile per sample size many times)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"t_isf: q must be in (0, 1), got {q!r}")
    if q == 0.5:
        return 0.0
    sign = 1.0 if q < 0.5 else -1.0
    target = min(q, 1.0 - q)
    lo, hi = 0.0, 1.0
    while nct_sf(hi, df, 0.0) > target:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):
            break
        if nct_sf(mid, df, 0.0) > target:
            lo = mid
        else:
            hi = mid
    return sign * (lo + hi) / 2.0


def bisect(fn: Callable[[float], float], lo: float, hi: float, xtol: float = 1e-12) -> float:
    """A root of the increasing ``fn`` on ``[lo, hi]`` (``fn(lo) <= 0 <= fn(hi)``) to
    ``xtol``: bisection, the bracket halved each step (no derivative, never leaves it)."""
    f_lo = fn(lo)
    if f_lo == 0:
        return lo
    while hi - lo > xtol * max(1.0, abs(hi)):
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):
            break
        if fn(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0
