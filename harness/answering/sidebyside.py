"""Side-by-side comparison of the answerers of one run (``harness answerers RUN``).

Statistics are never taken over error rows: per config, the *compared* questions
are those every compared answerer answered without error (an answerer that does
not cover a question, like ``production``, has no row for it and leaves it out
too); the rest are *excluded* and counted (errors, not covered). For every
config and answerer: the mean of each shown metric over the compared questions
in its scope (:mod:`harness.answering.answer_metrics`: e.g. citation precision
over answerable questions; NaN values, e.g. fact recall of a question without
facts, are left out), latency p50/p95 (numpy's linear quantiles over the
compared calls), the error count over every row, and the paired difference
against the *baseline* answerer (default: the first answerer of the run): the
mean of ``value(answerer) - value(baseline)`` over the compared questions in
the metric's scope with a value on both sides, with a percentile bootstrap
confidence interval (:func:`harness.metrics.stats.bootstrap_ci`, seeded
local generator). A metric with no question left has mean NaN (printed ``-``)
and no difference. :func:`to_records` / :func:`to_markdown` give the same
figures as JSON-ready records and a Markdown table (``--format``).

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
from harness.metrics.stats import bootstrap_ci
from harness.store.rundir import Run

SHOWN = ("fence_pass", "citation_precision", "citation_recall", "fact_recall",
         "judge_fact_recall", "abstention_correct", "no_citation", "context_recall",
         "latency_ms")
LABELS = {"fence_pass": "fence pass", "citation_precision": "cit. precision",
          "citation_recall": "cit. recall", "fact_recall": "fact recall",
          "judge_fact_recall": "fact recall (judge)", "abstention_correct": "abstention acc.",
          "no_citation": "no citation", "context_recall": "context recall",
          "latency_ms": "latency ms (mean)"}
FORMATS = ("table", "markdown", "json")


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

    def exclusion(self, config_id: str) -> Exclusion:
        return next(e for e in self.exclusions if e.config_id == config_id)


def _scoped(run: Run) -> pd.DataFrame:
    """answer_metrics joined with each answer's outcome, plus an ``in_scope`` flag."""
    m = run.table("answer_metrics")
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
            raise HarnessError(f"unknown answerer(s) {', '.join(unknown)}; choose from: "
                               f"{', '.join(order)}")
        order = [x for x in order if x in only]
    return order


def side_by_side(run: Run, config_id: str | None = None, baseline: str | None = None,
                 seed: int = 0, n_resamples: int = 2000, confidence: float = 0.95,
                 answerers: list[str] | None = None) -> SideBySide:
    """Per-answerer means and paired differences against ``baseline``, over the
    questions every compared answerer (``answerers``, default all) answered."""
    if not run.has_table("answer_metrics"):
        raise HarnessError(f"run {run.run_id} has no answers yet; run `harness answer` first")
    df = _scoped(run)
    order = answerer_order(run, set(df["answerer"]), answerers)
    df = df[df["answerer"].isin(order)]
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
    return SideBySide(baseline, tuple(rows), tuple(diffs), tuple(exclusions))


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
        title = f"answerers on config {cid}"
        if others:
            title += (f" (differences: paired vs {sbs.baseline}, mean [95% bootstrap CI] "
                      "over shared questions)")
        ex = sbs.exclusion(cid)
        t = Table(title=title, caption=_caption(ex))
        header, body = _grid(sbs, cid)
        for i, h in enumerate(header):
            t.add_column(h, justify="left" if i == 0 else "right")
        for line in body:
            t.add_row(*line)
        out.append(t)
    return out


def _caption(ex: Exclusion) -> str:
    return (f"compared over {ex.compared} of {ex.questions} questions; excluded "
            f"{ex.questions - ex.compared} ({ex.errors} with an error row, {ex.not_covered} "
            "not answered by every answerer)")


def _grid(sbs: SideBySide, cid: str) -> tuple[list[str], list[list[str]]]:
    """Header and body cells of one config's table (shared by table and markdown)."""
    rows = [r for r in sbs.rows if r.config_id == cid]
    others = [r.answerer for r in rows if r.answerer != sbs.baseline]
    diffs = {(d.answerer, d.metric): d for d in sbs.diffs if d.config_id == cid}
    header = ["metric", *[r.answerer for r in rows],
              *[f"{label} - {sbs.baseline}" for label in others]]
    pad = [""] * len(others)
    body = [["answers", *[str(r.questions) for r in rows], *pad],
            ["errors", *[str(r.errors) for r in rows], *pad]]
    for m in SHOWN:
        if all(math.isnan(r.mean(m)) for r in rows) and m == "judge_fact_recall":
            continue  # not judged: no row
        digits = 1 if m == "latency_ms" else 3
        body.append([LABELS[m], *[_fmt(r.mean(m), digits) for r in rows],
                     *[_diff_cell(diffs[(label, m)], digits) for label in others]])
    body.append(["latency p50 ms", *[_fmt(r.latency_p50, 1) for r in rows], *pad])
    body.append(["latency p95 ms", *[_fmt(r.latency_p95, 1) for r in rows], *pad])
    return header, body


def to_markdown(sbs: SideBySide) -> str:
    """The side-by-side tables as Markdown (one per config, with the exclusion line)."""
    out = []
    for cid in dict.fromkeys(r.config_id for r in sbs.rows):
        header, body = _grid(sbs, cid)
        out.append(f"### answerers on config {cid}\n")
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in body]
        out.append(f"\n{_caption(sbs.exclusion(cid))}; differences: paired vs {sbs.baseline}, "
                   "mean [95% bootstrap CI] n=pairs\n")
    return "\n".join(out)


def _num(x: float) -> float | None:
    return None if math.isnan(x) else x


def to_records(sbs: SideBySide) -> dict[str, Any]:
    """JSON-ready figures at full precision (NaN -> null)."""
    return {
        "baseline": sbs.baseline,
        "exclusions": [vars(e) for e in sbs.exclusions],
        "answerers": [{"config_id": r.config_id, "answerer": r.answerer, "answers": r.questions,
                       "errors": r.errors, "means": {m: _num(v) for m, v in r.means},
                       "latency_p50_ms": _num(r.latency_p50),
                       "latency_p95_ms": _num(r.latency_p95)} for r in sbs.rows],
        "differences": [{"config_id": d.config_id, "answerer": d.answerer,
                         "baseline": d.baseline, "metric": d.metric, "pairs": d.shared,
                         "mean": _num(d.mean_diff), "ci_low": _num(d.ci_low),
                         "ci_high": _num(d.ci_high)} for d in sbs.diffs]}


def _diff_cell(d: PairedDiff, digits: int) -> str:
    if d.shared == 0:
        return "-"
    return (f"{_fmt(d.mean_diff, digits, sign=True)} [{_fmt(d.ci_low, digits, sign=True)}, "
            f"{_fmt(d.ci_high, digits, sign=True)}] n={d.shared}")


def print_side_by_side(run: Run, console: Any = None, config_id: str | None = None,
                       baseline: str | None = None, seed: int = 0, fmt: str = "table",
                       answerers: list[str] | None = None) -> SideBySide:
    """Print :func:`side_by_side` to ``console`` (a rich Console) as ``fmt``."""
    import json

    if fmt not in FORMATS:
        raise HarnessError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    console = console or Console()
    sbs = side_by_side(run, config_id=config_id, baseline=baseline, seed=seed,
                       answerers=answerers)
    if fmt == "table":
        for t in render(sbs):
            console.print(t)
    elif fmt == "markdown":
        console.print(to_markdown(sbs), markup=False, highlight=False, soft_wrap=True)
    else:
        console.print(json.dumps(to_records(sbs), indent=2, ensure_ascii=False), markup=False,
                      highlight=False, soft_wrap=True)
    return sbs
