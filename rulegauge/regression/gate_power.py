"""The gate's detectable effects: per gated metric, its MDE at the policy's power, per model.

:func:`gate_power` gives every gated metric a :class:`rulegauge.regression.power.MetricPower`:
the SD of paired differences from the policy's stated ``sd``, else its ``sd_source``
(``grid``: the baseline's grid around the gated base config, else the candidate's around
its config; ``comparison``: this comparison's own differences, also the fallback when the
grid has no differing neighbour), the level alpha divided by the family size, the
policy's ``power``, and two MDEs of the gate's own permutation test with the policy's
``n_resamples`` and ``seed``, each stated with its model
(:data:`rulegauge.regression.power_models.MODELS`): the *uniform shift* by resampling
those differences (``[gate] power_method = "resampled"``, the default; a stated SD has no
differences and gets the t-test's) and *whole-question loss*: how many questions must
lose all their relevant pages, and the drop that makes
(:func:`rulegauge.regression.power_models.loss_power`; not with ``power_method = "t-test"``,
which resamples nothing). The baseline's grid comes first
because it is the same for every candidate gated against it: both models are computed
once per baseline and policy and kept (:mod:`rulegauge.regression.power_cache`). The
questions needed for ``max_drop`` are the t-test's, never fewer than the sign-flip test
needs to reject at all (:func:`rulegauge.metrics.reach.smallest_n`). A median aggregate
has no MDE (NaN, with a note). Method: :mod:`rulegauge.regression.power`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.reach import smallest_n
from rulegauge.regression.compare import Comparison, MetricComparison
from rulegauge.regression.pairing import ConfigPair
from rulegauge.regression.policy import MetricPolicy, Policy
from rulegauge.regression.power import (
    MetricPower,
    Resampling,
    SdEstimate,
    differences_sd,
    grid_sd,
    metric_power,
)
from rulegauge.regression.power_cache import cached_loss
from rulegauge.regression.power_models import QuestionPool, comparison_pool, question_pool
from rulegauge.store.baseline import Side


def _only(comparison: Comparison, pair: ConfigPair, metric: str) -> MetricComparison:
    found = [m for m in comparison.metrics if m.config == pair and m.metric == metric]
    if len(found) != 1:
        raise RulegaugeError(f"metric {metric} is compared {len(found)} times for {pair.label}")
    return found[0]


def _sd_estimate(mp: MetricPolicy, m: MetricComparison, source: str, pair: ConfigPair,
                 sides: tuple[Side, Side]) -> tuple[SdEstimate | None, str, QuestionPool | None]:
    """The SD of the paired differences for one metric's MDE, a note when none, and the
    whole-question-loss pool of the same differences: the policy's stated ``sd`` (no
    pool), else ``source`` (``grid``: the baseline's grid around the gated base config,
    else the candidate's; ``comparison``: this comparison's differences)."""
    if mp.sd is not None:
        return SdEstimate(mp.sd, "stated", f"metrics.{mp.metric}.sd in the policy"), "", None
    if source == "grid":
        for side, cid in ((sides[0], pair.base), (sides[1], pair.candidate)):
            if side.has_table("configs") and side.has_table("metrics") and (
                    side.table("metrics")["metric"] == m.metric).any():
                metrics, configs = side.table("metrics"), side.table("configs")
                est = grid_sd(metrics, configs, cid, m.metric)
                if est is not None:
                    return est, "", question_pool(metrics, configs, cid, m.metric)
        why = "no grid neighbour of the gated config differs from it"
    else:
        why = "every paired difference of this comparison is equal"
    b = np.array([b for _, b, _ in m.values], dtype=np.float64)
    d = np.array([c - b for _, b, c in m.values], dtype=np.float64)
    est = differences_sd(d, f"{pair.label}, base {sides[0].run_id} vs candidate {sides[1].run_id}")
    if est is not None:
        return est, (f"{why}; the comparison's own differences used" if source == "grid" else ""), \
            comparison_pool(b, d, m.metric)
    return None, f"{why}; state one: [metrics.\"{mp.metric}\"] sd = ...", None


def _with_loss(w: MetricPower, pool: QuestionPool | None, policy: Policy) -> MetricPower:
    """``w`` with its whole-question-loss MDE (kept per baseline: power_cache) and the
    questions needed never below the sign-flip test's smallest n."""
    floor = smallest_n(w.alpha_test, policy.n_resamples)
    needed = w.needed if w.needed is None or floor is None else max(w.needed, floor)
    if pool is None or not pool.eligible.any() or w.n < 1 or policy.power_method != "resampled":
        return replace(w, needed=needed)  # t-test: analytic figures only, nothing resampled
    found = cached_loss(pool, w.n, w.alpha_test, n_resamples=policy.n_resamples,
                        seed=policy.seed)
    k = found.mde_k(policy.power)
    return replace(w, needed=needed, loss_k=k, loss_mde=found.drop(k))


class _Read:
    """A side whose tables are read once (a table read is a Parquet read)."""

    def __init__(self, side: Side) -> None:
        self.side, self.run_id, self.manifest = side, side.run_id, side.manifest
        self._tables: dict[str, pd.DataFrame] = {}

    def has_table(self, name: str) -> bool:
        return self.side.has_table(name)

    def table(self, name: str) -> pd.DataFrame:
        if name not in self._tables:
            self._tables[name] = self.side.table(name)
        return self._tables[name]


def gate_power(policy: Policy, comparison: Comparison, pair: ConfigPair,
               sides: tuple[Side, Side]) -> tuple[MetricPower, ...]:
    """Every gated metric's MDE (mean aggregates only: a median has no t-test MDE) at its
    alpha (or 0.05) divided by the family size, with the policy's power."""
    out = []
    sides = (_Read(sides[0]), _Read(sides[1]))  # each table read once, not once per metric
    resampling = (Resampling(policy.n_resamples, policy.seed)
                  if policy.power_method == "resampled" else None)
    unpaired = {u.split(" (")[0] for u in comparison.unpaired}  # not on both sides: no check, no MDE
    for mp in policy.metrics:
        if mp.metric in unpaired:
            continue
        m = comparison.find(mp.metric, pair, policy.answerer) or _only(comparison, pair, mp.metric)
        alpha = mp.alpha if mp.alpha is not None else policy.family_alpha
        if m.aggregate != "mean":
            out.append(replace(metric_power(m.label, m.n, None, alpha=alpha, family_size=1,
                                            power=policy.power, max_drop=mp.max_drop),
                               note=f"{m.aggregate} aggregate: no t-test MDE"))
            continue
        est, note, pool = _sd_estimate(mp, m, policy.sd_source, pair, sides)
        found = metric_power(m.label, m.n, est, alpha=alpha, family_size=max(1, comparison.family.size),
                             power=policy.power, max_drop=mp.max_drop, resampling=resampling)
        out.append(_with_loss(replace(found, note=note), pool, policy))
    return tuple(out)


def require_mde(policy: Policy, powers: tuple[MetricPower, ...]) -> None:
    """With ``[gate] require_mde``, raise :class:`RulegaugeError` (exit 2) naming every gated
    metric whose MDE exceeds its ``max_drop`` or that has no SD estimate, with the questions
    detecting ``max_drop`` would need; without it, nothing."""
    short = [w for w in powers if w.mde_ok is False]
    unknown = [f"{w.metric}: {w.note or 'no SD estimate'}" for w in powers
               if w.max_drop is not None and w.mde_ok is None]
    if not policy.require_mde or not (short or unknown):
        return
    detail = "; ".join(
        [f"{w.metric}: MDE {w.mde:.4g} ({w.method}) > max_drop {w.max_drop or 0.0:.4g} "
         f"({w.estimate.describe() if w.estimate else ''}, n {w.n}, power {w.power:g}, "
         f"alpha per test {w.alpha_test:.4g}; detecting max_drop needs "
         f"{w.needed or 'more than 10^7'} questions by the t-test)" for w in short] + unknown)
    raise RulegaugeError(f"policy requires mde <= max_drop ([gate] require_mde): the gold set is "
                         f"too small to see the drops the policy guards against: {detail}")
