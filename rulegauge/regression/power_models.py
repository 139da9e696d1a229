"""Power under the model a regression follows: whole questions lost, not a uniform shift.

The resampled MDE (:mod:`rulegauge.regression.power_resample`) models a regression as
every question's paired difference shifted down by ``delta`` (a *uniform shift* of the
noise between neighbour configs). Retrieval regressions rarely look like that: a change
loses the relevant pages of a few questions outright while the rest move as neighbours
do. The same mean drop concentrated on a few questions is harder for the sign-flip test
(its p can never fall below ``2 / 2**k`` when only ``k`` questions differ), so a gate
that detects a uniform shift of its MDE with power 0.8 detects the same mean drop made
of lost questions far less often. This module gives that second model, printed beside
the first by ``rulegauge power`` and the gate:

* **whole-question loss** (:func:`loss_power`): a comparison is ``n`` (question,
  neighbour) pairs drawn with replacement from the grid around the gated config (each
  pair: the config's value ``v`` of the question and the neighbour's centred paired
  difference ``e``, :func:`question_pool`); ``k`` of the drawn questions that have
  something to lose (``v`` above the metric's worst value, its *floor*) lose all their
  relevant pages: their value drops to the floor, their paired difference is
  ``floor - v``; the others keep ``e``. ``draws`` comparisons, each with its own random
  order of the questions it loses, from one local generator.
* **test**: each comparison is tested as the gate tests it, two-sided at ``alpha_test``
  with ``n_resamples`` sign patterns (every pattern when ``2**n <= n_resamples``),
  drawn by the gate's own generator (:func:`rulegauge.metrics.resample.flip_batches`),
  one pattern set per block of draws: the lower-tail count is the number of patterns
  ``F`` (the identity included) with ``sum_F d >= 0`` (a flipped null mean at or below
  the observed one), ``p = 2 (count + add) / (B + add)`` as the gate computes it, and a
  detection is a worsening (mean < 0) with ``p < alpha_test``.
* **the curve**: for every draw the fewest lost questions ``k*`` it is detected at,
  found by bisection over ``k`` (taken to grow with ``k``: a lost question's difference
  ``floor - v`` is almost always below the noise it replaces, and the simulation checks
  the result; a draw not detected with every eligible question lost has ``k* = inf``).
  The power at ``k`` is the share of draws with ``k* <= k``;
  the MDE at ``power`` is the smallest such ``k`` and its mean drop ``k L / n`` with
  ``L`` the mean loss ``v - floor`` over the pool's eligible questions.

The real gate on comparisons planted this way (``rulegauge.testing.loss_simulation``,
``benchmarks/bench_power.py --model loss``) checks the prediction, as the uniform shift's
is checked. Edge cases: a metric without a finite worst value (latency) or a pool with no
question above the floor has no loss model (None); ``n < 1`` or a level the test cannot
reach gives ``k* = inf`` everywhere. References: Efron & Tibshirani, *An Introduction to
the Bootstrap* (1993), ch. 16 (power by resampling); Sakai, "Statistical reform in
information retrieval?", SIGIR Forum 48 (2014); Webber, Moffat & Zobel, "Statistical power
in retrieval experimentation", CIKM 2008 (power against realistic effect shapes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.resample import flip_batches
from rulegauge.regression.neighbours import neighbours
from rulegauge.regression.power_resample import BLOCKS, DRAWS, largest_count

MODELS = {"shift": "uniform shift: every paired difference drawn from the grid's centred "
                   "neighbour differences, shifted down by the drop",
          "loss": "whole-question loss: k drawn questions lose all their relevant pages "
                  "(value to the metric's floor), the others drawn as in the shift model"}
"""The power models, in words: how each says a regression looks."""

_SLICE = 2500  # patterns counted at once: a row whose count passes the limit leaves early


@dataclass(frozen=True)
class QuestionPool:
    """(value, centred difference) pairs around a config: ``values[i]`` is the config's
    value of the question of pair ``i``, ``centred[i]`` a neighbour's paired difference on
    it, centred per neighbour; ``floor`` the metric's worst value, oriented so that higher
    is better (a lower-is-better metric's values and floor are negated)."""

    values: np.ndarray = field(repr=False)
    centred: np.ndarray = field(repr=False)
    floor: float

    @property
    def eligible(self) -> np.ndarray:
        """Pairs whose question has something to lose (value above the floor)."""
        return np.asarray(self.values > self.floor + 1e-12)

    @property
    def mean_loss(self) -> float:
        """``L``: the mean ``value - floor`` over the eligible pairs (NaN when none)."""
        e = self.eligible
        return float(np.mean(self.values[e] - self.floor)) if e.any() else math.nan


def worst_value(bounds: tuple[float, float], *, higher_is_better: bool) -> float:
    """The metric's floor oriented higher-is-better: its lower bound, or its upper bound
    negated for a lower-is-better metric; NaN when that bound is infinite."""
    low, high = bounds
    w = low if higher_is_better else -high
    return w if math.isfinite(w) else math.nan


def question_pool(metrics: pd.DataFrame, configs: pd.DataFrame, config_id: str, metric: str
                  ) -> QuestionPool | None:
    """The :class:`QuestionPool` of the run's grid around ``config_id`` on ``metric``: the
    neighbours of :func:`rulegauge.regression.neighbours.neighbours` that differ from it, each
    neighbour's differences centred (the pool of the ``grid`` SD); None without a
    differing neighbour or a finite floor."""
    from rulegauge.metrics.info import scored_rows

    near = neighbours(configs, config_id)
    info, rows = scored_rows(metrics[metrics["config_id"].isin({config_id, *near})], metric)
    floor = worst_value(info.family.bounds, higher_is_better=bool(info.higher_is_better))
    wide = rows.pivot(index="question_id", columns="config_id", values="value").sort_index()
    if math.isnan(floor) or config_id not in wide:
        return None
    sign = 1.0 if info.higher_is_better else -1.0
    base = sign * wide[config_id].to_numpy(np.float64)
    values, centred = [], []
    for c in near:
        d = sign * wide[c].to_numpy(np.float64) - base if c in wide else np.zeros(0)
        if d.size >= 2 and np.all(np.isfinite(d)) and np.std(d) > 0:
            values.append(base)
            centred.append(d - d.mean())
    if not centred:
        return None
    return QuestionPool(np.concatenate(values), np.concatenate(centred), floor)


def comparison_pool(base: np.ndarray, differences: np.ndarray, metric: str) -> QuestionPool | None:
    """The :class:`QuestionPool` of one comparison's own paired differences (centred) and
    base values (the ``comparison`` SD source); None without a finite floor."""
    from rulegauge.metrics.info import resolve

    info = resolve(metric)
    floor = worst_value(info.family.bounds, higher_is_better=bool(info.higher_is_better))
    if math.isnan(floor) or len(base) < 2:
        return None
    sign = 1.0 if info.higher_is_better else -1.0
    d = sign * np.asarray(differences, dtype=np.float64)
    return QuestionPool(sign * np.asarray(base, dtype=np.float64), d - d.mean(), floor)


@dataclass(frozen=True)
class LossPower:
    """Per draw the fewest lost questions detected (``first``, sorted; inf: never), with
    the inputs that made them (module docstring)."""

    first: tuple[float, ...]
    n: int
    alpha_test: float
    n_resamples: int
    draws: int
    seed: int
    mean_loss: float

    def power(self, k: int) -> float:
        """Share of the drawn comparisons detected with ``k`` questions lost."""
        return float(np.count_nonzero(np.asarray(self.first) <= k)) / self.draws

    def mde_k(self, power: float) -> float:
        """The fewest lost questions detected in at least ``power`` of the draws (inf when
        losing every eligible question is not enough)."""
        k = math.ceil(power * self.draws - 1e-9)
        return self.first[k - 1] if k >= 1 else 0.0

    def drop(self, k: float) -> float:
        """The mean drop of ``k`` lost questions: ``k L / n`` (inf for inf)."""
        return math.inf if math.isinf(k) else k * self.mean_loss / self.n

    def mde(self, power: float) -> float:
        """The mean drop at :meth:`mde_k`."""
        return self.drop(self.mde_k(power))

    def questions_for(self, delta: float) -> int:
        """The lost questions whose mean drop reaches ``delta``: ``ceil(delta n / L)``."""
        return math.ceil(delta * self.n / self.mean_loss - 1e-9)

    def power_at_drop(self, delta: float) -> float:
        """The power when the drop ``delta`` is made of whole lost questions."""
        return self.power(self.questions_for(delta))

    def describe(self) -> str:
        return (f"whole-question loss: {self.draws} draws of {self.n} from the grid's questions, "
                f"mean loss per lost question {self.mean_loss:.3g}, seed {self.seed}")


def _detected(d: np.ndarray, flips: np.ndarray, allowed: int) -> np.ndarray:
    """Per row of ``d``: a worsening whose lower-tail count over the patterns ``flips``
    (the identity included) is at most ``allowed`` (the gate's rejection, module docstring).
    Patterns are counted a slice at a time and a row leaves once its count passes
    ``allowed`` (not detected, whatever the rest say)."""
    f = flips.astype(np.float64).T
    tol = 64 * np.finfo(np.float64).eps * (np.abs(d).sum(axis=1) + 1.0)
    counts = np.zeros(d.shape[0], dtype=np.int64)
    live = np.flatnonzero(d.sum(axis=1) < 0)  # a detection is a worsening
    step = _SLICE
    for k in range(0, f.shape[1], step):
        if live.size == 0:
            break
        counts[live] += np.count_nonzero(d[live] @ f[:, k:k + step] >= -tol[live, None], axis=1)
        live = live[counts[live] <= allowed]
    out = np.zeros(d.shape[0], dtype=bool)
    out[live] = True
    return out


def _fewest(rank: np.ndarray, loss: np.ndarray, noise: np.ndarray, most: np.ndarray,
            flips: np.ndarray, allowed: int) -> np.ndarray:
    """Per row (a drawn comparison): the fewest questions lost, in ``rank`` order, whose
    differences are detected (bisection over ``k``); inf when losing ``most`` is not enough."""
    def detect(rows: np.ndarray, k: np.ndarray) -> np.ndarray:
        d = np.where(rank[rows] < k[:, None], loss[rows], noise[rows])
        return _detected(d, flips, allowed)

    out = np.full(rank.shape[0], math.inf)
    rows = np.flatnonzero(detect(np.arange(rank.shape[0]), most))
    lo, hi = np.full(rows.size, -1), most[rows].copy()  # not detected at lo, detected at hi
    while np.any(hi - lo > 1):
        live = hi - lo > 1
        mid = (lo + hi) // 2
        hit = detect(rows[live], mid[live])
        hi[live] = np.where(hit, mid[live], hi[live])
        lo[live] = np.where(hit, lo[live], mid[live])
    out[rows] = hi
    return out


def loss_power(pool: QuestionPool, n: int, alpha_test: float, *, n_resamples: int = 10_000,
               draws: int = DRAWS, seed: int = 0, batch: int = 10_000) -> LossPower:
    """:class:`LossPower` of the gate's permutation test over ``n`` questions when whole
    questions of ``pool`` are lost (module docstring). Raises :class:`RulegaugeError` for an
    empty or non-finite pool, no question above the floor, ``n < 1`` or alpha outside (0, 1)."""
    values = np.array(pool.values, dtype=np.float64)
    centred = np.array(pool.centred, dtype=np.float64)
    if values.size == 0 or values.shape != centred.shape or not (
            np.all(np.isfinite(values)) and np.all(np.isfinite(centred))):
        raise RulegaugeError("whole-question loss: the pool must pair finite values and differences")
    if not pool.eligible.any():
        raise RulegaugeError("whole-question loss: no question of the pool is above the metric's floor")
    if n < 1 or draws < 1 or n_resamples < 1 or not 0.0 < alpha_test < 1.0:
        raise RulegaugeError(f"whole-question loss: n, draws and n_resamples must be >= 1 and alpha in "
                             f"(0, 1), got {n}, {draws}, {n_resamples}, {alpha_test!r}")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, values.size, size=(draws, n))
    v, e = values[idx], centred[idx]
    loss = pool.floor - v
    eligible = v > pool.floor + 1e-12
    keys = np.where(eligible, rng.random((draws, n)), np.inf)
    rank = np.argsort(np.argsort(keys, axis=1, kind="stable"), axis=1)  # loss order per draw
    most = eligible.sum(axis=1)
    first = np.full(draws, math.inf)
    # small products, many of them: BLAS threads cost more than they give (7x the CPU on
    # two busy cores); one thread, restored after
    with threadpool_limits(1, user_api="blas"):
        for block in np.array_split(np.arange(draws), min(BLOCKS, draws)):
            batches, exact = flip_batches(n, n_resamples, rng, batch)
            allowed = largest_count(alpha_test, 2 ** n if exact else n_resamples, 0 if exact else 1)
            if allowed >= 0:
                first[block] = _fewest(rank[block], loss[block], e[block], most[block],
                                       np.concatenate(list(batches)), allowed)
    return LossPower(tuple(np.sort(first).tolist()), n, alpha_test, n_resamples, draws, seed,
                     pool.mean_loss)
