"""The `rulegauge power` report: the detectable effect of a run's gold set (Sakai's topic-set size).

Method: :mod:`rulegauge.regression.power` (the paired t-test, the SD estimates),
:mod:`rulegauge.regression.power_resample` (the gate's permutation test by resampling: a
uniform shift) and :mod:`rulegauge.regression.power_models` (the same test when whole
questions lose their relevant pages); every MDE is printed with its model. What the test
can deliver bounds every figure: questions needed are never fewer than the sign-flip test
needs to reject at all (:func:`rulegauge.metrics.reach.smallest_n`: 6 at alpha 0.05, 8
with 6 tests), and a drop beyond the metric's range (``--delta 2`` on recall@5) is refused."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rulegauge.core.errors import Problem, RulegaugeError, ValidationError
from rulegauge.core.limits import count_problem, real_problem, work_problem
from rulegauge.metrics.reach import smallest_n
from rulegauge.metrics.resample import resamples_problem
from rulegauge.regression.power import (
    Resampling,
    SdEstimate,
    check_levels,
    grid_sd,
    mde,
    normal_mde,
    sample_size,
    ttest_power,
)
from rulegauge.regression.power_cache import cached_loss, cached_resampled
from rulegauge.regression.power_models import MODELS, LossPower, question_pool
from rulegauge.regression.power_resample import ResampledPower


@dataclass(frozen=True)
class PowerReport:
    """``rulegauge power``: for a run's gold set, a metric and a config, the SD estimate,
    the MDE at ``n`` questions, and (with ``delta``) the power to detect ``delta`` now and
    the questions needed for it; ``needed`` per (delta, power) for a few drops."""

    run_id: str
    metric: str
    config: str
    n: int
    alpha: float
    tests: int
    alpha_test: float
    power: float
    estimate: SdEstimate
    mde: float
    normal_mde: float
    delta: float | None
    power_at_delta: float
    needed: int | None
    sizes: tuple[tuple[float, float, int | None], ...]  # (delta, power, questions needed)
    resampled_mde: float = math.nan  # the gate's permutation test's MDE (NaN with --sd)
    resampled_power_at_delta: float = math.nan
    resampled: ResampledPower | None = field(default=None, repr=False, metadata={"json": False})
    resampling: str = ""  # how the permutation test was resampled, in words
    models: tuple[tuple[str, str], ...] = tuple(MODELS.items())  # (model, what it assumes)
    loss_k: float = math.nan  # whole-question loss: questions lost for the MDE (inf: never)
    loss_mde: float = math.nan  # ... and the drop they make
    loss_power_at_delta: float = math.nan  # the power when delta is made of lost questions
    loss_questions_at_delta: int | None = None  # the lost questions delta takes
    min_questions: int | None = None  # the sign-flip test's smallest n that can reject
    loss: LossPower | None = field(default=None, repr=False, metadata={"json": False})
    loss_power_at_shift_mde: float = math.nan  # how often the shift MDE is seen as lost questions
    def summary_rows(self) -> list[tuple[str, str]]:
        rows = [("run", self.run_id), ("metric", self.metric), ("config", self.config),
                ("questions in scope (n)", str(self.n)),
                ("alpha (two-sided)", f"{self.alpha:g}"),
                ("tests in the family", str(self.tests)),
                ("alpha per test", f"{self.alpha_test:.4g}"),
                ("SD of paired differences", self.estimate.describe()),
                *[(f"model: {name}", what) for name, what in self.models],
                (f"MDE at power {self.power:g}, uniform shift (the gate's permutation test, "
                 "resampled)",
                 f"{self.resampled_mde:.4g} ({self.resampling})" if self.resampled else
                 "n/a: a stated --sd has no differences to resample"),
                (f"MDE at power {self.power:g}, uniform shift (paired t-test)", f"{self.mde:.4g}"),
                (f"MDE at power {self.power:g}, uniform shift (normal approximation)",
                 f"{self.normal_mde:.4g}"),
                (f"MDE at power {self.power:g}, whole-question loss (the gate's permutation test)",
                 self._loss_text())]
        if self.loss is not None and self.resampled is not None and math.isfinite(self.resampled_mde):
            rows.append((f"power at the uniform-shift MDE {self.resampled_mde:.4g} when it is made of "
                         f"lost questions ({self.loss.questions_for(self.resampled_mde)})",
                         f"{self.loss_power_at_shift_mde:.3f}"))
        if self.delta is not None:
            if self.resampled is not None:
                rows.append((f"power to detect a drop of {self.delta:g} with n = {self.n}, "
                             "uniform shift (permutation test, resampled)",
                             f"{self.resampled_power_at_delta:.3f} (SE "
                             f"{self.resampled.se(self.delta):.3f})"))
            rows.append((f"power to detect a drop of {self.delta:g} with n = {self.n}, uniform "
                         "shift (paired t-test)", f"{self.power_at_delta:.3f}"))
            if self.loss is not None:
                rows.append((f"power to detect a drop of {self.delta:g} with n = {self.n}, "
                             f"whole-question loss ({self.loss_questions_at_delta} questions lost)",
                             f"{self.loss_power_at_delta:.3f}"))
            rows.append((f"questions needed for a drop of {self.delta:g} at power {self.power:g} "
                         f"(paired t-test; at least {self.min_questions}, the sign-flip test's "
                         "smallest n that can reject)",
                         "more than 10^7" if self.needed is None else str(self.needed)))
        return rows

    def _loss_text(self) -> str:
        if self.loss is None:
            return "n/a: a stated --sd has no questions to lose"
        if math.isinf(self.loss_k):
            return (f"none: losing every question above the floor is detected in fewer than "
                    f"{self.power:g} of the draws")
        return (f"{self.loss_mde:.4g} ({int(self.loss_k)} of {self.n} questions lose all their "
                f"relevant pages; {self.loss.describe()})")


def power_report(run: object, metric: str, *, config: str, delta: float | None = None,
                 power: float = 0.8, alpha: float = 0.05, tests: int = 1,
                 sd: float | None = None, resampling: Resampling | None = None) -> PowerReport:
    """:class:`PowerReport` of ``run`` (a :class:`rulegauge.store.rundir.Run`): the SD from
    ``sd`` when given, else from the run's grid around ``config`` (:func:`grid_sd`), whose
    centred differences also give the permutation test's MDE by resampling (``resampling``,
    default :class:`Resampling`: the gate's 10,000 sign patterns, seed 0, 2,000 draws);
    raises :class:`RulegaugeError` when neither is at hand."""
    from rulegauge.metrics.info import scored_rows

    check_levels(alpha, power)
    how = resampling or Resampling()
    if tests < 1:
        raise RulegaugeError(f"tests: a family has at least 1 test, got {tests}")
    if delta is not None and (not math.isfinite(delta) or delta <= 0):
        raise RulegaugeError(f"--delta must be a positive drop in metric units, got {delta!r}")
    check_delta(metric, delta)
    if sd is not None and (not math.isfinite(sd) or sd <= 0):
        raise RulegaugeError(f"--sd must be a positive number, got {sd!r}")
    _check_bounds(how, tests, sd, delta)
    metrics = run.table("metrics")  # type: ignore[attr-defined]
    configs = run.table("configs")  # type: ignore[attr-defined]
    if config not in set(configs["config_id"].astype(str)):
        raise RulegaugeError(f"config {config!r} is not in run {run.run_id}")  # type: ignore[attr-defined]
    info, rows = scored_rows(metrics, metric)
    if info.aggregate != "mean":
        raise RulegaugeError(f"{info.name} is aggregated by the {info.aggregate}: the paired t-test "
                             "of means gives it no MDE; choose a mean metric (recall@5, nDCG@10, ...)")
    n = int((rows["config_id"] == config).sum())
    if sd is not None:
        est: SdEstimate | None = SdEstimate(sd, "stated", "--sd")
    else:
        est = grid_sd(metrics, configs, config, info.name)
    if est is None:
        raise RulegaugeError(f"no SD estimate for {info.name} around {config}: no grid neighbour "
                             f"(a config differing in one parameter) differs from it; state one "
                             f"with --sd")
    a = alpha / tests
    least = smallest_n(a, how.n_resamples)

    def needed(d: float) -> int | None:  # the t-test's n, never below what the test can use
        got = sample_size(d, est.sd, power, a)
        return None if got is None or least is None else max(got, least)

    if est.centred is not None and n >= 1:  # the permutation test's MDE is resampled
        _check_work(how, a, n)
    deltas = sorted({0.02, 0.05, 0.10, *((delta,) if delta is not None else ())})
    sizes = tuple((d, power, needed(d)) for d in deltas)
    found = (cached_resampled(est.centred, n, a, n_resamples=how.n_resamples, draws=how.draws,
                              seed=how.seed) if est.centred is not None and n >= 1 else None)
    pool = question_pool(metrics, configs, config, info.name) if sd is None else None
    loss = (cached_loss(pool, n, a, n_resamples=how.n_resamples, draws=how.draws, seed=how.seed)
            if pool is not None and pool.eligible.any() and n >= 1 else None)
    k = loss.mde_k(power) if loss is not None else math.nan
    return PowerReport(
        str(run.run_id), info.name, config, n, alpha, tests, a, power, est,  # type: ignore[attr-defined]
        mde(est.sd, n, power, a), normal_mde(est.sd, n, power, a), delta,
        ttest_power(delta, est.sd, n, a) if delta is not None else math.nan,
        needed(delta) if delta is not None else None, sizes,
        found.mde(power) if found else math.nan,
        found.power(delta) if found and delta is not None else math.nan, found,
        found.describe() if found else "", tuple(MODELS.items()), k,
        loss.drop(k) if loss is not None else math.nan,
        loss.power_at_drop(delta) if loss is not None and delta is not None else math.nan,
        loss.questions_for(delta) if loss is not None and delta is not None else None, least, loss,
        loss_power_at_shift_mde=loss.power_at_drop(found.mde(power)) if loss is not None
        and found is not None and math.isfinite(found.mde(power)) else math.nan)


def check_delta(metric: str, delta: float | None) -> None:
    """Refuse a drop the metric cannot make: beyond its range (``--delta 2`` on recall@5,
    whose values lie in [0, 1])."""
    from rulegauge.metrics.info import resolve

    if delta is None:
        return
    low, high = resolve(metric).family.bounds
    if math.isfinite(high - low) and delta > high - low:
        raise RulegaugeError(f"--delta {delta:g} is beyond the range of {resolve(metric).name}: its "
                             f"values lie in [{low:g}, {high:g}], so no drop exceeds {high - low:g}")


def _check_bounds(how: Resampling, tests: int, sd: float | None, delta: float | None) -> None:
    """The entry bounds of ``power``'s numbers (:mod:`rulegauge.core.limits`), all reported."""
    found = [("--resamples", count_problem("resamples", how.n_resamples)),
             ("--draws", count_problem("draws", how.draws)), ("--tests", count_problem("tests", tests)),
             ("--sd", real_problem("sd", sd, open_low=True) if sd is not None else None),
             ("--delta", real_problem("delta", delta, open_low=True) if delta is not None else None)]
    problems = [Problem(flag, why) for flag, why in found if why is not None]
    if problems:
        raise ValidationError(problems, "power: a number out of bounds")


def _check_work(how: Resampling, alpha_test: float, n: int) -> None:
    """The resampled MDE's bounds: enough sign patterns to reach ``alpha_test`` (the gate's
    bound, :func:`rulegauge.metrics.resample.resamples_problem`) and bounded work."""
    found = [("--resamples", resamples_problem(how.n_resamples, alpha_test)),
             ("--draws", work_problem("resampled comparisons", {"draws": how.draws,
                                                               "sign patterns": how.n_resamples})),
             ("--draws", work_problem("drawn differences", {"draws": how.draws, "questions": n}))]
    problems = [Problem(flag, why) for flag, why in found if why is not None]
    if problems:
        raise ValidationError(problems, "power: the resampled MDE cannot be computed as asked")
