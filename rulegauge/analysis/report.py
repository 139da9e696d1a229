"""One self-contained HTML report of a run, read top-down.

Sections: the headline (best config and the service config on the chosen metric, the
paired difference with its interval, :mod:`rulegauge.analysis.headline`); configs by
metric with bootstrap intervals; the config comparison against the service config
(forest plot and table); score bands per number of arms against the arms/(k+1)
anchors; a per-language heat map; the metric per tag and game (slices) and the overlap
with the previous run of the gold set (:mod:`rulegauge.analysis.report_slices`); the
answers side by side when the run has answers;
the search time per arm and charted config (p50, p95); the per-config summary;
per-question details folded away. Figures come from
:mod:`rulegauge.analysis.figures`.

The file embeds every figure as a base64 PNG (Agg renderer, no pyplot state), inline
CSS and a few lines of inline script that sort a table by the clicked column, and
references nothing outside itself, so it opens offline and can be mailed around.
The layout fits a 1400 px window: wide tables scroll inside their own box, figures
are at most 1340 px wide.

Config comparison (also used by ``notebooks/compare_configs.ipynb``): for one
metric, every config is compared with a *reference* config (default: the best by
the metric's aggregate, ties in numeric config order through
:func:`rulegauge.metrics.selection.rank_configs`) by
:func:`rulegauge.regression.compare.compare_runs` with the run on both sides: aggregate
difference, BCa bootstrap interval of the mean paired difference, its t margin of error
and Cohen's d_z (:mod:`rulegauge.regression.effect_size`), paired permutation p-value,
wins/ties/losses. Scopes and aggregates are those of
:func:`rulegauge.metrics.info.metric_info` (ranking metrics: answerable questions only).
A metric with infinite values (``first_rel_rank`` when nothing relevant was
found) gets no interval and says so in ``note``. Reference: Efron & Tibshirani,
"An Introduction to the Bootstrap" (1993), ch. 13.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from rulegauge.analysis.bands import BandTable, run_band_tables
from rulegauge.analysis.figures import (
    answers_figure,
    comparison_figure,
    interval_figure,
    language_figure,
    question_figure,
    ratio_figure,
)
from rulegauge.analysis.foreign_hits import foreign_html
from rulegauge.analysis.headline import (
    HEADLINE_METRICS,
    best_per_method,
    config_methods,
    headline,
    interval_frame,
)
from rulegauge.analysis.report_html import (
    CSS,
    JS,
    figure_grid,
    headline_html,
    img,
    png_base64,
    table_html,
)
from rulegauge.analysis.report_sections import bands_html, latency_html, sweeps_html
from rulegauge.analysis.report_slices import overlap_html, slices_html
from rulegauge.analysis.trend_chart import trend_html
from rulegauge.core.atomic import write_text as atomic_write_text
from rulegauge.metrics.family import AGGREGATES
from rulegauge.metrics.info import scored_rows
from rulegauge.metrics.languages import language_table
from rulegauge.metrics.multiplicity import DEFAULT_ADJUSTMENT, DEFAULT_ALPHA
from rulegauge.metrics.selection import (
    DEFAULT_TOP,
    check_config_ids,
    chosen_configs,
    primary_metric,
    rank_configs,
    ties_with,
)
from rulegauge.metrics.summary import summary_frame
from rulegauge.regression.compare import compare_runs
from rulegauge.regression.effect_size import effect_columns
from rulegauge.regression.service import service_config
from rulegauge.regression.stability import best_stability
from rulegauge.store.rundir import Run

DEFAULT_METRIC = "recall@5"
__all__ = ["DEFAULT_METRIC", "Progress", "cells_frame", "comparison_figure", "config_comparison",
           "heatmap_figure", "overview_frame", "png_base64", "ratio_figure", "render_html",
           "write_report"]
Progress = Callable[[str], None]


def config_comparison(run: Run, metric: str = DEFAULT_METRIC, reference: str | None = None,
                      confidence: float = 0.95, n_resamples: int = 10_000,
                      seed: int = 0, adjustment: str = DEFAULT_ADJUSTMENT,
                      alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
    """Every config of ``run`` against ``reference`` on ``metric`` through
    :func:`rulegauge.regression.compare.compare_runs` (the run on both sides), best first.

    Columns: ``config_id``, ``value`` (aggregate), ``diff`` (value - reference
    value), ``ci_lo``/``ci_hi`` (BCa bootstrap CI of the mean paired difference),
    ``moe`` (its 95% t margin of error), ``d_z`` (Cohen's d_z),
    ``p_value`` (paired permutation test), ``p_adjusted`` and ``significant`` (the
    multiplicity rule over one family: every other config against the reference,
    :mod:`rulegauge.metrics.multiplicity`, the family ``rulegauge compare RUN RUN
    --reference REF -m METRIC`` and a ``family = "grid"`` gate use),
    ``wins``/``ties``/``losses``, ``n``, ``reference`` and ``note`` (why a CI is missing,
    e.g. infinite values). The reference's own row has difference 0 and no test; the
    family is ``frame.attrs["family"]``."""
    info, rows = scored_rows(run.table("metrics"), metric)
    agg = AGGREGATES.get(info.aggregate)
    value = {str(c): agg(g["value"].to_numpy(np.float64)) for c, g in rows.groupby("config_id")}
    ranked = rank_configs(value, higher_is_better=bool(info.higher_is_better))
    ref = reference or ranked[0]
    # the same run on both sides: its provenance trivially matches, hence force
    comp = compare_runs(run, run, configs=[(ref, c) for c in ranked if c != ref],
                        metrics=[info.name], force=True, seed=seed, n_resamples=n_resamples,
                        confidence=confidence, adjustment=adjustment, alpha=alpha,
                        scope=f"every config against {ref}") if len(ranked) > 1 else None
    by_candidate = {m.config.candidate: m for m in comp.metrics} if comp else {}
    n_ref = int((rows["config_id"] == ref).sum())
    frame = pd.DataFrame([{
        "config_id": c, "value": value[c], "diff": m.difference,
        "ci_lo": m.ci_low, "ci_hi": m.ci_high, **effect_columns(m.effect),
        "p_value": m.p_value, "p_adjusted": m.p_adjusted,
        "significant": m.significant, "wins": m.wins, "ties": m.ties, "losses": m.losses,
        "n": m.n, "reference": False, "note": m.note}
        if (m := by_candidate.get(c)) is not None else {
        "config_id": c, "value": value[c], "diff": 0.0, "ci_lo": 0.0, "ci_hi": 0.0, **effect_columns(None),
        "p_value": np.nan, "p_adjusted": np.nan, "significant": False, "wins": 0, "ties": n_ref,
        "losses": 0, "n": n_ref, "reference": True, "note": "the reference"}
        for c in ranked])
    frame.attrs["family"] = comp.family if comp else None
    return frame


def overview_frame(tables: tuple[BandTable, ...]) -> pd.DataFrame:
    """One row per config: anchors, overall healthy band, boost-alone counts, AUCs
    and the top-hit threshold."""
    rows = []
    for t in tables:
        a, b, boost = t.anchors, t.bands[0], t.boost
        rows.append({
            "config_id": t.config_id, "name": t.name, "kind": t.kind, "method": a.method,
            "score_axis": a.axis, "n_arms": len(a.arms),
            "k": a.k, "one_arm_top": a.one_arm_top, "two_arm_top": a.two_arm_top,
            "ceiling": a.ceiling, "band_n": b.n, "band_score_lo": b.score_lo,
            "band_score_hi": b.score_hi, "band_ratio_lo": b.ratio_lo, "band_ratio_hi": b.ratio_hi,
            "boost_alone": boost.n_alone if boost else None,
            "boost_alone_relevant": boost.n_alone_relevant if boost else None,
            "auc_chunks": t.chunks.auc, "auc_top_hit": t.top_hit.auc,
            "gate_threshold": t.top_hit.threshold, "gate_youden_j": t.top_hit.youden_j,
            "gate_precision": t.top_hit.precision,
            "note": "; ".join(r for r in (t.chunks.reason, t.top_hit.reason) if r)})
    return pd.DataFrame(rows)


def cells_frame(tables: tuple[BandTable, ...]) -> pd.DataFrame:
    """One row per config, arm count and relevance: the band table's quantiles,
    columns ``score_<stat>`` and ``ratio_<stat>``."""
    rows = []
    for t in tables:
        for c in t.cells:
            row: dict[str, object] = {"config_id": t.config_id, "arms_voted": c.arms_voted,
                                      "relevant": c.relevant, "n": c.score.n}
            for prefix, s in (("score", c.score), ("ratio", c.ratio)):
                row.update({f"{prefix}_{f}": v for f, v in asdict(s).items() if f != "n"})
            rows.append(row)
    return pd.DataFrame(rows)


def heatmap_figure(metrics: pd.DataFrame, metric: str = DEFAULT_METRIC) -> Figure:
    """Questions (rows) by configs (columns, in numeric config order:
    :mod:`rulegauge.core.config_order`) of one metric's per-question values (the
    questions in the metric's scope)."""
    from rulegauge.core.config_order import sort_configs

    _, rows = scored_rows(metrics, metric)
    wide = rows.pivot(index="question_id", columns="config_id", values="value").sort_index()
    return question_figure(wide[sort_configs(str(c) for c in wide.columns)], metric)


def _answers_html(run: Run) -> list[str]:
    """The answers section: outcomes, the answerers side by side
    (:func:`rulegauge.answering.sidebyside.side_by_side`) and citations."""
    parts = ["<h2>Answers</h2>"]
    answers = run.table("answers")
    outcomes = pd.crosstab([answers["config_id"], answers["answerer"]], answers["outcome"])
    parts += ["<p class='note'>Outcomes per config and answerer.</p>",
              table_html(outcomes.rename_axis(columns=None).reset_index())]
    if run.has_table("answer_metrics"):
        from rulegauge.answering.sidebyside import LABELS, side_by_side

        sbs = side_by_side(run, n_resamples=1000)
        rows = pd.DataFrame([{"config_id": r.config_id, "answerer": r.answerer,
                              "questions": r.questions, "errors": r.errors,
                              **{LABELS.get(m, m): v for m, v in r.means},
                              "latency p50": r.latency_p50, "latency p95": r.latency_p95}
                             for r in sbs.rows])
        bars = pd.DataFrame([{"answerer": f"{r.answerer} ({r.config_id})",
                              "metric": LABELS.get(m, m), "value": v}
                             for r in sbs.rows for m, v in r.means if m != "latency_ms"])
        parts += [f"<p class='note'>Means over each metric's scope; paired differences "
                  f"against {html.escape(sbs.baseline)} in <code>rulegauge answerers</code>."
                  "</p>", img(answers_figure(bars), "answer metrics per answerer"),
                  table_html(rows)]
    if run.has_table("citations"):
        c = run.table("citations")
        cit = c.groupby(["config_id", "answerer"]).agg(
            markers=("n", "size"), dangling=("dangling", "mean"),
            relevant=("relevant", "mean")).reset_index()
        parts += ["<p class='note'>Citation markers: share dangling (no passage read at "
                  "that number) and share citing a relevant page.</p>", table_html(cit)]
    if not run.has_table("citations"):  # an answers table written by hand, not by a run
        return parts
    from rulegauge.answering.answers_view import answers_html, answers_view

    parts += ["<p class='note'>Per question: the read (relevant pages in green), each "
              "answerer's answer with its citations resolved to pages and marked right or "
              "wrong, fence and fact verdicts.</p>", answers_html(answers_view(run))]
    return parts


SUMMARY_HEADING = "<h2>Summary per config</h2>"
"""Where a product's sections go (:func:`write_report`)."""


def render_html(run: Run, top_k: int = 5, metric: str | None = None, seed: int = 0,
                n_resamples: int = 10_000, top: int = DEFAULT_TOP,
                config_ids: Sequence[str] = (), progress: Progress | None = None) -> str:
    """The report of ``run`` as one HTML string (see module docstring).

    Charts show the configs of :func:`rulegauge.metrics.selection.chosen_configs`
    (``config_ids`` when given, else the ``top`` best plus the service config and each
    arm alone); tables list every config. ``progress(message)`` hears each step."""
    say = progress or (lambda message: None)
    metrics, configs, fused = run.table("metrics"), run.table("configs"), run.table("fused")
    primary = primary_metric(run.manifest)
    metric = metric or (primary if (metrics["metric"] == primary).any()
                        else str(sorted(metrics["metric"].unique())[0]))
    service = service_config(configs)
    if config_ids:
        check_config_ids(config_ids, [str(c) for c in configs["config_id"]])
    say(f"comparing {len(configs)} configs on {metric} ({n_resamples} resamples)")
    comparison = config_comparison(run, metric, reference=service, seed=seed,
                                   n_resamples=n_resamples)
    ranked = [str(c) for c in comparison["config_id"]]
    chosen = chosen_configs(ranked, configs, top, config_ids, service)
    say(f"score bands of {len(configs)} configs (top {top_k})")
    tables = run_band_tables(run, top_k=top_k)
    shown = tuple(t for t in tables if t.config_id in set(chosen))
    shown = tuple(sorted(shown, key=lambda t: chosen.index(t.config_id)))
    top_line = headline(comparison, service, metric, config_methods(configs))
    say(f"stability of {top_line.best} ({min(n_resamples, 1000)} bootstrap resamples)")
    top_line = replace(top_line, stability=best_stability(
        metrics, metric, top_line.best, n_resamples=min(n_resamples, 1000),
        test_resamples=n_resamples, seed=seed))
    tied = ties_with(comparison.set_index("config_id")["value"], top_line.best)
    per_method = best_per_method(comparison, configs)
    names = tuple(dict.fromkeys((metric, *HEADLINE_METRICS)))
    say(f"intervals of {len(chosen)} charted configs")
    charted = metrics[metrics["config_id"].isin(set(chosen))]
    intervals = interval_frame(charted, names, n_resamples=min(n_resamples, 2000), seed=seed)
    questions = run.table("questions") if run.has_table("questions") else None
    m, esc = run.manifest, html.escape
    goldset = (m.get("goldset") or {}).get("name", "?")
    what = (f"the {len(chosen)} configs chosen with -c" if config_ids else
            f"the top {min(top, len(ranked))} on {esc(metric)}, the service config and each arm alone "
            f"({len(chosen)} of {len(ranked)}; --top N or -c ID to choose)")
    table = comparison.assign(charted=comparison["config_id"].isin(set(chosen)))
    family = comparison.attrs.get("family")
    # the trend's lines: the service config, the best, each arm alone (not the whole top N)
    trend_set = {service, top_line.best, *(c for c, k in zip(configs["config_id"], configs["kind"],
                                                              strict=True) if k == "arm")}
    method_parts = [
        f"<h2>Best setting of each fusion method: {esc(metric)}</h2>",
        f"<p class='note'>Each method's best config on this run, with its mean paired difference to "
        f"{esc(str(service or top_line.best))} and a 95% BCa bootstrap interval (in-sample: the "
        "best of many settings; <code>rulegauge tune</code> gives held-out scores per method). Score "
        "axes per method: docs/fusion.md.</p>",
        table_html(per_method)]
    say("drawing figures")
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>rulegauge report {esc(run.run_id)}</title><style>{CSS}</style></head><body>",
        f"<h1>Run {esc(run.run_id)}</h1>",
        f"<p class='note'>gold set {esc(str(goldset))} · created {esc(str(m.get('created', '?')))}"
        f" · status {esc(str(m.get('status', '?')))} · {len(configs)} configs · "
        f"{len(questions) if questions is not None else '?'} questions · commit "
        f"{esc(str((m.get('git') or {}).get('commit') or '?')[:12])}</p>",
        headline_html(top_line, tied),
        f"<p class='note'>Charts show {what}; every config is in the tables.</p>",
        *(method_parts if len(per_method) > 1 else []),
        "<h2>Configs by metric</h2>",
        "<p class='note'>Mean over answerable questions with a 95% BCa bootstrap "
        "interval of the mean (medians have none). Red: the service config.</p>",
        figure_grid([img(interval_figure(g, service, width_in=6.6), f"{name} by config with intervals")
                     for name, g in intervals.groupby("metric", sort=False)], min_px=640),
        *sweeps_html(configs, comparison, metric, chosen, service),
        f"<h2>Against the {'service config' if service else 'best config'}: {esc(metric)}</h2>",
        f"<p class='note'>Mean paired difference to {esc(str(service or top_line.best))}, 95% "
        f"BCa bootstrap interval ({n_resamples} resamples, seed {seed}; percentile where BCa is "
        "undefined), <code>moe</code> its 95% t margin of error and <code>d_z</code> Cohen's d_z "
        "(mean / SD of the paired differences), paired "
        "permutation p-value; <code>p_adjusted</code> and <code>significant</code>: the one "
        "multiplicity rule of compare and gate (docs/gate.md), family "
        f"{esc(family.describe() if family is not None else '(none)')}. The chart "
        "shows the charted configs; the table every config (click a header to sort).</p>",
        # the charted configs and the reference they are compared with (-c may leave it out)
        img(comparison_figure(comparison[comparison["config_id"].isin(set(chosen)) | comparison["reference"]], metric),
            f"{metric} differences"),
        table_html(table, tall=len(table) > 40),
        *trend_html(run, metric, tuple(c for c in chosen if c in trend_set), service or top_line.best),
        *bands_html(fused, shown, overview_frame(tables).drop(columns=["name", "kind"]),
                    cells_frame(shown), top_k),
        *foreign_html(fused, chosen, top_k),
    ]
    if questions is not None and "language" in questions:
        lang = language_table(charted, questions, metric, also=())
        if not lang.empty:
            parts += [f"<h2>Per question language: {esc(metric)}</h2>",
                      "<p class='note'>Answerable questions; n per language in the header.</p>",
                      img(language_figure(lang, metric), f"{metric} per language")]
    shown_pair = [c for c in (service, top_line.best) if c]  # per slice; overlap with the last run
    parts += slices_html(run, metric, shown_pair) + overlap_html(run, shown_pair)
    if run.has_table("answers"):
        parts += _answers_html(run)
    parts += latency_html(run.table("search_latency") if run.has_table("search_latency") else None,
                          configs, chosen)
    parts += [
        SUMMARY_HEADING,
        "<p class='note'>Ranking metrics: mean over answerable questions (median for "
        "first_rel_rank); ratio = top score / ceiling.</p>",
        table_html(summary_frame(metrics, configs), tall=len(configs) > 40),
        f"<details><summary>{esc(metric)} per question and charted config</summary>",
        img(heatmap_figure(charted, metric), f"{metric} per question and config"),
        "</details>",
        f"<script>{JS}</script></body></html>",
    ]
    return "\n".join(p for p in parts if p)


def write_report(run: Run, out: Path, sections: Sequence[str] = (), **options: object) -> Path:
    """Write :func:`render_html` of ``run`` to ``out`` (UTF-8) and return the path;
    ``sections``: HTML parts a product made (judging's filled-judgments section), placed
    before the summary per config."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = render_html(run, **options)  # type: ignore[arg-type]
    if sections:
        text = text.replace(SUMMARY_HEADING, "\n".join(sections) + "\n" + SUMMARY_HEADING, 1)
    atomic_write_text(out, text)
    return out
