"""Slices of the gold set, gated on their own: what averages over every question hide.

A policy's ``[slices.NAME]`` (:class:`rulegauge.regression.policy_slices.SliceSpec`) picks
the questions every selector given holds for (a tag, a game, a language, answerable or
not, labelled or not, a list of ids), among the questions both runs share, from the
candidate's ``questions`` table (its gold set is the newer) and the unlabelled ids its
manifest records. The slice is then compared on those questions alone
(:class:`QuestionView` restricts every table of a side to them) by the same
:func:`rulegauge.regression.compare.compare_runs` and checked by the same
:func:`rulegauge.regression.gate.evaluate` as the whole set: every key of a metric's
policy, counts (``max_worse``) included. Each slice's tests form one declared family,
adjusted by the one multiplicity rule (:mod:`rulegauge.metrics.multiplicity`), its scope
naming the slice. A slice's overlap rule (and the policy's ``[overlap]``, on every shared
question) checks the median RBO and Jaccard of the gated config's two lists
(:mod:`rulegauge.regression.overlap`), which read no judgment.

Every slice check is named ``slice NAME: ...`` and carries its slice, so the terminal,
Markdown, JUnit and JSON reports name the failing slice and its questions. A slice that
selects no shared question, or names an id the runs do not share, is bad input (exit 2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from rulegauge.regression.compare import Comparison, compare_runs
from rulegauge.regression.gate import EPS, Check, GateResult, Status, evaluate
from rulegauge.regression.overlap import PairOverlap, pair_overlap
from rulegauge.regression.pairing import ConfigPair
from rulegauge.regression.policy import Policy
from rulegauge.regression.policy_slices import OverlapRule, SliceSpec
from rulegauge.regression.slice_select import QuestionView, select
from rulegauge.store.baseline import Side

NAMED = 10  # questions named in a message; the check keeps all of them


@dataclass(frozen=True)
class SliceOutcome:
    """One slice of a gate: its selection, its comparison (None with overlap only), its
    checks (named ``slice NAME: ...``) and its overlap (None without an overlap rule)."""

    name: str
    selector: str
    questions: tuple[str, ...]
    checks: tuple[Check, ...]
    comparison: Comparison | None = None
    overlap: PairOverlap | None = None
    notes: tuple[str, ...] = ()  # e.g. significance checks a small slice cannot fail

    @property
    def passed(self) -> bool:
        return all(c.status is not Status.FAIL for c in self.checks)

    def failing_questions(self) -> tuple[str, ...]:
        """The questions every failing check names, in first-named order."""
        return tuple(dict.fromkeys(q for c in self.checks if c.status is Status.FAIL
                                   for q in c.questions))


def _named(qids: Sequence[str]) -> str:
    more = f" (+{len(qids) - NAMED} more)" if len(qids) > NAMED else ""
    return ", ".join(qids[:NAMED]) + more


def overlap_checks(rule: OverlapRule, ov: PairOverlap, prefix: str = "", slice_name: str = ""
                   ) -> tuple[Check, ...]:
    """The floors of ``rule`` on the medians of ``ov``: OK at or above, FAIL below (naming
    the questions under the floor, lowest first), FAIL with no question to measure."""
    out = []
    for kind, name, floor, median, per_q in (
            ("min_rbo", ov.rbo_name, rule.min_rbo, ov.rbo_median, [(q.rbo, q.question_id) for q in ov.questions]),
            ("min_jaccard", ov.jaccard_name, rule.min_jaccard, ov.jaccard_median,
             [(q.jaccard, q.question_id) for q in ov.questions])):
        if floor is None:
            continue
        ok = not math.isnan(median) and median >= floor - EPS
        below = tuple(q for v, q in sorted(per_q) if v < floor - EPS)
        where = f"{ov.config.label}, {ov.n} question(s)"
        msg = (f"median {name} {median:.4g} ({where}) {'meets' if ok else 'misses'} the floor "
               f">= {floor:g}" if ov.n else f"{name}: no question to measure ({where})")
        if below:
            msg += f"; {len(below)} below it: {_named(below)}"
        out.append(Check(f"{prefix}overlap median {name}", name, kind,
                         Status.OK if ok else Status.FAIL, f">= {floor:g}",
                         "n/a" if math.isnan(median) else f"{median:.4g}", msg, floor, median,
                         () if ok else below, slice=slice_name))
    return tuple(out)


def gate_slice(spec: SliceSpec, policy: Policy, base: Side, candidate: Side, pair: ConfigPair,
               *, force: bool = False) -> SliceOutcome:
    """Select, compare and check one slice (module docstring)."""
    qids = select(spec, base, candidate)
    vb, vc = QuestionView(base, qids), QuestionView(candidate, qids)
    prefix = f"slice {spec.name}: "
    checks: list[Check] = []
    comparison = ov = None
    if spec.metrics:
        scope = (f"slice {spec.name} ({spec.describe()}, {len(qids)} questions): its metrics "
                 f"for {pair.label}")
        comparison = compare_runs(vb, vc, configs=[(pair.base, pair.candidate)],
                                  metrics=[m.metric for m in spec.metrics], force=force,
                                  seed=policy.seed, n_resamples=policy.n_resamples,
                                  confidence=policy.confidence, adjustment=policy.adjustment,
                                  alpha=policy.family_alpha, scope=scope)
        result = evaluate(replace(policy, metrics=spec.metrics), comparison, comparison.pairs[0])
        checks += [replace(c, name=prefix + c.name, slice=spec.name) for c in result.checks]
    if spec.overlap is not None:
        ov = pair_overlap(vb, vc, pair, spec.overlap.depth, spec.overlap.p, qids,
                          scope=f"slice {spec.name} ({spec.describe()})")
        checks += overlap_checks(spec.overlap, ov, prefix, spec.name)
    note = _cannot_fail(spec, policy, comparison)
    return SliceOutcome(spec.name, spec.describe(), qids, tuple(checks), comparison, ov,
                        (note,) if note else ())


def _cannot_fail(spec: SliceSpec, policy: Policy, comparison: Comparison | None) -> str | None:
    """A note when the slice's significance checks cannot fail: with n paired questions
    the smallest two-sided sign-flip p is 2 / 2^n, times the family size at Holm's first
    step (and Benjamini-Hochberg's), which may not reach below alpha on a small slice."""
    alphas = [a for m in spec.metrics if (a := m.alpha if m.alpha is not None else policy.alpha)
              is not None]
    if comparison is None or not alphas or not comparison.metrics:
        return None
    n = max(m.n for m in comparison.metrics)
    p_min = min(1.0, max(comparison.family.size, 1) * 2.0 / 2.0 ** n)
    if p_min < min(alphas):
        return None
    return (f"slice {spec.name}: its significance checks cannot fail: with {n} question(s) the "
            f"smallest adjusted sign-flip p is {p_min:.3g} (family of {comparison.family.size}), "
            f"not below alpha {min(alphas):g}; gate it with max_drop or max_worse")


def with_slices(result: GateResult, policy: Policy, base: Side, candidate: Side, *,
                force: bool = False) -> GateResult:
    """``result`` with the policy's ``[overlap]`` checks on every shared question and each
    slice's checks added (``result.slices``, ``result.overlap`` hold what they measured)."""
    if policy.overlap is None and not policy.slices:
        return result
    checks = list(result.checks)
    overlap = None
    if policy.overlap is not None:
        overlap = pair_overlap(base, candidate, result.pair, policy.overlap.depth, policy.overlap.p)
        checks += overlap_checks(policy.overlap, overlap)
    outcomes = tuple(gate_slice(s, policy, base, candidate, result.pair, force=force)
                     for s in policy.slices)
    checks += [c for o in outcomes for c in o.checks]
    return replace(result, checks=tuple(checks), slices=outcomes, overlap=overlap,
                   notes=result.notes + tuple(n for o in outcomes for n in o.notes))


def compare_slices(specs: Sequence[SliceSpec], base: Side, candidate: Side, comparison: Comparison,
                   metrics: Sequence[str] | None, *, force: bool = False, adjustment: str = "holm",
                   alpha: float = 0.05) -> tuple[SliceOutcome, ...]:
    """Each slice compared on its own questions, over the config pairs of ``comparison``
    with its seed, resamples and CI level, on the slice's metrics (else ``metrics``, else
    all): one family per slice (``rulegauge compare --slice``, ``--policy``)."""
    out = []
    for spec in specs:
        qids = select(spec, base, candidate)
        scope = (f"slice {spec.name} ({spec.describe()}, {len(qids)} questions)"
                 + (f": {comparison.family.scope}" if comparison.family.scope else ""))
        sliced = compare_runs(QuestionView(base, qids), QuestionView(candidate, qids),
                              configs=[(p.base, p.candidate) for p in comparison.pairs],
                              metrics=[m.metric for m in spec.metrics] or metrics, force=force,
                              seed=comparison.seed, n_resamples=comparison.n_resamples,
                              confidence=comparison.confidence, adjustment=adjustment,
                              alpha=alpha, scope=scope)
        out.append(SliceOutcome(spec.name, spec.describe(), qids, (), sliced))
    return tuple(out)
