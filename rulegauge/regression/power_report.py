"""The `rulegauge power` report: the detectable effect of a run's gold set (Sakai's topic-set size).

Method: :mod:`rulegauge.regression.power` (the paired t-test, the SD estimates) and
:mod:`rulegauge.regression.power_resample` (the gate's permutation test by resampling)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rulegauge.core.errors import Problem, RulegaugeError, ValidationError
from rulegauge.core.limits import count_problem, real_problem, work_problem
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
from rulegauge.regression.power_resample import ResampledPower, resampled_power


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

    def summary_rows(self) -> list[tuple[str, str]]:
        rows = [("run", self.run_id), ("metric", self.metric), ("config", self.config),
                ("questions in scope (n)", str(self.n)),
                ("alpha (two-sided)", f"{self.alpha:g}"),
                ("tests in the family", str(self.tests)),
                ("alpha per test", f"{self.alpha_test:.4g}"),
                ("SD of paired differences", self.estimate.describe()),
                (f"MDE at power {self.power:g} (the gate's permutation test, resampled)",
                 f"{self.resampled_mde:.4g} ({self.resampling})" if self.resampled else
                 "n/a: a stated --sd has no differences to resample"),
                (f"MDE at power {self.power:g} (paired t-test)", f"{self.mde:.4g}"),
                (f"MDE at power {self.power:g} (normal approximation)", f"{self.normal_mde:.4g}")]
        if self.delta is not None:
            if self.resampled is not None:
                rows.append((f"power to detect a drop of {self.delta:g} with n = {self.n} "
                             "(permutation test, resampled)",
                             f"{self.resampled_power_at_delta:.3f} (SE "
                             f"{self.resampled.se(self.delta):.3f})"))
            rows += [(f"power to detect a drop of {self.delta:g} with n = {self.n} (paired t-test)",
                      f"{self.power_at_delta:.3f}"),
                     (f"questions needed for a drop of {self.delta:g} at power {self.power:g} "
                      "(paired t-test)",
                      "more than 10^7" if self.needed is None else str(self.needed))]
        return rows


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
    if est.centred is not None and n >= 1:  # the permutation test's MDE is resampled
        _check_work(how, a, n)
    deltas = sorted({0.02, 0.05, 0.10, *((delta,) if delta is not None else ())})
    sizes = tuple((d, power, sample_size(d, est.sd, power, a)) for d in deltas)
    found = (resampled_power(est.centred, n, a, n_resamples=how.n_resamples, draws=how.draws,
                             seed=how.seed) if est.centred is not None and n >= 1 else None)
    return PowerReport(
        str(run.run_id), info.name, config, n, alpha, tests, a, power, est,  # type: ignore[attr-defined]
        mde(est.sd, n, power, a), normal_mde(est.sd, n, power, a), delta,
        ttest_power(delta, est.sd, n, a) if delta is not None else math.nan,
        sample_size(delta, est.sd, power, a) if delta is not None else None, sizes,
        found.mde(power) if found else math.nan,
        found.power(delta) if found and delta is not None else math.nan, found,
        found.describe() if found else "")


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
