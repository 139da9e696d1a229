"""Simulated power of the real gate: plant a drop in resampled questions, count detections.

The gate's MDE (:mod:`rulegauge.regression.power`: the permutation test's by resampling,
or the paired t-test's) predicts how often a drop of ``delta`` is detected.
:func:`simulate` checks that prediction on a real run with the gate itself
(:func:`rulegauge.regression.gate.run_gate` on a policy parsed by
:func:`rulegauge.regression.policy.parse_policy`: its paired sign-flip permutation test,
its multiplicity rule and its significance check), not a re-implementation:

1. **Differences**: the paired differences of the run's config and each of its grid
   neighbours (:func:`rulegauge.regression.neighbours.neighbours`, the configs the gate's
   ``grid`` SD estimate pools), each neighbour's centred on its mean (the null: no
   change on average), identical neighbours left out, pooled. Their root mean square
   ``sd`` is the true SD of the simulated differences.
2. **Plant**: per replicate, ``n`` (question, neighbour) pairs are drawn with replacement
   from the pool (``n`` the run's questions in the metric's scope); the base side holds
   the config's values of the drawn questions, the candidate side the same values plus
   the drawn centred differences minus ``delta``. Only the differences enter the test,
   so values outside the metric's range (a recall above 1) change nothing.
3. **Gate**: a policy ``[gate] config, alpha, n_resamples, seed`` and one metric with
   ``alpha`` (family size 1) is run on the two sides; a detection is its significance
   check failing (a worsening with adjusted p < alpha).

**Whole questions lost** (:func:`simulate_loss`, the model of
:func:`rulegauge.regression.power_models.loss_power`): step 2 plants no shift; instead ``k``
of the drawn questions whose value is above the metric's floor (at most all of them) are
chosen at random and the candidate's value of each is set to the floor (they lost every
relevant page), ``k`` the fewest lost questions the model detects at the target power.

For each target power, ``delta`` is the MDE at that power as the gate prints it:
``method="resampled"`` (the default, the gate's ``[gate] power_method``), the permutation
test's MDE by resampling the same pool
(:func:`rulegauge.regression.power_resample.resampled_power` with the gate's
``n_resamples``, ``seed`` and 2,000 draws of its own), planted inside the step of the
power curve that reaches the target (``ResampledPower.inside``: the power is the MDE's,
and no drawn comparison ties the null);
``method="t-test"``, the t-test's MDE at the pool's true ``sd``. The detection rate over
``n_sims`` replicates is compared with the predicted power, with the binomial standard
error ``sqrt(p (1 - p) / n_sims)``; the t-test's power at the planted drop is kept beside
it (``t_predicted``). One local generator
(``numpy.random.default_rng(seed)``) draws every replicate; replicate ``i`` runs the gate
with seed ``seed + i``. References: Sakai, "Topic set size design", Information
Retrieval Journal 19 (2016); Webber, Moffat & Zobel, "Statistical power in retrieval
experimentation", CIKM 2008.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.info import scored_rows
from rulegauge.regression.gate import Status, run_gate
from rulegauge.regression.neighbours import neighbours
from rulegauge.regression.policy import parse_policy
from rulegauge.regression.power import Resampling, mde, ttest_power
from rulegauge.regression.power_models import QuestionPool, loss_power, worst_value
from rulegauge.regression.power_resample import resampled_power

TARGETS = (0.5, 0.8, 0.95)


class MemorySide:
    """A side held in memory (the :class:`rulegauge.store.baseline.Side` protocol): a
    complete run with one ``metrics`` table and the identity of the run it came from."""

    def __init__(self, run_id: str, manifest: dict[str, Any], metrics: pd.DataFrame) -> None:
        self._run_id, self.manifest, self._metrics = run_id, manifest, metrics

    @property
    def run_id(self) -> str:
        return self._run_id

    def has_table(self, name: str) -> bool:
        return name == "metrics"

    def table(self, name: str) -> pd.DataFrame:
        if name != "metrics":
            raise RulegaugeError(f"side {self._run_id} holds only the metrics table, not {name!r}")
        return self._metrics


@dataclass(frozen=True)
class DifferencePool:
    """Step 1: the centred paired differences around ``config`` and the config's values
    of the questions they belong to (``base``, same order)."""

    run_id: str
    metric: str
    config: str
    n: int  # questions in the metric's scope: the gold set's size for the test
    neighbours: tuple[str, ...]
    differences: np.ndarray
    base: np.ndarray
    differing: int = 0  # paired differences that were not 0 before centring

    @property
    def sd(self) -> float:
        """The true SD of a drawn difference (the pool's mean is 0: root mean square)."""
        return float(np.sqrt(np.mean(self.differences ** 2)))


@dataclass(frozen=True)
class SimulatedPower:
    """One target: the planted ``delta``, the predicted power, the real gate's detections
    over ``n_sims`` replicates, and the analytic reference (the one-sided-worse paired
    t-test at the same level, vectorised) on those same replicates (``t_same``, with
    ``discordant`` replicates where it and the gate decide differently) and on
    ``n_control`` more drawn the same way (``t_control``)."""

    target: float
    delta: float
    predicted: float
    detected: int
    n_sims: int
    t_same: int = 0
    discordant: int = 0
    t_control: int = 0
    n_control: int = 0
    method: str = "t-test"
    t_predicted: float = math.nan  # the paired t-test's power at the planted delta
    lost: int = -1  # whole-question loss: the questions planted as lost (-1: a shift)

    @property
    def observed(self) -> float:
        """The gate's detection rate."""
        return self.detected / self.n_sims

    @property
    def se(self) -> float:
        """Binomial standard error of :attr:`observed` at the predicted power."""
        return math.sqrt(self.predicted * (1.0 - self.predicted) / self.n_sims)

    @property
    def gap(self) -> float:
        """observed - predicted, in power units (0.05 = 5 points)."""
        return self.observed - self.predicted

    @property
    def controlled(self) -> float:
        """The gate's rate by control variate: the t-test's rate over the large control
        set plus the gate-minus-t difference on the shared replicates (same expectation
        as :attr:`observed`, a smaller error when the two tests mostly agree); NaN without
        a control set."""
        if not self.n_control:
            return math.nan
        return self.t_control / self.n_control + (self.detected - self.t_same) / self.n_sims

    @property
    def controlled_se(self) -> float:
        """Standard error of :attr:`controlled`: the paired difference's variance over
        ``n_sims`` plus the control rate's binomial variance over ``n_control``."""
        if not self.n_control:
            return math.nan
        q = (self.detected - self.t_same) / self.n_sims
        var_d = max(0.0, self.discordant / self.n_sims - q * q) / self.n_sims
        r = self.t_control / self.n_control
        return math.sqrt(var_d + r * (1.0 - r) / self.n_control)


def t_detections(d: np.ndarray, alpha: float) -> np.ndarray:
    """Per row of ``d`` (replicates x questions): does the two-sided paired t-test at
    ``alpha`` find a significant worsening (mean < 0)? Rows with SD 0 never do."""
    from rulegauge.regression.tdist import t_isf

    n = d.shape[1]
    mean = d.mean(axis=1)
    sd = d.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / math.sqrt(n))
    return np.asarray((sd > 0) & (t < -t_isf(alpha / 2.0, n - 1)))


def difference_pool(run: Any, metric: str, config: str) -> DifferencePool:
    """:class:`DifferencePool` of ``run`` (a :class:`rulegauge.store.rundir.Run`) around
    ``config``; raises :class:`RulegaugeError` when no neighbour differs from it."""
    configs = run.table("configs")
    near = neighbours(configs, config)
    _, rows = scored_rows(run.table("metrics"), metric)
    wide = rows.pivot(index="question_id", columns="config_id", values="value").sort_index()
    if config not in wide:
        raise RulegaugeError(f"config {config!r} has no {metric} rows in run {run.run_id}")
    base = wide[config].to_numpy(np.float64)
    diffs, bases, used, differing = [], [], [], 0
    for c in near:
        d = (wide[c].to_numpy(np.float64) - base) if c in wide else np.zeros(0)
        if d.size >= 2 and np.all(np.isfinite(d)) and np.std(d) > 0:
            diffs.append(d - d.mean())
            differing += int(np.count_nonzero(d))
            bases.append(base)
            used.append(c)
    if not diffs:
        raise RulegaugeError(f"no grid neighbour of {config} differs from it on {metric} in run "
                             f"{run.run_id}: nothing to resample")
    return DifferencePool(str(run.run_id), metric, config, len(base), tuple(used),
                          np.concatenate(diffs), np.concatenate(bases), differing)


def _policy(pool: DifferencePool, alpha: float, n_resamples: int) -> Any:
    # the MDE the gate prints does not change its decision: the t-test's is instant
    return parse_policy({"gate": {"config": pool.config, "alpha": alpha,
                                  "n_resamples": n_resamples, "power_method": "t-test"},
                         "metrics": {pool.metric: {"alpha": alpha}}}, "<simulation>")


def _side(run_id: str, manifest: dict[str, Any], pool: DifferencePool, values: np.ndarray,
          qids: list[str]) -> MemorySide:
    frame = pd.DataFrame({"run_id": run_id, "question_id": qids, "config_id": pool.config,
                          "metric": pool.metric, "value": values, "answerable": True})
    return MemorySide(run_id, manifest, frame)


def _planted(pool: DifferencePool, target: float, alpha: float, method: str,
             resampling: Resampling) -> tuple[float, float]:
    """(the drop to plant, its predicted power) at ``target`` by ``method``."""
    if method == "t-test":
        delta = mde(pool.sd, pool.n, target, alpha)
        return delta, ttest_power(delta, pool.sd, pool.n, alpha)
    found = resampled_power(pool.differences, pool.n, alpha, n_resamples=resampling.n_resamples,
                            draws=resampling.draws, seed=resampling.seed)
    delta = found.inside(target)  # inside the step, not on a tie (ResampledPower.inside)
    return delta, found.power(delta)


#: the simulated gate's default: 2,000 sign patterns, seed 0 (the bench's settings)
GATE_RESAMPLING = Resampling(2000, 0)


def simulate(pool: DifferencePool, targets: tuple[float, ...] = TARGETS, *, n_sims: int = 400,
             resampling: Resampling = GATE_RESAMPLING, alpha: float = 0.05,
             n_control: int = 0, manifest: dict[str, Any] | None = None,
             method: str = "resampled") -> tuple[SimulatedPower, ...]:
    """Per target power: the planted MDE, predicted power (by ``method``), the real gate's
    detections over ``n_sims`` replicates (module docstring) and the t-test's on them and
    on ``n_control`` more. ``resampling``: the gate's ``n_resamples`` and ``seed`` (and the
    prediction's draws); ``manifest``: the identity both sides carry (default: a complete
    run with placeholder hashes)."""
    if n_sims < 1 or n_control < 0:
        raise RulegaugeError(f"n_sims must be >= 1 and n_control >= 0, got {n_sims}, {n_control}")
    if method not in ("resampled", "t-test"):
        raise RulegaugeError(f"method must be resampled or t-test, got {method!r}")
    # ``resampling`` is the gate's n_resamples and seed: the prediction it prints is by them
    n_resamples, seed = resampling.n_resamples, resampling.seed
    man = dict(manifest or {"goldset": {"sha256": "simulated"},
                            "corpus": {"content_hash": "simulated"}}, status="complete")
    policy = _policy(pool, alpha, n_resamples)
    rng = np.random.default_rng(seed)
    qids = [f"q{i:05d}" for i in range(pool.n)]
    out = []
    for target in targets:
        delta, predicted = _planted(pool, target, alpha, method, resampling)
        draws = rng.integers(0, pool.differences.size, size=(n_sims, pool.n))
        gate = np.zeros(n_sims, dtype=bool)
        for i, idx in enumerate(draws):
            b = pool.base[idx]
            c = b + pool.differences[idx] - delta
            result = run_gate(replace(policy, seed=seed + i),
                              _side("base", man, pool, b, qids), _side("candidate", man, pool, c, qids))
            gate[i] = any(ch.kind == "alpha" and ch.status is Status.FAIL for ch in result.checks)
        same = t_detections(pool.differences[draws] - delta, alpha)
        control = (t_detections(pool.differences[rng.integers(0, pool.differences.size,
                                                              size=(n_control, pool.n))] - delta,
                                alpha) if n_control else np.zeros(0, dtype=bool))
        out.append(SimulatedPower(target, delta, predicted, int(gate.sum()), n_sims,
                                  int(same.sum()), int(np.count_nonzero(gate != same)),
                                  int(control.sum()), n_control, method,
                                  ttest_power(delta, pool.sd, pool.n, alpha)))
    return tuple(out)


def loss_pool(pool: DifferencePool) -> QuestionPool:
    """The :class:`rulegauge.regression.power_models.QuestionPool` of a difference pool (a
    higher-is-better metric with a finite floor; raises otherwise)."""
    from rulegauge.metrics.info import resolve

    info = resolve(pool.metric)
    floor = worst_value(info.family.bounds, higher_is_better=bool(info.higher_is_better))
    if not info.higher_is_better or math.isnan(floor):
        raise RulegaugeError(f"{pool.metric}: whole-question loss is simulated for a higher-is-better "
                             "metric with a finite floor")
    return QuestionPool(pool.base, pool.differences, floor)


def _lost(pool: DifferencePool, floor: float, k: float, rng: np.random.Generator,
          size: int) -> tuple[np.ndarray, np.ndarray]:
    """(base, candidate) values of ``size`` replicates: ``n`` drawn pairs each, ``k`` of
    the questions above the floor (at most all) set to the floor on the candidate side."""
    idx = rng.integers(0, pool.differences.size, size=(size, pool.n))
    b = pool.base[idx]
    c = b + pool.differences[idx]
    keys = np.where(b > floor + 1e-12, rng.random(b.shape), np.inf)
    rank = np.argsort(np.argsort(keys, axis=1, kind="stable"), axis=1)
    c = np.where((rank < k) & np.isfinite(keys), floor, c)
    return b, c


def simulate_loss(pool: DifferencePool, targets: tuple[float, ...] = TARGETS, *, n_sims: int = 400,
                  resampling: Resampling = GATE_RESAMPLING, alpha: float = 0.05,
                  n_control: int = 0, manifest: dict[str, Any] | None = None
                  ) -> tuple[SimulatedPower, ...]:
    """Per target power: the fewest lost questions the whole-question-loss model detects
    at it (``k``, planted; ``delta`` its mean drop), the model's power at ``k``, and the
    real gate's detections over ``n_sims`` replicates with ``k`` questions lost (module
    docstring), the t-test's on them and on ``n_control`` more. Replicate ``i`` runs the gate
    with seed ``resampling.seed + i``; a target the model never reaches is left out."""
    if n_sims < 1 or n_control < 0:
        raise RulegaugeError(f"n_sims must be >= 1 and n_control >= 0, got {n_sims}, {n_control}")
    qpool = loss_pool(pool)
    found = loss_power(qpool, pool.n, alpha, n_resamples=resampling.n_resamples,
                       draws=resampling.draws, seed=resampling.seed)
    man = dict(manifest or {"goldset": {"sha256": "simulated"},
                            "corpus": {"content_hash": "simulated"}}, status="complete")
    policy = _policy(pool, alpha, resampling.n_resamples)
    rng = np.random.default_rng(resampling.seed)
    qids = [f"q{i:05d}" for i in range(pool.n)]
    out = []
    for target in targets:
        k = found.mde_k(target)
        if math.isinf(k):
            continue
        b, c = _lost(pool, qpool.floor, k, rng, n_sims)
        gate = np.zeros(n_sims, dtype=bool)
        for i in range(n_sims):
            result = run_gate(replace(policy, seed=resampling.seed + i),
                              _side("base", man, pool, b[i], qids), _side("candidate", man, pool, c[i], qids))
            gate[i] = any(ch.kind == "alpha" and ch.status is Status.FAIL for ch in result.checks)
        same = t_detections(c - b, alpha)
        control = np.zeros(0, dtype=bool)
        if n_control:
            cb, cc = _lost(pool, qpool.floor, k, rng, n_control)
            control = t_detections(cc - cb, alpha)
        out.append(SimulatedPower(target, found.drop(k), found.power(int(k)), int(gate.sum()), n_sims,
                                  int(same.sum()), int(np.count_nonzero(gate != same)),
                                  int(control.sum()), n_control, "loss", math.nan, int(k)))
    return tuple(out)
