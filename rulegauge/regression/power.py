"""Power and the minimum detectable effect (MDE) of a paired comparison over a gold set.

A gate that passes says "no significant drop"; this module says how large a drop the
gold set could have seen. The model is Sakai's topic-set-size design (Sakai 2016): the
paired differences ``d_i = candidate_i - base_i`` over ``n`` questions have a standard
deviation ``sd``; a two-sided paired t-test (a one-sample t-test on ``d``) at level
``alpha`` rejects when ``|t| > t_{1-alpha/2, n-1}``. With ``delta`` the true mean
difference, ``t`` follows a noncentral t with ``n - 1`` degrees of freedom and
noncentrality ``delta / sd * sqrt(n)``, so

* :func:`ttest_power` = ``P(T > t_crit) + P(T < -t_crit)`` (both tails, as statsmodels'
  ``TTestPower`` computes it; the far tail is negligible for a real drop; the t tails
  from :mod:`rulegauge.regression.tdist`, held equal to scipy's in the tests);
* :func:`mde`: the smallest ``delta`` with that power at this ``n`` (solved by bisection
  on the effect size ``delta / sd``);
* :func:`sample_size`: the smallest integer ``n >= 2`` with that power for ``delta``:
  "how many questions do I need" (Sakai's topic-set size).

The gate's own test is the paired sign-flip permutation test
(:func:`rulegauge.metrics.stats.permutation_test`); its power converges to the t-test's
as ``n`` grows (Hoeffding 1952; Lehmann & Romano, *Testing Statistical Hypotheses*,
ch. 17), so the t-test is the analytic reference. Where the differences are at hand,
:func:`metric_power` gives the permutation test's own MDE by resampling them
(:mod:`rulegauge.regression.power_resample`), which holds where normal theory does not
(few differing questions, heavy tails: :data:`KURTOSIS_LIMIT`); both are checked against
the real gate by simulation (``benchmarks/bench_power.py``, docs/gate.md).

Multiplicity: in a family of ``m`` tests the per-test level is taken as ``alpha / m``
(Bonferroni), the level Holm's first step uses: the power stated is then guaranteed
under Holm and under Benjamini-Hochberg, whatever the other tests do.

The SD comes from what is at hand (:class:`SdEstimate` says which): ``grid``, the
paired differences between the config and its neighbours in the run's own grid
(configs that differ from it in one parameter; for a numeric one, the nearest value on
each side), pooled: the square root of the centred squared differences summed over
the neighbours that differ from it, over their summed degrees of freedom (Sakai's pooled
within-system variance); ``comparison``, the SD of the comparison's own
paired differences (a past candidate against the baseline); ``stated``, a value given.
Edge cases: ``sd == 0`` (no question differs) or fewer than 2 questions give no MDE
(NaN), never a made-up one. References: T. Sakai, "Topic set size design", Information
Retrieval Journal 19 (2016) 256-283; W. Webber, A. Moffat, J. Zobel, "Statistical
power in retrieval experimentation", CIKM 2008; E. Voorhees, C. Buckley, "The effect of
topic set size on retrieval experiment error", SIGIR 2002.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rulegauge.core.errors import RulegaugeError
from rulegauge.regression.neighbours import neighbours
from rulegauge.regression.power_cache import cached_number, cached_resampled
from rulegauge.regression.tdist import bisect, nct_sf, norm_isf, t_isf

MAX_QUESTIONS = 10_000_000  # sample sizes beyond this are reported as unreachable
FEW_DIFFERING = 10
KURTOSIS_LIMIT = 6.0
"""The t-test's power is normal theory. It is flagged as unreliable when the SD estimate
rests on fewer than :data:`FEW_DIFFERING` non-zero paired differences (the permutation
test's discreteness) or their pooled excess kurtosis exceeds :data:`KURTOSIS_LIMIT` (heavy
tails flatten the power curve: more power than predicted at 0.5, less at 0.95). Calibrated
by the simulation check (``benchmarks/bench_power.py --method t-test``, docs/gate.md):
within 5 points on the sample (recall@5: 20 of 153 non-zero, kurtosis 5.4); 7-12 points
off on Secret Hitler (recall@5: 2 of 72, kurtosis 31; MRR@10: kurtosis 7.1), where the
resampled MDE (the gate's default) is within 2.3 points."""
SOURCES = ("grid", "comparison", "stated")


def check_levels(alpha: float, power: float | None = None) -> None:
    """Raise :class:`RulegaugeError` unless ``0 < alpha < 1`` and (when given)
    ``alpha < power < 1``: a power at or below alpha is what a test of no effect has."""
    if not 0.0 < alpha < 1.0:
        raise RulegaugeError(f"alpha must be in (0, 1), got {alpha!r}")
    if power is not None and not alpha < power < 1.0:
        raise RulegaugeError(f"power must be in (alpha, 1) = ({alpha:g}, 1), got {power!r}")


def ttest_power(delta: float, sd: float, n: int, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test to detect a mean difference ``delta`` (either
    sign) with ``n`` questions whose paired differences have SD ``sd`` (module docstring).

    Edge cases: ``n < 2`` or ``sd <= 0`` -> NaN (no t-test); ``delta == 0`` -> alpha."""
    check_levels(alpha)
    if n < 2 or not sd > 0 or not math.isfinite(sd):
        return math.nan
    df = n - 1
    nc = abs(delta) / sd * math.sqrt(n)
    crit = t_isf(alpha / 2.0, df)
    # the far tail as P(T > crit) at -nc (the t is symmetric): one integral form for both
    return nct_sf(crit, df, nc) + nct_sf(crit, df, -nc)


def mde(sd: float, n: int, power: float = 0.8, alpha: float = 0.05) -> float:
    """The minimum detectable effect: the smallest ``|delta|`` that the two-sided paired
    t-test at ``alpha`` detects with probability ``power`` over ``n`` questions; NaN when
    ``n < 2`` or ``sd <= 0``."""
    check_levels(alpha, power)
    if n < 2 or not sd > 0 or not math.isfinite(sd):
        return math.nan
    def gap(effect: float) -> float:
        return ttest_power(effect * sd, sd, n, alpha) - power

    high = 1.0
    while gap(high) < 0:  # power rises with the effect; widen until it brackets the root
        high *= 2.0
    return bisect(gap, 0.0, high, xtol=1e-12) * sd


def normal_mde(sd: float, n: int, power: float = 0.8, alpha: float = 0.05) -> float:
    """The normal approximation ``(z_{1-alpha/2} + z_power) * sd / sqrt(n)`` (a lower
    bound of :func:`mde`, close for large n); NaN as :func:`mde`."""
    check_levels(alpha, power)
    if n < 1 or not sd > 0:
        return math.nan
    z = norm_isf(alpha / 2.0) + norm_isf(1.0 - power)
    return float(z * sd / math.sqrt(n))


def sample_size(delta: float, sd: float, power: float = 0.8, alpha: float = 0.05) -> int | None:
    """The smallest number of questions ``n >= 2`` whose paired t-test detects ``delta``
    with ``power`` (Sakai 2016, section 3: iterate from the normal approximation); None
    when beyond :data:`MAX_QUESTIONS` or ``delta == 0``; ``sd == 0`` needs 2."""
    check_levels(alpha, power)
    if not math.isfinite(delta) or not math.isfinite(sd) or sd < 0:
        raise RulegaugeError(f"delta and sd must be finite, sd >= 0; got {delta!r}, {sd!r}")
    if delta == 0:
        return None
    if sd == 0:
        return 2
    z = norm_isf(alpha / 2.0) + norm_isf(1.0 - power)
    ratio = float(z * sd / abs(delta))
    if not ratio <= math.sqrt(MAX_QUESTIONS):  # before squaring: a tiny drop overflows a float
        return None
    n = max(2, math.floor(ratio ** 2))  # the normal n never exceeds the t one
    while ttest_power(delta, sd, n, alpha) < power:
        n += 1
        if n > MAX_QUESTIONS:
            return None
    while n > 2 and ttest_power(delta, sd, n - 1, alpha) >= power:
        n -= 1
    return n


@dataclass(frozen=True)
class SdEstimate:
    """An SD of paired differences and where it came from: ``source`` one of
    :data:`SOURCES`; ``detail`` in words (which neighbours, which comparison);
    ``sds`` each neighbour's SD (grid), for the range printed."""

    sd: float
    source: str
    detail: str
    sds: tuple[tuple[str, float], ...] = ()
    differing: int = -1  # paired differences that are not 0 (-1: not counted, e.g. stated)
    pairs: int = 0  # paired differences the SD was estimated from
    kurtosis: float = math.nan  # their pooled excess kurtosis (centred per source)
    centred: np.ndarray | None = field(default=None, compare=False, repr=False,
                                       metadata={"json": False})
    """The centred paired differences themselves (grid: per neighbour, pooled), which the
    permutation test's MDE resamples (:mod:`rulegauge.regression.power_resample`); None for a
    stated SD."""

    @property
    def reliable(self) -> bool:
        """False when the t-test's power is flagged (:data:`KURTOSIS_LIMIT`): few non-zero
        differences or heavy tails; True when unknown (a stated SD)."""
        return not (0 <= self.differing < FEW_DIFFERING or self.kurtosis > KURTOSIS_LIMIT)

    def describe(self) -> str:
        few = (f", {self.differing} of {self.pairs} paired differences non-zero, excess "
               f"kurtosis {self.kurtosis:.3g}" if self.differing >= 0 else "")
        if not self.reliable:
            few += (f"; fewer than {FEW_DIFFERING} non-zero or kurtosis above "
                    f"{KURTOSIS_LIMIT:g}: the t-test's power is unreliable here (the "
                    "resampled MDE is the gate's test's), see docs/gate.md (the simulation check)")
        if self.source == "grid" and self.sds:
            lo, hi = min(s for _, s in self.sds), max(s for _, s in self.sds)
            return (f"sd {self.sd:.3g} (grid: pooled over {len(self.sds)} neighbour(s) of "
                    f"{self.detail}, range {lo:.3g}-{hi:.3g}{few})")
        return f"sd {self.sd:.3g} ({self.source}: {self.detail}{few})"


def grid_sd(metrics: pd.DataFrame, configs: pd.DataFrame, config_id: str, metric: str
            ) -> SdEstimate | None:
    """The ``grid`` estimate: the pooled SD of the paired differences between
    ``config_id`` and each neighbour (:func:`neighbours`) over the metric's scope; None
    when there is no neighbour or every neighbour is identical to it."""
    from rulegauge.metrics.info import scored_rows

    near = neighbours(configs, config_id)
    if not near:
        return None
    _, rows = scored_rows(metrics[metrics["config_id"].isin({config_id, *near})], metric)
    wide = rows.pivot(index="question_id", columns="config_id", values="value").sort_index()
    if config_id not in wide:
        return None
    sds, squares, dof, differing, pairs = [], 0.0, 0, 0, 0
    centred: list[np.ndarray] = []
    for c in near:
        if c not in wide:
            continue
        d = (wide[c] - wide[config_id]).to_numpy(np.float64)
        if len(d) >= 2 and np.all(np.isfinite(d)):
            sd = float(np.std(d, ddof=1))
            sds.append((c, sd))
            if sd > 0:  # an identical neighbour says nothing about how a change varies
                squares += float(np.sum((d - d.mean()) ** 2))
                dof += len(d) - 1
                differing += int(np.count_nonzero(d))
                pairs += len(d)
                centred.append(d - d.mean())
    if dof == 0:
        return None
    pool = np.concatenate(centred)
    return SdEstimate(math.sqrt(squares / dof), "grid", config_id, tuple(sds), differing, pairs,
                      _kurtosis(pool), pool)


def differences_sd(differences: np.ndarray, detail: str) -> SdEstimate | None:
    """The ``comparison`` estimate: the SD (ddof 1) of given paired differences; None
    when fewer than 2 or all equal."""
    d = np.asarray(differences, dtype=np.float64)
    if d.size < 2 or not np.all(np.isfinite(d)):
        return None
    sd = float(np.std(d, ddof=1))
    return (SdEstimate(sd, "comparison", detail, (), int(np.count_nonzero(d)), int(d.size),
                       _kurtosis(d - d.mean()), d - d.mean()) if sd > 0 else None)


def _kurtosis(centred: np.ndarray) -> float:
    """Excess kurtosis ``m4 / m2**2 - 3`` of centred values (0 for a normal sample;
    ``scipy.stats.kurtosis`` without bias correction); NaN when all are 0."""
    m2 = float(np.mean(centred ** 2))
    return float(np.mean(centred ** 4)) / m2 ** 2 - 3.0 if m2 > 0 else math.nan


@dataclass(frozen=True)
class MetricPower:
    """One metric's detectable effect in a test: ``n`` questions, the per-test level
    ``alpha_test`` (``alpha / family size``), the SD estimate (None: none at hand, and
    ``note`` says why), the MDE at ``power`` (NaN without an SD) found by ``method``
    (``resampled``: the gate's permutation test over resampled differences,
    :mod:`rulegauge.regression.power_resample`; ``t-test``: the analytic reference, also
    ``t_mde``), the policy's ``max_drop`` (None if not set) and the questions the t-test
    needs to detect it."""

    metric: str
    n: int
    alpha: float
    alpha_test: float
    power: float
    estimate: SdEstimate | None
    mde: float
    max_drop: float | None
    needed: int | None
    note: str = ""
    method: str = "t-test"
    t_mde: float = math.nan
    loss_mde: float = math.nan  # the drop of loss_k whole questions lost (power_models)
    loss_k: float = math.nan  # questions that must lose all relevant pages to be detected

    @property
    def mde_ok(self) -> bool | None:
        """mde <= max_drop (None when either is unknown)."""
        if self.max_drop is None or math.isnan(self.mde):
            return None
        return self.mde <= self.max_drop + 1e-12


@dataclass(frozen=True)
class Resampling:
    """How the permutation test is resampled: the gate's ``n_resamples`` and ``seed``, and
    the ``draws`` of comparisons (:func:`rulegauge.regression.power_resample.resampled_power`)."""

    n_resamples: int = 10_000
    seed: int = 0
    draws: int = 2000


def metric_power(metric: str, n: int, estimate: SdEstimate | None, *, alpha: float,
                 family_size: int, power: float, max_drop: float | None,
                 resampling: Resampling | None = None) -> MetricPower:
    """:class:`MetricPower` of one metric (module docstring: level ``alpha / m``); with
    ``resampling`` and the estimate's differences at hand, the MDE is the permutation
    test's by resampling, else the t-test's; a caller adds its ``note`` with
    :func:`dataclasses.replace`."""
    a = alpha / max(1, family_size)
    sd = estimate.sd if estimate is not None else math.nan
    t_value = (cached_number("t-test mde", lambda: mde(sd, n, power, a), sd=sd, n=n, power=power,
                             alpha=a) if estimate is not None else math.nan)
    value, method = t_value, "t-test"
    if (resampling is not None and estimate is not None and estimate.centred is not None
            and n >= 1):
        found = cached_resampled(estimate.centred, n, a, n_resamples=resampling.n_resamples,
                                 draws=resampling.draws, seed=resampling.seed)
        value, method = found.mde(power), "resampled"
    needed: int | None = None
    if estimate is not None and max_drop is not None and max_drop > 0:
        got = cached_number("t-test sample size", lambda: float(sample_size(max_drop, sd, power, a)
                                                              or math.inf),
                            delta=max_drop, sd=sd, power=power, alpha=a)
        needed = None if math.isinf(got) else int(got)
    return MetricPower(metric, n, alpha, a, power, estimate, value, max_drop, needed, "",
                       method, t_value)
