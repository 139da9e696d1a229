"""The size of a paired difference: mean with its t margin of error, and Cohen's d_z.

A p-value says whether a difference can be told from none; it does not say how large it
is. Beside every paired test (compare, gate, report, answerers) rulegauge prints, for the
per-question differences ``d_i = candidate_i - base_i`` of the ``n`` paired questions:

* **mean difference** ``mean(d)`` with its **margin of error** at the test's confidence
  level (95% unless a policy says otherwise): ``MOE = t_{(1+c)/2, n-1} * s / sqrt(n)``,
  ``s`` the SD of the differences (``ddof = 1``): the half-width of the paired t
  interval ``mean +- MOE``, the interval Sakai and elinor print beside each test
  (elinor's ``StudentTTest::margin_of_error``). The BCa bootstrap interval printed
  beside it (:func:`rulegauge.metrics.stats.bootstrap_ci`) makes no normal assumption;
  where the two differ much, the differences are far from normal (few questions differ).
* **standardized effect size** ``d_z = mean(d) / s``: Cohen's d for paired samples (the
  mean difference in units of the SD of the differences), the effect size of the paired
  t-test (``t = d_z sqrt(n)``), elinor's ``effect_size()`` and Sakai's ES for the paired
  t-test. It is chosen over ``d_av`` / Hedges' ``g_av`` (standardized by the two sides'
  average SD) because the gate's test is on the differences: d_z is what its power
  depends on. Cohen's reading (0.2 small, 0.5 medium, 0.8 large) is a convention, not a
  verdict; in retrieval a d_z of 0.2 over many questions can matter.

Sign: both follow ``candidate - base`` (negative when the candidate's values are lower;
for a lower-is-better metric that is an improvement).

Edge cases: fewer than 2 questions -> MOE and d_z NaN (no SD); every difference equal
(``s == 0``) -> MOE 0 and d_z NaN (a mean over no spread has no standardized size: never
a plausible number); non-finite differences (``first_rel_rank`` = +inf) -> no effect
(None at the caller, printed ``n/a``).

References: J. Cohen, *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed.
(1988), section 2.3.5 (d_z); D. Lakens, "Calculating and reporting effect sizes to
facilitate cumulative science", Frontiers in Psychology 4:863 (2013), eq. 6-7 and its
worked example (d_z 1.50, t(9) 4.74; checked in the tests); T. Sakai, "Statistical reform
in information retrieval?", SIGIR Forum 48(1) (2014); T. Sakai, *Laboratory Experiments
in Information Retrieval* (2018), ch. 5. The t quantile is
:func:`rulegauge.regression.tdist.t_isf` (held equal to scipy's in its tests).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rulegauge.core.errors import RulegaugeError
from rulegauge.regression.tdist import t_isf

MEASURE = "d_z"
"""The standardized effect size printed: Cohen's d_z (module docstring)."""


@dataclass(frozen=True)
class PairedEffect:
    """The size of one paired difference (module docstring): ``n`` paired questions, the
    ``mean`` difference, the SD ``sd`` of the differences, the margin of error ``moe`` at
    ``confidence`` and ``d_z``."""

    n: int
    mean: float
    sd: float
    moe: float
    confidence: float
    d_z: float

    @property
    def low(self) -> float:
        """Lower end of the t interval, ``mean - moe``."""
        return self.mean - self.moe

    @property
    def high(self) -> float:
        """Upper end of the t interval, ``mean + moe``."""
        return self.mean + self.moe

    def describe(self) -> str:
        """``mean -0.0588 +- 0.0461 (95% t), d_z -0.36``; NaN parts as ``n/a``."""
        return (f"mean {_g(self.mean)} +- {_g(self.moe)} ({self.confidence:.0%} t), "
                f"{MEASURE} {_g(self.d_z, 2)}")


def _g(x: float, digits: int = 3) -> str:
    return "n/a" if math.isnan(x) else f"{x:.{digits}g}"


def paired_effect(diffs: Sequence[float] | np.ndarray, confidence: float = 0.95) -> PairedEffect:
    """The :class:`PairedEffect` of paired differences ``diffs`` (module docstring); raises
    :class:`RulegaugeError` on empty or non-finite input or a confidence outside (0, 1)."""
    d = np.array(diffs, dtype=np.float64)  # a copy: the caller's array is not touched
    if d.ndim != 1 or d.size == 0 or not np.all(np.isfinite(d)):
        raise RulegaugeError("effect size: needs a non-empty list of finite paired differences")
    if not 0.0 < confidence < 1.0:
        raise RulegaugeError(f"effect size: confidence must be in (0, 1), got {confidence!r}")
    n = int(d.size)
    mean = float(d.mean())
    if n < 2:
        return PairedEffect(n, mean, math.nan, math.nan, confidence, math.nan)
    sd = float(np.std(d, ddof=1))
    if not sd > 0:
        return PairedEffect(n, mean, 0.0, 0.0, confidence, math.nan)
    moe = t_isf((1.0 - confidence) / 2.0, n - 1) * sd / math.sqrt(n)
    return PairedEffect(n, mean, sd, moe, confidence, mean / sd)


def effect_head(confidence: float) -> tuple[str, str]:
    """The column heads of :func:`effect_cells`: ``mean Δ ± MOE (95% t)`` and ``d_z``."""
    return f"mean Δ ± MOE ({confidence:.0%} t)", MEASURE


def effect_cells(effect: PairedEffect | None) -> tuple[str, str]:
    """(``mean ± MOE``, ``d_z``) as printed in a table, ``-0.156 ± 0.0649`` and ``-0.68``;
    ``n/a`` without an effect (untested: e.g. +inf values) or where undefined."""
    if effect is None:
        return "n/a", "n/a"
    return f"{_g(effect.mean, 4)} ± {_g(effect.moe)}", _g(effect.d_z, 2)


def effect_columns(effect: PairedEffect | None) -> dict[str, float]:
    """``moe`` and ``d_z`` as columns of a frame (NaN without an effect): the report's."""
    if effect is None:
        return {"moe": math.nan, "d_z": math.nan}
    return {"moe": effect.moe, "d_z": effect.d_z}
