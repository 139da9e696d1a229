"""Compare two runs question by question: per-metric statistics and per-question changes.

A *side* is anything exposing a ``manifest``, ``run_id``, ``has_table`` and
``table`` (:class:`Side`): a full run (:class:`rulegauge.store.rundir.Run`), a compact
baseline (``rulegauge.store.baseline``), or later an imported set of production rulings.
Sides are joined on question id and on config: configs pair by id, or by the
selectors given (a config id or a config name on each side), so a changed config
whose id changed can still be compared with the one it replaces.

Per (config pair, metric): both sides' aggregates (mean, or median where the
metric registry says so), their difference, a paired sign-flip permutation test, a BCa
bootstrap CI and the effect size of the mean per-question difference (``metrics.stats``,
``regression.effect_size``), and wins/ties/losses from the candidate's point of view. The
multiplicity rule (:mod:`rulegauge.metrics.multiplicity`: Holm by default, or
Benjamini-Hochberg) runs over ONE family per call: every tested (config pair, answerer,
metric) of the comparison (:class:`CorrectionFamily`, printed by every report), and a
test is ``significant`` when its adjusted p is below ``alpha``. The gate calls this with
its policy's metrics, config, adjustment and alpha, so ``rulegauge compare --policy P``
and ``rulegauge gate --policy P`` adjust over the same family and print the same p_adj.
Each metric counts the questions of its scope declared in :mod:`rulegauge.metrics.info`
(with its direction and aggregate): ranking metrics answerable ones, score metrics all,
answer metrics their declared scope; NaN values of answer metrics count as not applicable.
Besides ``metrics``, a side's metric tables are read through
:mod:`rulegauge.regression.metric_frames`, which the product that writes them fills
(answering: ``answer_metrics``), so this module imports no product; the kernel's own
``search_latency`` (search time, compared when named: :mod:`rulegauge.metrics.latency`) is
registered there.

Per question: the changes named by :data:`CHANGE_RULES` (lost hit@k, first
relevant page moved down, citation lost, fence failed) with the question's
relevant pages and each arm's rank of them before and after (from the ``fused``
table; a side without one shows no ranks). Runs over different gold sets or
corpora are refused, naming what differs, unless ``force=True``, or unless the
candidate's gold set was migrated from the base's to a new edition of its documents
(:func:`rulegauge.regression.pairing.migrated_pair`; ``Comparison.migrated`` says so and
every report prints it): the questions the migration held out are left out; a gold set
that gained or lost questions is compared on the shared ones (``Comparison.grown``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.family import AGGREGATES, Metric
from rulegauge.metrics.info import in_scope, metric_info
from rulegauge.metrics.multiplicity import (
    DEFAULT_ADJUSTMENT,
    DEFAULT_ALPHA,
    NO_FAMILY,
    CorrectionFamily,
    family_of,
)
from rulegauge.metrics.reach import limited
from rulegauge.metrics.stats import agree, bootstrap_ci, permutation_test, wins_ties_losses
from rulegauge.regression.changes import CHANGE_RULES
from rulegauge.regression.effect_size import PairedEffect, paired_effect
from rulegauge.regression.evidence import PageMove, SideEvidence, evidence_notes, page_moves, relevant_pages
from rulegauge.regression.grown import GrownGoldSet, grown_goldset
from rulegauge.regression.metric_frames import long_metrics
from rulegauge.regression.pairing import (
    ConfigPair,
    ConfigSelector,
    MigratedPair,
    SideSummary,
    comparable,
    resolve_config_pairs,
    summarise_side,
)
from rulegauge.regression.stability import Stability
from rulegauge.store.baseline import Side


@dataclass(frozen=True)
class MetricComparison:
    """One metric under one config pair (and answerer, for answer metrics).

    ``base_value``/``candidate_value``: each side's aggregate over its questions in
    scope; ``difference`` = candidate - base (0 when equal, also for two +inf).
    ``n`` questions are paired (in scope on both sides); p-values and the CI are
    for their mean difference (NaN, with ``note``, when undefined, e.g. +inf);
    ``p_adjusted`` is adjusted over the call's family (:class:`CorrectionFamily`) and
    ``significant`` says it is below the family's alpha.
    ``worse``/``better``: ids of questions where the candidate lost/won;
    ``values``: (question id, base value, candidate value) of every paired question."""

    config: ConfigPair
    answerer: str | None
    metric: str
    higher_is_better: bool
    aggregate: str
    scope: str
    n: int
    base_value: float
    candidate_value: float
    difference: float
    p_value: float
    p_adjusted: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int
    worse: tuple[str, ...]
    better: tuple[str, ...]
    values: tuple[tuple[str, float, float], ...] = ()
    note: str = ""
    significant: bool = False
    effect: PairedEffect | None = None  # mean difference +- its t margin of error, d_z

    @property
    def p_holm(self) -> float:
        """Deprecated name of :attr:`p_adjusted` (Holm's when the family is Holm's)."""
        return self.p_adjusted

    def value_of(self, question_id: str) -> tuple[float, float] | None:
        """(base, candidate) value of a paired question, None if it is not paired."""
        for q, b, c in self.values:
            if q == question_id:
                return b, c
        return None

    @property
    def label(self) -> str:
        return f"{self.metric} [{self.answerer}]" if self.answerer else self.metric

    @property
    def worsening(self) -> float:
        """How much worse the candidate is (> 0 worse, < 0 better), in metric units."""
        # + 0.0 turns -0.0 into 0.0, so "no change" never prints as "-0"
        return (-self.difference if self.higher_is_better else self.difference) + 0.0


@dataclass(frozen=True)
class QuestionChange:
    """One question's regression or improvement, with the evidence of why."""

    config: ConfigPair
    question_id: str
    answerer: str | None
    metric: str
    rule: str
    direction: str  # "regression" or "improvement"
    before: float
    after: float
    description: str
    pages: tuple[PageMove, ...]


def _family_label(m: MetricComparison) -> tuple[str, str]:
    return m.config.label, m.label


@dataclass(frozen=True)
class Comparison:
    base: SideSummary
    candidate: SideSummary
    pairs: tuple[ConfigPair, ...]
    metrics: tuple[MetricComparison, ...]
    changes: tuple[QuestionChange, ...]
    differences: tuple[str, ...]
    forced: bool
    seed: int
    n_resamples: int
    confidence: float
    skipped_metrics: tuple[str, ...] = ()
    family: CorrectionFamily = NO_FAMILY  # the family of p_adjusted
    notes: tuple[str, ...] = ()  # what the "why" cannot show (fused rows not stored, or cut)
    stability: tuple[Stability, ...] = ()  # per metric: the best candidate config's stability
    unpaired: tuple[str, ...] = ()  # metrics not on both sides, not compared: "recall@5 (base only)"
    migrated: MigratedPair | None = None  # old edition vs new, through the candidate's migrated gold set
    grown: GrownGoldSet | None = None  # gold set gained/lost questions: compared on the shared ones

    def unpaired_note(self) -> str:
        """What the comparison could not compare: metrics not on both sides (runs scored
        with different metric sets)."""
        return "not compared (not on both sides): " + ", ".join(self.unpaired)

    def regressions(self) -> tuple[QuestionChange, ...]:
        return tuple(c for c in self.changes if c.direction == "regression")

    def improvements(self) -> tuple[QuestionChange, ...]:
        return tuple(c for c in self.changes if c.direction == "improvement")

    def find(self, metric: str, pair: ConfigPair, answerer: str | None = None
             ) -> MetricComparison | None:
        for m in self.metrics:
            if m.metric == metric and m.config == pair and m.answerer == answerer:
                return m
        return None


def _search_metric(name: str) -> bool:
    info = metric_info(name)
    return info is not None and info.kind == "search"


def _pairs_for(b: pd.DataFrame, c: pd.DataFrame, info: Metric, where: str
               ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, int]:
    """(paired rows in scope on both sides, base rows in scope, candidate rows in
    scope, NaN pairs dropped), over the questions both sides have."""
    for name, f in (("base", b), ("candidate", c)):
        dup = f["question_id"][f["question_id"].duplicated()]
        if len(dup):
            raise RulegaugeError(f"{where}: {name} has several rows for question(s) "
                               + ", ".join(sorted(set(dup))))
    common = set(b["question_id"]) & set(c["question_id"])
    b = b[b["question_id"].isin(common)]
    c = c[c["question_id"].isin(common)]
    try:
        b, c = in_scope(b, info), in_scope(c, info)
    except RulegaugeError as exc:
        raise RulegaugeError(f"{where}: {exc}") from None
    j = b.merge(c, on="question_id", suffixes=("_b", "_c")).sort_values("question_id")
    nan = j["value_b"].isna() | j["value_c"].isna()
    if info.kind == "ranking" and nan.any():  # answer metrics: NaN is "not applicable"
        raise RulegaugeError(f"{where}: NaN value for question(s) "
                           + ", ".join(j.loc[nan, "question_id"]) + "; ranking metrics need one")
    return j[~nan], b[b["value"].notna()], c[c["value"].notna()], int(nan.sum())


def _metric_comparison(pair: ConfigPair, answerer: str, info: Metric,
                       rows: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, int], seed: int,
                       n_resamples: int, confidence: float) -> MetricComparison:
    j, side_b, side_c, n_nan = rows
    b, c = j["value_b"].to_numpy(float), j["value_c"].to_numpy(float)
    qids = j["question_id"].to_numpy(str)
    n = len(j)
    agg = AGGREGATES.get(info.aggregate)
    notes = [f"{n_nan} question(s) without a value on one side were left out"] if n_nan else []
    if len(side_b) != n or len(side_c) != n:
        notes.append(f"in scope: {len(side_b)} base, {len(side_c)} candidate, {n} paired")
    bv = agg(side_b["value"].to_numpy(float)) if len(side_b) else float("nan")
    cv = agg(side_c["value"].to_numpy(float)) if len(side_c) else float("nan")
    diff = 0.0 if bv == cv else cv - bv
    p = lo = hi = float("nan")
    if n == 0:
        notes.append("no question to compare")
    elif not (np.all(np.isfinite(b)) and np.all(np.isfinite(c))):
        notes.append("non-finite values (e.g. +inf: not retrieved); no test")
    else:
        d = c - b
        p = permutation_test(d, n_resamples, seed).p_value
        lo, hi = bootstrap_ci(d, confidence, n_resamples, seed)
        if not agree(p, (lo, hi), confidence):
            notes.append(f"p {p:.3g} and the {confidence:.0%} CI [{lo:.3g}, {hi:.3g}] disagree "
                         f"({int(np.count_nonzero(d))} of {n} questions differ): "
                         "the gate uses p")
    wtl = wins_ties_losses(b, c, higher_is_better=info.higher_is_better)
    with np.errstate(invalid="ignore"):
        delta = np.where(b == c, 0.0, c - b)
    sign = 1.0 if info.higher_is_better else -1.0
    worse = tuple(qids[(sign * delta < -1e-12)].tolist())
    better = tuple(qids[(sign * delta > 1e-12)].tolist())
    return MetricComparison(pair, answerer or None, info.name, info.higher_is_better,
                            info.aggregate, info.scope, n, bv, cv, diff, p, float("nan"), lo, hi,
                            wtl.wins, wtl.ties, wtl.losses, worse, better,
                            tuple(zip(qids.tolist(), b.tolist(), c.tolist(), strict=True)),
                            "; ".join(notes),
                            effect=paired_effect(c - b, confidence) if not np.isnan(p) else None)


def _changes(pair: ConfigPair, answerer: str, metric: str, j: pd.DataFrame,
             moves: Callable[[str], tuple[PageMove, ...]]) -> list[QuestionChange]:
    rules = [(name, r) for name, r in CHANGE_RULES.items() if r.applies(metric)]
    out = []
    for qid, b, c in zip(j["question_id"], j["value_b"], j["value_c"], strict=True):
        for name, rule in rules:
            hit = rule.classify(metric, float(b), float(c))
            if hit is not None:
                out.append(QuestionChange(pair, str(qid), answerer or None, metric, name, hit[0],
                                          float(b), float(c), hit[1], moves(str(qid))))
    return out


def _row_groups(frame: pd.DataFrame) -> dict[str, dict[tuple[str, str], npt.NDArray[np.intp]]]:
    """config -> (answerer, metric) -> positions of its rows in ``frame`` (in frame order): located
    once, as masks over the long frame per config pair would be quadratic in a grid's configs."""
    out: dict[str, dict[tuple[str, str], npt.NDArray[np.intp]]] = {}
    groups: dict[Any, Any] = frame.groupby(["config_id", "answerer", "metric"], sort=False).indices
    for (config, answerer, metric), rows in groups.items():
        out.setdefault(str(config), {})[str(answerer), str(metric)] = np.asarray(rows, dtype=np.intp)
    return out


def compare_runs(base: Side, candidate: Side, configs: Sequence[ConfigSelector] | None = None,
                 metrics: Sequence[str] | None = None, *, force: bool = False, seed: int = 0,
                 n_resamples: int = 10_000, confidence: float = 0.95,
                 adjustment: str = DEFAULT_ADJUSTMENT, alpha: float = DEFAULT_ALPHA,
                 scope: str = "") -> Comparison:
    """Compare ``candidate`` against ``base`` (see the module docstring).

    ``metrics=None`` compares every metric both sides have (``[]``: none) (metrics of unknown
    direction are skipped and listed in ``skipped_metrics``) but the search-latency ones
    (:mod:`rulegauge.metrics.latency`), compared only when named; named metrics are
    compared where both sides have them, at least one of them per config pair. A
    metric only one side has (runs scored with different ``-m``) is not compared and
    is listed in ``unpaired`` (``"recall@5 (base only)"``). Raises :class:`RulegaugeError` naming the
    differences when the gold sets or corpora differ and ``force`` is false.
    ``adjustment``/``alpha``: the multiplicity rule over the call's family
    (:mod:`rulegauge.metrics.multiplicity`); ``scope`` says in words what the family is.
    """
    diffs, migrated = comparable(base, candidate, force=force)
    pairs = resolve_config_pairs(base, candidate, configs)
    lb, lc = long_metrics(base), long_metrics(candidate)
    at_b, at_c = _row_groups(lb), _row_groups(lc)
    rel = relevant_pages(base, candidate)
    ev_b = SideEvidence(base, {p.base for p in pairs})
    ev_c = SideEvidence(candidate, {p.candidate for p in pairs})
    wanted = list(dict.fromkeys(metrics)) if metrics is not None else None  # []: none
    tested: list[MetricComparison] = []
    changes: list[QuestionChange] = []
    skipped: set[str] = set()
    unpaired: set[str] = set()  # asked (or on one side) but not on both: not compared
    for pair in pairs:
        cache: dict[str, tuple[PageMove, ...]] = {}

        def moves(qid: str, p: ConfigPair = pair,
                  cache: dict[str, tuple[PageMove, ...]] = cache) -> tuple[PageMove, ...]:
            if qid not in cache:
                cache[qid] = page_moves(qid, rel.get(qid, ()), ev_b, p.base, ev_c, p.candidate,
                                        migrated.renamed(qid) if migrated else None)
            return cache[qid]

        rows_b, rows_c = at_b.get(pair.base, {}), at_c.get(pair.candidate, {})
        keys_b, keys_c = set(rows_b), set(rows_c)
        keys = sorted(keys_b & keys_c, key=lambda k: (k[0], k[1]))
        both = {k[1] for k in keys}
        only = {m: "base" for _, m in keys_b} | {m: "candidate" for _, m in keys_c}
        if wanted is None:  # search time is compared when named (policy, --metric), never by default:
            # a measurement of the machine that would join (and widen) the quality metrics' family
            keys = [k for k in keys if not _search_metric(k[1])]
            only = {m: s for m, s in only.items() if not _search_metric(m)}
        asked = wanted if wanted is not None else sorted(only)
        unpaired.update(f"{m} ({only[m]} only)" if m in only else f"{m} (neither side)"
                        for m in asked if m not in both)
        if wanted is not None:
            if wanted and not any(m in both for m in wanted):
                raise RulegaugeError(f"config {pair.label}: metric(s) {', '.join(wanted)} not on "
                                   f"both sides; both have: {', '.join(sorted(both)) or '(none)'}")
            keys = [k for m in wanted for k in keys if k[1] == m]
        for answerer, metric in keys:
            info = metric_info(metric)
            if info is None:
                if wanted is not None:
                    raise RulegaugeError(f"metric {metric!r} has no known direction: declare it in "
                                       "rulegauge.metrics.info or compare other metrics")
                skipped.add(metric)
                continue
            where = f"config {pair.label}, metric {metric}"
            sel_b, sel_c = lb.iloc[rows_b[answerer, metric]], lc.iloc[rows_c[answerer, metric]]
            rows = _pairs_for(sel_b, sel_c, info, where)
            tested.append(_metric_comparison(pair, answerer, info, rows, seed, n_resamples,
                                             confidence))
            changes += _changes(pair, answerer, metric, rows[0], moves)
    # one family for the whole call (every config pair, answerer and metric)
    adjusted, family = family_of([_family_label(m) for m in tested],
                                 [m.p_value for m in tested], adjustment, alpha, scope)
    family = limited(family, [m.n for m in tested if not np.isnan(m.p_value)], n_resamples)
    flags = set(family.flagged)
    results = [replace(m, p_adjusted=float(a), significant=_family_label(m) in flags)
               for m, a in zip(tested, adjusted, strict=True)]
    changes.sort(key=lambda c: (pairs.index(c.config), c.direction != "regression",
                                c.question_id, c.answerer or "", c.metric))
    return Comparison(summarise_side(base), summarise_side(candidate), pairs, tuple(results),
                      tuple(changes), diffs, bool(diffs), seed, n_resamples, confidence,
                      tuple(sorted(skipped)), family,
                      tuple(n for ev in (ev_b, ev_c) for n in evidence_notes(ev)) if changes else (),
                      unpaired=tuple(sorted(unpaired)), migrated=migrated,
                      grown=None if diffs or migrated else grown_goldset(base, candidate)[0])
