"""The regression gate: a policy's checks evaluated on a comparison.

Every key of a metric's policy is one check (:data:`CHECKS`, in this order):

* ``floor``: the candidate's aggregate is no worse than the floor -> OK, else FAIL.
* ``max_drop`` / ``max_drop_relative``: worsening of the aggregate (metric units /
  fraction of ``|base|``): none -> OK, up to the limit -> WITHIN_TOLERANCE, beyond -> FAIL.
  A zero base with any worsening is an infinite relative drop.
* ``max_increase`` (lower-is-better metrics: search and answer latency): the limit in
  percent of the base (50 = +50%), checked as ``max_drop_relative`` is (the increase is
  the worsening): none -> OK, up to the limit -> WITHIN_TOLERANCE, beyond -> FAIL.
  Latency metrics aggregate by median and 95th percentile, so one slow call moves
  neither (:mod:`rulegauge.metrics.latency`).
* ``alpha`` (metric or ``[gate]``): a worsening whose adjusted p-value (the policy's
  ``adjustment``, Holm by default, over the policy's ``family``:
  :mod:`rulegauge.metrics.multiplicity`) is below alpha -> FAIL; a worsening that is not
  significant -> WITHIN_TOLERANCE; no worsening -> OK. A worsening that cannot be tested
  (e.g. +inf values) -> FAIL.
* ``max_worse``: a count: no question worse -> OK, at most that many -> WITHIN_TOLERANCE,
  more -> FAIL, naming them ("at most 1 question may lose its first relevant page").
* ``pinned``: one check per question: not worse than in the base -> OK, worse -> FAIL.
  A question pinned on ``hit@k`` that has several requirements gets a note
  (:func:`pin_notes`): its hit survives on any one relevant page, so an errata page
  can be lost while the pin holds (the errata trap, ``docs/gate.md``); pin
  ``recall@k`` to keep every requirement.

With ``base_answerer``/``candidate_answerer`` in the policy the answer metrics
compare one answerer with another, in one run or across runs
(:mod:`rulegauge.regression.answerer_view`), never over error rows.

Floors and drop limits are met up to :data:`EPS` (1e-9) of floating-point slack.

Beside the checks, every gated metric gets its minimum detectable effect
(:mod:`rulegauge.regression.power`): the smallest drop this gold set detects at the
metric's alpha (divided by the family size) with the policy's ``power``, printed beside
its ``max_drop``; with ``require_mde = true`` a metric whose MDE exceeds its
``max_drop`` is bad input (exit 2): the gold set cannot see the drop the policy guards.

The policy's ``[overlap]`` and ``[slices.NAME]`` add their checks after these
(:mod:`rulegauge.regression.slices`); a gold set that gained or lost questions is gated on
the questions both runs share (:mod:`rulegauge.regression.grown`), and a baseline's
``expected.yaml`` must agree with its tables (:mod:`rulegauge.regression.expected`).

"Worse" follows the metric's direction. FAIL messages name the questions that got
worse. Exit codes: 0 every check OK or within tolerance, 1 a check failed, 2 bad
input (malformed policy, unknown config, metric or question: :class:`RulegaugeError`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from rulegauge.core.errors import RulegaugeError
from rulegauge.core.registry import Registry
from rulegauge.metrics.multiplicity import flagged
from rulegauge.regression.compare import Comparison, MetricComparison, compare_runs
from rulegauge.regression.completeness import check_gateable
from rulegauge.regression.expected import check_expected
from rulegauge.regression.gate_pair import gate_pair, has_answer_metric
from rulegauge.regression.gate_power import gate_power, require_mde
from rulegauge.regression.grown import grown_goldset
from rulegauge.regression.llm_admission import llm_kappa_check, llm_notes, llm_only_pairs
from rulegauge.regression.overlap import PairOverlap
from rulegauge.regression.pairing import (
    ConfigPair,
    against_reference,
    comparable,
    resolve_config_pairs,
)
from rulegauge.regression.pins import pin_notes
from rulegauge.regression.policy import MetricPolicy, Policy
from rulegauge.regression.power import MetricPower
from rulegauge.regression.unjudged import unjudged_notes
from rulegauge.store.baseline import Side

if TYPE_CHECKING:  # slices evaluates its checks through this module
    from rulegauge.regression.slices import SliceOutcome

EXIT_PASS, EXIT_REGRESSION, EXIT_BAD_INPUT = 0, 1, 2
# Limits are met up to this rounding slack: 1.0 - 19/20 is 0.05000000000000004, and a
# policy allowing a drop of 0.05 means one question in twenty.
EPS = 1e-9
_NAMED = 10  # questions named in a message; the check keeps all of them


class Status(Enum):
    OK = "ok"
    WITHIN_TOLERANCE = "within tolerance"
    FAIL = "fail"


@dataclass(frozen=True)
class Check:
    """One evaluated check. ``expected``/``measured`` are for people (rounded);
    ``expected_value``/``measured_value`` keep full precision (None: not numeric)."""

    name: str
    metric: str
    kind: str
    status: Status
    expected: str
    measured: str
    message: str
    expected_value: float | None = None
    measured_value: float | None = None
    questions: tuple[str, ...] = ()
    slice: str = ""  # the policy's slice the check belongs to ("": every question)


@dataclass(frozen=True)
class GateResult:
    policy: str
    pair: ConfigPair
    checks: tuple[Check, ...]
    comparison: Comparison
    notes: tuple[str, ...] = ()
    power: tuple[MetricPower, ...] = ()  # per gated metric: its MDE beside max_drop
    slices: tuple[SliceOutcome, ...] = ()  # per [slices.NAME]: its questions, comparison, checks
    overlap: PairOverlap | None = None  # [overlap]: RBO and Jaccard of the gated config's lists

    @property
    def passed(self) -> bool:
        return all(c.status is not Status.FAIL for c in self.checks)

    @property
    def exit_code(self) -> int:
        return EXIT_PASS if self.passed else EXIT_REGRESSION

    def failures(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.status is Status.FAIL)

    def count(self, status: Status) -> int:
        return sum(1 for c in self.checks if c.status is status)


def _f(x: float) -> str:
    return f"{x:.4g}"


def _named(qids: tuple[str, ...]) -> str:
    more = f" (+{len(qids) - _NAMED} more)" if len(qids) > _NAMED else ""
    return ", ".join(qids[:_NAMED]) + more


def _worse_on(m: MetricComparison) -> str:
    return f"; worse on {_named(m.worse)}" if m.worse else ""


def _floor(p: MetricPolicy, m: MetricComparison, alpha: float | None) -> list[Check]:
    if p.floor is None:
        return []
    op = ">=" if m.higher_is_better else "<="
    v = m.candidate_value
    ok = not math.isnan(v) and (v >= p.floor - EPS if m.higher_is_better else v <= p.floor + EPS)
    msg = (f"{m.label} {m.aggregate} {_f(v)} {'meets' if ok else 'misses'} the floor "
           f"{op} {_f(p.floor)}" + ("" if ok else _worse_on(m)))
    return [Check(f"{m.label} floor", m.metric, "floor", Status.OK if ok else Status.FAIL,
                  f"{op} {_f(p.floor)}", _f(v), msg, p.floor, v, () if ok else m.worse)]


def _drop_check(kind: str, limit: float | None, m: MetricComparison, drop: float,
                unit: str) -> list[Check]:
    if limit is None:
        return []
    fmt = (lambda x: f"{x:.2%}") if unit == "%" else _f
    change = f"{_f(m.base_value)} -> {_f(m.candidate_value)}"
    if math.isnan(drop):
        status, msg = Status.FAIL, f"{m.label}: worsening undefined ({change})"
    elif drop <= 0:
        status, msg = Status.OK, f"{m.label} did not get worse ({change})"
    elif drop <= limit + EPS:
        status, msg = (Status.WITHIN_TOLERANCE,
                       f"{m.label} worse by {fmt(drop)} ({change}), allowed {fmt(limit)}")
    else:
        status, msg = (Status.FAIL, f"{m.label} worse by {fmt(drop)} ({change}), allowed "
                       f"{fmt(limit)}{_worse_on(m)}")
    qs = m.worse if status is not Status.OK else ()
    return [Check(f"{m.label} {kind}", m.metric, kind, status, f"worsening <= {fmt(limit)}",
                  fmt(drop) if not math.isnan(drop) else "undefined", msg, limit, drop, qs)]


def _max_drop(p: MetricPolicy, m: MetricComparison, alpha: float | None) -> list[Check]:
    return _drop_check("max_drop", p.max_drop, m, m.worsening, "")


def _relative(m: MetricComparison) -> float:
    """Worsening as a fraction of ``|base|`` (a zero base with any worsening: infinite)."""
    w = m.worsening
    if math.isnan(w) or w == 0:
        return w
    if m.base_value == 0 or math.isinf(m.base_value):
        return math.copysign(math.inf, w)
    return w / abs(m.base_value)


def _max_drop_relative(p: MetricPolicy, m: MetricComparison, alpha: float | None) -> list[Check]:
    return _drop_check("max_drop_relative", p.max_drop_relative, m, _relative(m), "%")


def _max_increase(p: MetricPolicy, m: MetricComparison, alpha: float | None) -> list[Check]:
    # the increase of a lower-is-better metric is its worsening (the policy refuses others)
    limit = None if p.max_increase is None else p.max_increase / 100.0
    return _drop_check("max_increase", limit, m, _relative(m), "%")


def _significance(p: MetricPolicy, m: MetricComparison, alpha: float | None) -> list[Check]:
    if alpha is None:
        return []
    p_adj = m.p_adjusted
    name = "p_adj"  # adjusted by the family's rule, named under the table
    expected = f"no worsening with {name} < {_f(alpha)}"
    measured = "untested" if math.isnan(p_adj) else f"{name} {_f(p_adj)}"
    if m.worsening <= 0 and not m.worse:
        status, msg = Status.OK, f"{m.label}: no question got worse"
    elif m.worsening <= 0:
        status, msg = Status.OK, f"{m.label}: no worsening of the {m.aggregate}"
    elif math.isnan(p_adj):
        status, msg = Status.FAIL, f"{m.label} got worse and cannot be tested ({m.note})"
    elif flagged(p_adj, alpha):
        status, msg = (Status.FAIL, f"{m.label} significantly worse ({name} {_f(p_adj)} < "
                       f"{_f(alpha)}, {m.losses} losses / {m.wins} wins){_worse_on(m)}")
    else:
        status, msg = (Status.WITHIN_TOLERANCE, f"{m.label} worse but not significant "
                       f"({name} {_f(p_adj)} >= {_f(alpha)}){_worse_on(m)}")
    return [Check(f"{m.label} significance", m.metric, "alpha", status, expected, measured, msg,
                  alpha, p_adj, m.worse if status is not Status.OK else ())]


def _pinned(p: MetricPolicy, m: MetricComparison, alpha: float | None) -> list[Check]:
    out = []
    for qid in p.pinned:
        v = m.value_of(qid)
        if v is None:
            raise RulegaugeError(f"policy {m.metric}: pinned question {qid!r} is not among the "
                               f"{m.n} compared questions (unknown id, or outside the metric's "
                               f"scope {m.scope!r})")
        b, c = v
        worse = (c < b) if m.higher_is_better else (c > b)
        status = Status.FAIL if worse else Status.OK
        msg = (f"pinned {qid} {'lost' if worse else 'kept'} {m.label} ({_f(b)} -> {_f(c)})")
        out.append(Check(f"{m.label} pinned {qid}", m.metric, "pinned", status,
                         f"not worse than {_f(b)}", _f(c), msg, b, c, (qid,)))
    return out


def _max_worse(p: MetricPolicy, m: MetricComparison, alpha: float | None) -> list[Check]:
    if p.max_worse is None:
        return []
    n = len(m.worse)
    status = Status.OK if n == 0 else Status.WITHIN_TOLERANCE if n <= p.max_worse else Status.FAIL
    msg = (f"{m.label}: {n} of {m.n} question(s) got worse, allowed {p.max_worse}"
           + (f": {_named(m.worse)}" if n else ""))
    return [Check(f"{m.label} max_worse", m.metric, "max_worse", status,
                  f"questions worse <= {p.max_worse}", str(n), msg, float(p.max_worse), float(n),
                  m.worse if n else ())]


CheckFn = Callable[[MetricPolicy, MetricComparison, float | None], list[Check]]
CHECKS: Registry[CheckFn] = Registry("gate check")
CHECKS.add("floor", _floor)
CHECKS.add("max_drop", _max_drop)
CHECKS.add("max_drop_relative", _max_drop_relative)
CHECKS.add("max_increase", _max_increase)
CHECKS.add("alpha", _significance)
CHECKS.add("pinned", _pinned)
CHECKS.add("max_worse", _max_worse)


def _pick(comparison: Comparison, pair: ConfigPair, metric: str,
          answerer: str | None) -> MetricComparison:
    found = [m for m in comparison.metrics if m.config == pair and m.metric == metric]
    if answerer is not None:
        found = [m for m in found if m.answerer in (answerer, None)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise RulegaugeError(f"metric {metric} is not compared for config {pair.label}"
                           + (f" and answerer {answerer!r}" if answerer else ""))
    raise RulegaugeError(f"metric {metric} exists for several answerers ("
                       + ", ".join(str(m.answerer) for m in found)
                       + "); set [gate] answerer in the policy")


def evaluate(policy: Policy, comparison: Comparison, pair: ConfigPair | None = None) -> GateResult:
    """Evaluate every check of ``policy`` on ``comparison`` (for ``pair``, default its
    only config pair)."""
    if pair is None:
        if len(comparison.pairs) != 1:
            raise RulegaugeError("the comparison holds several config pairs; name the one to gate")
        pair = comparison.pairs[0]
    checks: list[Check] = []
    compared = {m.metric for m in comparison.metrics if m.config == pair}
    for mp in policy.metrics:
        if mp.metric not in compared and comparison.unpaired:
            continue  # not on both sides: named in the result's notes (run_gate)
        m = _pick(comparison, pair, mp.metric, policy.answerer)
        alpha = mp.alpha if mp.alpha is not None else policy.alpha
        for _, fn in CHECKS.items():
            checks += fn(mp, m, alpha)
    return GateResult(policy.path, pair, tuple(checks), comparison)


def run_gate(policy: Policy, base: Side, candidate: Side, *, force: bool = False,
             config: str | None = None, candidate_config: str | None = None) -> GateResult:
    """Compare ``candidate`` with ``base`` on the policy's metrics and evaluate the
    policy. Raises :class:`RulegaugeError` on bad input (exit code 2)."""
    selector = gate_pair(policy, base, candidate, config, candidate_config)
    ids = resolve_config_pairs(base, candidate, [selector])[0]
    _, migrated = comparable(base, candidate, force=force)  # refused before anything else
    check_expected(base)  # a baseline's Parquet tables agree with its expected.yaml
    grown = grown_goldset(base, candidate)[0]  # questions removed from the gold set: not gated
    held = migrated.held_out if migrated is not None else grown.removed if grown else ()
    check_gateable(base, candidate, ids.base, ids.candidate, held)  # both complete, same questions
    pair = policy.answerer_pair
    if pair is None and policy.answerer and has_answer_metric(policy):
        pair = (policy.answerer, policy.answerer)
    excluded, sides, slicing = 0, (base, candidate), policy
    if pair is not None:  # answerer against answerer: views under one label, errors left out
        from rulegauge.regression.answerer_view import GATED, answerer_views

        base, candidate, excluded = answerer_views(base, pair[0], candidate, pair[1])
        policy = replace(policy, answerer=GATED)
    configs, scope = [selector], f"the policy's metrics for {ids.label}"
    if policy.family == "grid":  # the family a report of the candidate run adjusts over
        configs += against_reference(base, candidate, ids.base, exclude=(ids.candidate,))
        scope = f"the policy's metrics for every candidate config against {ids.base}"
    comparison = compare_runs(base, candidate, configs=configs,
                              metrics=list(policy.metric_names()), force=force, seed=policy.seed,
                              n_resamples=policy.n_resamples, confidence=policy.confidence,
                              adjustment=policy.adjustment, alpha=policy.family_alpha, scope=scope)
    if policy.family == "grid":  # report the gated pair; the family keeps every member
        gated = comparison.pairs[0]
        comparison = replace(comparison, pairs=(gated,),
                             metrics=tuple(m for m in comparison.metrics if m.config == gated),
                             changes=tuple(c for c in comparison.changes if c.config == gated))
    if pair is not None:
        shown = pair[1] if pair[0] == pair[1] else f"{pair[1]} vs {pair[0]}"
        note = (f"{excluded} question(s) with an error row on either side left out"
                if excluded else "")
        comparison = replace(comparison, metrics=tuple(
            replace(m, answerer=shown, note="; ".join(x for x in (m.note, note) if x))
            if m.answerer == GATED else m for m in comparison.metrics))
        policy = replace(policy, answerer=shown)
    result = evaluate(policy, comparison)
    powers = gate_power(policy, result.comparison, result.pair, sides)
    require_mde(policy, powers)
    failed = [(c.metric, c.questions) for c in result.failures() if c.questions]
    from rulegauge.regression.slices import with_slices  # deferred: slices evaluates through here

    return with_slices(GateResult(result.policy, result.pair, result.checks + llm_checks(policy, sides[1]),
                      result.comparison, pin_notes(policy, base)
                      + unjudged_notes(*sides, result.pair, failed)
                      + llm_notes(sides[1].manifest, policy.min_llm_kappa)
                      + ((f"policy metric(s) {comparison.unpaired_note()}; their checks were not made",)
                         if comparison.unpaired else ())
                      + ((f"old edition against new {comparison.migrated.describe()}: "
                          + (", ".join(comparison.migrated.held_out) or "none") + " left out",)
                         if comparison.migrated else ())
                      + ((comparison.grown.describe(),) if comparison.grown else ()), powers),
                       slicing, *sides, force=force)


def llm_checks(policy: Policy, candidate: Side) -> tuple[Check, ...]:
    """The ``llm_kappa`` check when the policy sets ``min_llm_kappa``
    (:mod:`rulegauge.regression.llm_admission`)."""
    if policy.min_llm_kappa is None:
        return ()
    record = None
    if policy.llm_agreement is not None:
        record = Path(policy.llm_agreement)
        if not record.is_absolute():
            record = Path(policy.path).parent / record
    ok, message, kappa = llm_kappa_check(policy.min_llm_kappa, record,
                                         llm_only_pairs(candidate.manifest))
    return (Check("llm_kappa", "llm_kappa", "min_llm_kappa", Status.OK if ok else Status.FAIL,
                  f">= {policy.min_llm_kappa}", "n/a" if kappa is None else _f(kappa), message,
                  policy.min_llm_kappa, kappa),)
