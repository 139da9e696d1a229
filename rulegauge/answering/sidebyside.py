"""Side-by-side comparison of the answerers of one run (``rulegauge answerers RUN``).

Statistics are never taken over error rows: per config, the *compared* questions
are those every compared answerer answered without error (an answerer that does
not cover a question, like ``production``, has no row for it and leaves it out
too); the rest are *excluded* and counted (errors, not covered). For every
config and answerer: the mean of each shown metric over the compared questions
in its scope (:mod:`rulegauge.answering.answer_metrics`: e.g. citation precision
over answerable questions; NaN values, e.g. fact recall of a question without
facts, are left out), latency p50/p95 (numpy's linear quantiles over the
compared calls), the error count over every row, and the paired difference
against the *baseline* answerer (default: the first answerer of the run): the
mean of ``value(answerer) - value(baseline)`` over the compared questions in
the metric's scope with a value on both sides, with a BCa bootstrap confidence interval
(:func:`rulegauge.metrics.stats.bootstrap_ci`, seeded local generator; percentile where BCa is
undefined), its t margin of error and Cohen's d_z (:mod:`rulegauge.regression.effect_size`)
and the paired sign-flip permutation p-value
(:func:`rulegauge.metrics.stats.permutation_test`, the gate's test). The p-values of
every (config, answerer, metric) difference form ONE family adjusted by the
multiplicity rule of report, compare, tune and gate
(:mod:`rulegauge.metrics.multiplicity`: Holm by default, Benjamini-Hochberg with
``adjustment="bh"``); ``significant`` is adjusted p < alpha, and every format prints the
family line. Metrics without a better direction (``abstained``) and differences with no
pair are untested and do not count. A metric with no question left has mean NaN
(printed ``-``) and no difference. :func:`to_records` / :func:`to_markdown` give the same
figures as JSON-ready records and a Markdown table (``--format``;
:mod:`rulegauge.answering.sidebyside_print`).

Reference: paired bootstrap over questions, Efron & Tibshirani, "An
Introduction to the Bootstrap" (1993), ch. 13; Sakai, "Statistical Reform in
Information Retrieval?" (SIGIR Forum 2014) for paired per-topic comparisons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from rulegauge.answering.answer_rows import answer_metric_frame
from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.info import metric_info, scope_mask
from rulegauge.metrics.multiplicity import (
    DEFAULT_ADJUSTMENT,
    DEFAULT_ALPHA,
    NO_FAMILY,
    CorrectionFamily,
    family_of,
)
from rulegauge.metrics.reach import limited
from rulegauge.metrics.stats import bootstrap_ci, permutation_test
from rulegauge.regression.effect_size import PairedEffect, paired_effect
from rulegauge.store.rundir import Run

SHOWN = ("fence_pass", "citation_precision", "abstained", "abstention_correct", "citation_recall",
         "fact_recall", "judge_fact_recall", "no_citation", "context_recall", "latency_ms")
"""Citation precision (over answers that cite) with the abstention rate and accuracy beside
it: an answerer that abstains more is told apart from one that cites wrongly."""
LABELS = {"fence_pass": "fence pass", "citation_precision": "cit. precision (citing)",
          "citation_recall": "cit. recall", "fact_recall": "fact recall",
          "judge_fact_recall": "fact recall (judge)", "abstained": "abstention rate",
          "abstention_correct": "abstention acc.",
          "no_citation": "no citation", "context_recall": "context recall",
          "latency_ms": "latency ms (mean)"}


@dataclass(frozen=True)
class AnswererRow:
    config_id: str
    answerer: str
    questions: int
    errors: int
    means: tuple[tuple[str, float], ...]
    latency_p50: float
    latency_p95: float

    def mean(self, metric: str) -> float:
        return dict(self.means)[metric]


@dataclass(frozen=True)
class PairedDiff:
    config_id: str
    answerer: str
    baseline: str
    metric: str
    shared: int
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float = math.nan  # paired permutation test; NaN: untested (no direction, no pair)
    p_adjusted: float = math.nan  # over the call's family (SideBySide.family)
    significant: bool = False
    effect: PairedEffect | None = None  # mean +- its t margin of error, d_z

    @property
    def member(self) -> tuple[str, str]:
        """The difference's name in the family: (``config: answerer -> baseline``, metric)."""
        return f"{self.config_id}: {self.baseline} -> {self.answerer}", self.metric


@dataclass(frozen=True)
class Exclusion:
    """Questions of one config left out of every statistic, and why."""

    config_id: str
    questions: int
    compared: int
    errors: int
    not_covered: int


@dataclass(frozen=True)
class SideBySide:
    baseline: str
    rows: tuple[AnswererRow, ...]
    diffs: tuple[PairedDiff, ...]
    exclusions: tuple[Exclusion, ...] = ()
    family: CorrectionFamily = NO_FAMILY  # the family of the diffs' p_adjusted

    def exclusion(self, config_id: str) -> Exclusion:
        return next(e for e in self.exclusions if e.config_id == config_id)


def _scoped(run: Run) -> pd.DataFrame:
    """answer_metrics joined with each answer's outcome, plus an ``in_scope`` flag."""
    m = answer_metric_frame(run)
    a = run.table("answers")[["question_id", "config_id", "answerer", "outcome"]]
    df = m.merge(a, on=["question_id", "config_id", "answerer"], how="left", validate="m:1")
    df["in_scope"] = scope_mask(df, df["metric"])
    return df


def answerer_order(run: Run, present: set[str], only: list[str] | None = None) -> list[str]:
    """Answering order of the manifest (then the rest, sorted); ``only`` filters it."""
    order = [x for x in run.manifest.get("answering", {}).get("order", []) if x in present]
    order += sorted(present - set(order))
    if only:
        unknown = [x for x in only if x not in order]
        if unknown:
            raise RulegaugeError(f"unknown answerer(s) {', '.join(unknown)}; choose from: "
                               f"{', '.join(order)}")
        order = [x for x in order if x in only]
    return order


def side_by_side(run: Run, config_id: str | None = None, baseline: str | None = None,
                 seed: int = 0, n_resamples: int = 2000, confidence: float = 0.95,
                 answerers: list[str] | None = None, adjustment: str = DEFAULT_ADJUSTMENT,
                 alpha: float = DEFAULT_ALPHA) -> SideBySide:
    """Per-answerer means and paired differences against ``baseline``, over the
    questions every compared answerer (``answerers``, default all) answered; the
    differences' p-values adjusted as one family by ``adjustment`` at ``alpha``."""
    if not run.has_table("answer_metrics"):
        raise RulegaugeError(f"run {run.run_id} has no answers yet; run `rulegauge answer` first")
    df = _scoped(run)
    order = answerer_order(run, set(df["answerer"]), answerers)
    df = df[df["answerer"].isin(order)]
    baseline = baseline or order[0]
    if baseline not in order:
        raise RulegaugeError(f"unknown baseline answerer {baseline!r}; "
                           f"choose from: {', '.join(order)}")
    configs = list(dict.fromkeys(df["config_id"]))
    if config_id is not None:
        if config_id not in configs:
            raise RulegaugeError(f"config {config_id!r} was not answered; choose from: "
                               f"{', '.join(configs)}")
        configs = [config_id]
    rows, diffs, exclusions = [], [], []
    questions = list(run.table("questions")["question_id"]) if run.has_table("questions") else []
    for cid in configs:
        dc_all = df[df["config_id"] == cid]
        qids = list(dict.fromkeys([*questions, *dc_all["question_id"]]))
        outcomes = dc_all.drop_duplicates(["question_id", "answerer"]).set_index(
            ["question_id", "answerer"])["outcome"].to_dict()
        missing = {q for q in qids if any((q, a) not in outcomes for a in order)}
        erred = {q for q in qids if any(outcomes.get((q, a)) == "error" for a in order)}
        compared = set(qids) - missing - erred
        exclusions.append(Exclusion(cid, len(qids), len(compared), len(erred - missing),
                                    len(missing)))
        dc = dc_all[dc_all["question_id"].isin(compared)]
        for label in order:
            d = dc[dc["answerer"] == label]
            means = tuple((m, _mean(d[(d["metric"] == m) & d["in_scope"]]["value"])) for m in SHOWN)
            lat = d[d["metric"] == "latency_ms"]["value"].dropna().to_numpy(np.float64)
            p50, p95 = (np.quantile(lat, [0.5, 0.95]) if len(lat) else (math.nan, math.nan))
            da = dc_all[dc_all["answerer"] == label]
            errors = int(da[da["metric"] == "error"]["value"].sum())
            rows.append(AnswererRow(cid, label, int(da["question_id"].nunique()), errors, means,
                                    float(p50), float(p95)))
            if label != baseline:
                diffs += [_paired(dc, cid, label, baseline, m, seed, n_resamples, confidence)
                          for m in SHOWN]
    adjusted, family = family_of([d.member for d in diffs], [d.p_value for d in diffs], adjustment,
                                 alpha, f"every answerer against {baseline}, every config and metric")
    family = limited(family, [d.shared for d in diffs if not math.isnan(d.p_value)], n_resamples)
    flags = set(family.flagged)
    diffs = [replace(d, p_adjusted=float(a), significant=d.member in flags)
             for d, a in zip(diffs, adjusted, strict=True)]
    return SideBySide(baseline, tuple(rows), tuple(diffs), tuple(exclusions), family)


def _mean(values: pd.Series) -> float:
    v = values.dropna()
    return float(v.mean()) if len(v) else math.nan


def _paired(dc: pd.DataFrame, cid: str, label: str, baseline: str, metric: str, seed: int,
            n_resamples: int, confidence: float) -> PairedDiff:
    sel = dc[(dc["metric"] == metric) & dc["in_scope"]]
    a = sel[sel["answerer"] == baseline].set_index("question_id")["value"].dropna()
    b = sel[sel["answerer"] == label].set_index("question_id")["value"].dropna()
    shared = sorted(set(a.index) & set(b.index))
    if not shared:
        return PairedDiff(cid, label, baseline, metric, 0, math.nan, math.nan, math.nan)
    d = b.loc[shared].to_numpy(np.float64) - a.loc[shared].to_numpy(np.float64)
    low, high = bootstrap_ci(d, confidence=confidence, n_resamples=n_resamples, seed=seed)
    # the gate's test, for metrics a gate could judge (a direction); the rest untested
    p = (permutation_test(d, n_resamples, seed).p_value if metric_info(metric) is not None
         else math.nan)
    return PairedDiff(cid, label, baseline, metric, len(shared), float(d.mean()), low, high, p,
                      effect=paired_effect(d, confidence))
