"""Side-by-side comparison of the answerers of one run (``harness answerers RUN``).

For every config answered and every answerer: the mean of each shown metric over
its scope (:mod:`harness.answering.answer_metrics`: e.g. citation precision over
answerable questions, fence pass rate over answers that are not errors,
abstention accuracy over all questions), latency p50/p95 (numpy's linear
quantiles over every call), and the paired difference against the *baseline*
answerer (default: the first answerer of the run): the mean of
``value(answerer) - value(baseline)`` over the questions in the metric's scope
for both, with a percentile bootstrap confidence interval
(:func:`harness.regression.stats.bootstrap_ci`, seeded local generator). A metric with no
question in scope has mean NaN (printed ``-``) and no difference.

Reference: paired bootstrap over questions, Efron & Tibshirani, "An
Introduction to the Bootstrap" (1993), ch. 13; Sakai, "Statistical Reform in
Information Retrieval?" (SIGIR Forum 2014) for paired per-topic comparisons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from harness.core.errors import HarnessError
from harness.metrics.info import scope_mask
from harness.regression.stats import bootstrap_ci
from harness.store.rundir import Run

SHOWN = ("fence_pass", "citation_precision", "citation_recall", "abstention_correct",
         "no_citation", "context_recall", "latency_ms")
LABELS = {"fence_pass": "fence pass", "citation_precision": "cit. precision",
          "citation_recall": "cit. recall", "abstention_correct": "abstention acc.",
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


@dataclass(frozen=True)
class SideBySide:
    baseline: str
    rows: tuple[AnswererRow, ...]
    diffs: tuple[PairedDiff, ...]


def _scoped(run: Run) -> pd.DataFrame:
    """answer_metrics joined with each answer's outcome, plus an ``in_scope`` flag."""
    m = run.table("answer_metrics")
    a = run.table("answers")[["question_id", "config_id", "answerer", "outcome"]]
    df = m.merge(a, on=["question_id", "config_id", "answerer"], how="left", validate="m:1")
    df["in_scope"] = scope_mask(df, df["metric"])
    return df


def side_by_side(run: Run, config_id: str | None = None, baseline: str | None = None,
                 seed: int = 0, n_resamples: int = 2000, confidence: float = 0.95) -> SideBySide:
    """Per-answerer means and paired differences against ``baseline``."""
    if not run.has_table("answer_metrics"):
        raise HarnessError(f"run {run.run_id} has no answers yet; run `harness answer` first")
    df = _scoped(run)
    order = [x for x in run.manifest.get("answering", {}).get("order", [])
             if x in set(df["answerer"])]
    order += sorted(set(df["answerer"]) - set(order))
    baseline = baseline or order[0]
    if baseline not in order:
        raise HarnessError(f"unknown baseline answerer {baseline!r}; "
                           f"choose from: {', '.join(order)}")
    configs = list(dict.fromkeys(df["config_id"]))
    if config_id is not None:
        if config_id not in configs:
            raise HarnessError(f"config {config_id!r} was not answered; choose from: "
                               f"{', '.join(configs)}")
        configs = [config_id]
    rows, diffs = [], []
    for cid in configs:
        dc = df[df["config_id"] == cid]
        for label in order:
            d = dc[dc["answerer"] == label]
            means = tuple((m, _mean(d[(d["metric"] == m) & d["in_scope"]]["value"])) for m in SHOWN)
            lat = d[d["metric"] == "latency_ms"]["value"].to_numpy(np.float64)
            p50, p95 = (np.quantile(lat, [0.5, 0.95]) if len(lat) else (math.nan, math.nan))
            errors = int(d[d["metric"] == "error"]["value"].sum())
            rows.append(AnswererRow(cid, label, int(d["question_id"].nunique()), errors, means,
                                    float(p50), float(p95)))
            if label != baseline:
                diffs += [_paired(dc, cid, label, baseline, m, seed, n_resamples, confidence)
                          for m in SHOWN]
    return SideBySide(baseline, tuple(rows), tuple(diffs))


def _mean(values: pd.Series) -> float:
    return float(values.mean()) if len(values) else math.nan


def _paired(dc: pd.DataFrame, cid: str, label: str, baseline: str, metric: str, seed: int,
            n_resamples: int, confidence: float) -> PairedDiff:
    sel = dc[(dc["metric"] == metric) & dc["in_scope"]]
    a = sel[sel["answerer"] == baseline].set_index("question_id")["value"]
    b = sel[sel["answerer"] == label].set_index("question_id")["value"]
    shared = sorted(set(a.index) & set(b.index))
    if not shared:
        return PairedDiff(cid, label, baseline, metric, 0, math.nan, math.nan, math.nan)
    d = b.loc[shared].to_numpy(np.float64) - a.loc[shared].to_numpy(np.float64)
    low, high = bootstrap_ci(d, confidence=confidence, n_resamples=n_resamples, seed=seed)
    return PairedDiff(cid, label, baseline, metric, len(shared), float(d.mean()), low, high)


def _fmt(x: float, digits: int = 3, *, sign: bool = False) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


def render(sbs: SideBySide) -> list[Any]:
    """One rich table per config: a row per metric, a column per answerer, and for
    every other answerer a column of its paired difference against the baseline
    (``mean [low, high] n=shared``)."""
    out: list[Any] = []
    for cid in dict.fromkeys(r.config_id for r in sbs.rows):
        rows = [r for r in sbs.rows if r.config_id == cid]
        others = [r.answerer for r in rows if r.answerer != sbs.baseline]
        diffs = {(d.answerer, d.metric): d for d in sbs.diffs if d.config_id == cid}
        title = f"answerers on config {cid}"
        if others:
            title += (f" (differences: paired vs {sbs.baseline}, mean [95% bootstrap CI] "
                      "over shared questions)")
        t = Table(title=title)
        t.add_column("metric")
        for r in rows:
            t.add_column(r.answerer, justify="right")
        for label in others:
            t.add_column(f"{label} - {sbs.baseline}", justify="right")
        t.add_row("questions", *[str(r.questions) for r in rows], *[""] * len(others))
        t.add_row("errors", *[str(r.errors) for r in rows], *[""] * len(others))
        for m in SHOWN:
            digits = 1 if m == "latency_ms" else 3
            t.add_row(LABELS[m], *[_fmt(r.mean(m), digits) for r in rows],
                      *[_diff_cell(diffs[(label, m)], digits) for label in others])
        t.add_row("latency p50 ms", *[_fmt(r.latency_p50, 1) for r in rows], *[""] * len(others))
        t.add_row("latency p95 ms", *[_fmt(r.latency_p95, 1) for r in rows], *[""] * len(others))
        out.append(t)
    return out


def _diff_cell(d: PairedDiff, digits: int) -> str:
    if d.shared == 0:
        return "-"
    return (f"{_fmt(d.mean_diff, digits, sign=True)} [{_fmt(d.ci_low, digits, sign=True)}, "
            f"{_fmt(d.ci_high, digits, sign=True)}] n={d.shared}")


def print_side_by_side(run: Run, console: Any = None, config_id: str | None = None,
                       baseline: str | None = None, seed: int = 0) -> SideBySide:
    """Print :func:`render` of :func:`side_by_side` to ``console`` (a rich Console)."""
    console = console or Console()
    sbs = side_by_side(run, config_id=config_id, baseline=baseline, seed=seed)
    for t in render(sbs):
        console.print(t)
    return sbs
