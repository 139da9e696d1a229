"""One self-contained HTML report of a run, read top-down.

Sections: the headline (best config and the service config on the chosen metric, the
paired difference with its interval, :mod:`harness.analysis.headline`); configs by
metric with bootstrap intervals; the config comparison against the service config
(forest plot and table); score bands per number of arms against the arms/(k+1)
anchors; a per-language heat map; the answers side by side when the run has answers;
the per-config summary; per-question details folded away. Figures come from
:mod:`harness.analysis.figures`.

The file embeds every figure as a base64 PNG (Agg renderer, no pyplot state), inline
CSS and a few lines of inline script that sort a table by the clicked column, and
references nothing outside itself, so it opens offline and can be mailed around.
The layout fits a 1400 px window: wide tables scroll inside their own box, figures
are at most 1340 px wide.

Config comparison (also used by ``notebooks/compare_configs.ipynb``): for one
metric, every config is compared with a *reference* config (default: the best by
the metric's aggregate, ties by config id through :mod:`harness.core.ordering`) by
:func:`harness.regression.compare.compare_runs` with the run on both sides: aggregate
difference, percentile bootstrap interval of the mean paired difference, paired
permutation p-value, wins/ties/losses. Scopes and aggregates are those of
:func:`harness.metrics.info.metric_info` (ranking metrics: answerable questions only).
A metric with infinite values (``first_rel_rank`` when nothing relevant was
found) gets no interval and says so in ``note``. Reference: Efron & Tibshirani,
"An Introduction to the Bootstrap" (1993), ch. 13.
"""

from __future__ import annotations

import base64
import html
import io
import math
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from harness.analysis.bands import BandTable, run_band_tables
from harness.analysis.figures import (
    answers_figure,
    band_figure,
    comparison_figure,
    interval_figure,
    language_figure,
    question_figure,
    ratio_figure,
)
from harness.analysis.headline import (
    HEADLINE_METRICS,
    Headline,
    best_per_method,
    config_methods,
    headline,
    interval_frame,
    service_config,
)
from harness.analysis.languages import language_table
from harness.analysis.summary import summary_frame
from harness.core.ordering import order
from harness.metrics.family import AGGREGATES
from harness.metrics.info import scored_rows
from harness.regression.compare import compare_runs
from harness.store.rundir import Run

DEFAULT_METRIC = "recall@5"
__all__ = ["DEFAULT_METRIC", "cells_frame", "comparison_figure", "config_comparison",
           "heatmap_figure", "overview_frame", "png_base64", "ratio_figure", "render_html",
           "write_report"]
_CSS = """*{box-sizing:border-box}body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;
max-width:1360px;padding:12px 16px;color:#222}h1{font-size:22px}h2{font-size:18px;
margin-top:1.6em;border-bottom:1px solid #ddd}.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:12px;margin:.4em 0 1.2em}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap}
th{background:#f2f2f2;cursor:pointer;user-select:none}th[data-dir=asc]::after{content:" ▲"}
th[data-dir=desc]::after{content:" ▼"}td:first-child,th:first-child{text-align:left}
img{max-width:100%;height:auto;display:block;margin:.4em 0}.note{color:#555;max-width:70em}
.cards{display:flex;flex-wrap:wrap;gap:12px}.card{border:1px solid #ddd;border-radius:6px;
padding:8px 14px;min-width:15em;max-width:32em}.card b{font-size:20px;display:block}
.svc{color:#d1495b}details{margin:.5em 0}summary{cursor:pointer;color:#264653}
.answer pre{white-space:pre-wrap;margin:.2em 0}.cite{margin-right:.6em;font-size:12px}
.cite.right,tr.right td{color:#2a7f3f}.cite.wrong{color:#d1495b}"""
# sort a table by the clicked header: numbers numerically, text after numbers
_JS = """document.querySelectorAll('table.sortable th').forEach((th,i)=>th.onclick=()=>{
const t=th.closest('table'),b=t.tBodies[0],up=th.dataset.dir!=='asc';
t.querySelectorAll('th').forEach(h=>delete h.dataset.dir);th.dataset.dir=up?'asc':'desc';
const key=r=>{const s=r.cells[i].textContent.trim(),n=parseFloat(s);return isNaN(n)?[1,s]:[0,n]};
[...b.rows].sort((x,y)=>{const a=key(x),c=key(y);return (a[0]-c[0]||(a[1]>c[1]?1:a[1]<c[1]?-1:0))
*(up?1:-1)}).forEach(r=>b.appendChild(r))});"""


def config_comparison(run: Run, metric: str = DEFAULT_METRIC, reference: str | None = None,
                      confidence: float = 0.95, n_resamples: int = 10_000,
                      seed: int = 0) -> pd.DataFrame:
    """Every config of ``run`` against ``reference`` on ``metric`` through
    :func:`harness.regression.compare.compare_runs` (the run on both sides), best first.

    Columns: ``config_id``, ``value`` (aggregate), ``diff`` (value - reference
    value), ``ci_lo``/``ci_hi`` (bootstrap CI of the mean paired difference),
    ``p_value`` (paired permutation test), ``wins``/``ties``/``losses``, ``n``,
    ``reference`` and ``note`` (why a CI is missing, e.g. infinite values)."""
    info, rows = scored_rows(run.table("metrics"), metric)
    agg = AGGREGATES.get(info.aggregate)
    value = {str(c): agg(g["value"].to_numpy(np.float64)) for c, g in rows.groupby("config_id")}
    ids = sorted(value)
    sign = 1.0 if info.higher_is_better else -1.0
    ranked = [ids[i] for i in order([sign * value[c] for c in ids], ids)]
    ref = reference or ranked[0]
    # the same run on both sides: its provenance trivially matches, hence force
    comp = compare_runs(run, run, configs=[(ref, c) for c in ranked], metrics=[info.name],
                        force=True, seed=seed, n_resamples=n_resamples, confidence=confidence)
    by_candidate = {m.config.candidate: m for m in comp.metrics}
    return pd.DataFrame([{
        "config_id": c, "value": value[c], "diff": by_candidate[c].difference,
        "ci_lo": by_candidate[c].ci_low, "ci_hi": by_candidate[c].ci_high,
        "p_value": by_candidate[c].p_value, "wins": by_candidate[c].wins,
        "ties": by_candidate[c].ties, "losses": by_candidate[c].losses, "n": by_candidate[c].n,
        "reference": c == by_candidate[c].config.base, "note": by_candidate[c].note}
        for c in ranked])


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
    """Questions (rows) by configs (columns) of one metric's per-question values
    (the questions in the metric's scope)."""
    _, rows = scored_rows(metrics, metric)
    wide = rows.pivot(index="question_id", columns="config_id", values="value").sort_index()
    return question_figure(wide, metric)


def png_base64(fig: Figure) -> str:
    """The figure as a base64 PNG string (100 dpi: inches x 100 = pixels)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _img(fig: Figure, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{png_base64(fig)}">'


def _table(df: pd.DataFrame) -> str:
    body = df.to_html(index=False, border=0, na_rep="-", classes="sortable",
                      float_format=lambda x: f"{x:.4g}")
    return f"<div class='scroll'>{body}</div>"


def _f(x: float, digits: int = 3, *, sign: bool = False) -> str:
    return "-" if not math.isfinite(x) else f"{x:{'+' if sign else ''}.{digits}f}"


def _headline_html(h: Headline) -> str:
    e = html.escape
    method = f"fusion method {h.method}: " if h.method else ""
    cards = [f"<div class='card'>best on {e(h.metric)}<b>{_f(h.best_value)}</b>"
             f"{e(method + h.best)}</div>"]
    if h.service is None:
        cards.append("<div class='card'>service config<b>-</b>no config of this run is "
                     "rrf k=60 over bm25+dense+boost with weights 1</div>")
    else:
        cards.append(f"<div class='card svc'>service config<b>{_f(h.service_value)}</b>"
                     f"{e(h.service)}</div>")
        if h.best == h.service:
            verdict = "The service config is the best config of this run."
        else:
            verdict = (f"best - service: {_f(h.diff, 3, sign=True)} (95% CI {_f(h.ci_lo, 3, sign=True)} "
                       f"to {_f(h.ci_hi, 3, sign=True)}, p = {_f(h.p_value)}; better on {h.wins}, "
                       f"worse on {h.losses}, tied on {h.ties} of {h.n} questions)")
        cards.append(f"<div class='card'>difference<b>{_f(h.diff, 3, sign=True)}</b>{e(verdict)}</div>")
    return "<div class='cards'>" + "".join(cards) + "</div>"


def _answers_html(run: Run) -> list[str]:
    """The answers section: outcomes, the answerers side by side
    (:func:`harness.answering.sidebyside.side_by_side`) and citations."""
    parts = ["<h2>Answers</h2>"]
    answers = run.table("answers")
    outcomes = pd.crosstab([answers["config_id"], answers["answerer"]], answers["outcome"])
    parts += ["<p class='note'>Outcomes per config and answerer.</p>",
              _table(outcomes.rename_axis(columns=None).reset_index())]
    if run.has_table("answer_metrics"):
        from harness.answering.sidebyside import LABELS, side_by_side

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
                  f"against {html.escape(sbs.baseline)} in <code>harness answerers</code>."
                  "</p>", _img(answers_figure(bars), "answer metrics per answerer"),
                  _table(rows)]
    if run.has_table("citations"):
        c = run.table("citations")
        cit = c.groupby(["config_id", "answerer"]).agg(
            markers=("n", "size"), dangling=("dangling", "mean"),
            relevant=("relevant", "mean")).reset_index()
        parts += ["<p class='note'>Citation markers: share dangling (no passage read at "
                  "that number) and share citing a relevant page.</p>", _table(cit)]
    if not run.has_table("citations"):  # an answers table written by hand, not by a run
        return parts
    from harness.answering.answers_view import answers_html, answers_view

    parts += ["<p class='note'>Per question: the read (relevant pages in green), each "
              "answerer's answer with its citations resolved to pages and marked right or "
              "wrong, fence and fact verdicts.</p>", answers_html(answers_view(run))]
    return parts


def render_html(run: Run, top_k: int = 5, metric: str | None = None, seed: int = 0,
                n_resamples: int = 10_000) -> str:
    """The report of ``run`` as one HTML string (see module docstring)."""
    metrics, configs, fused = run.table("metrics"), run.table("configs"), run.table("fused")
    metric = metric or (DEFAULT_METRIC if (metrics["metric"] == DEFAULT_METRIC).any()
                        else str(sorted(metrics["metric"].unique())[0]))
    service = service_config(configs)
    tables = run_band_tables(run, top_k=top_k)
    rrf = tuple(t for t in tables if t.anchors.method == "rrf")  # the anchor charts: RRF's scale
    comparison = config_comparison(run, metric, reference=service, seed=seed,
                                   n_resamples=n_resamples)
    top = headline(comparison, service, metric, config_methods(configs))
    per_method = best_per_method(comparison, configs)
    names = tuple(dict.fromkeys((metric, *HEADLINE_METRICS)))
    intervals = interval_frame(metrics, names, n_resamples=min(n_resamples, 2000), seed=seed)
    questions = run.table("questions") if run.has_table("questions") else None
    m, esc = run.manifest, html.escape
    goldset = (m.get("goldset") or {}).get("name", "?")
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width'>",
        f"<title>harness report {esc(run.run_id)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Run {esc(run.run_id)}</h1>",
        f"<p class='note'>gold set {esc(str(goldset))} · created {esc(str(m.get('created', '?')))}"
        f" · status {esc(str(m.get('status', '?')))} · {len(configs)} configs · "
        f"{len(questions) if questions is not None else '?'} questions · commit "
        f"{esc(str((m.get('git') or {}).get('commit') or '?')[:12])}</p>",
        _headline_html(top),
        f"<h2>Best setting of each fusion method: {esc(metric)}</h2>",
        f"<p class='note'>Each method's best config on this run, with its mean paired difference to "
        f"{esc(str(service or top.best))} and a 95% percentile bootstrap interval (in-sample: the "
        "best of many settings; <code>harness tune</code> gives held-out scores per method). Score "
        "axes per method: docs/fusion.md.</p>",
        _table(per_method) if len(per_method) > 1 else "",
        "<h2>Configs by metric</h2>",
        "<p class='note'>Mean over answerable questions with a 95% percentile bootstrap "
        "interval of the mean (medians have none). Red: the service config.</p>",
        _img(interval_figure(intervals, service), "configs by metric with intervals")
        if not intervals.empty else "",
        f"<h2>Against the {'service config' if service else 'best config'}: {esc(metric)}</h2>",
        f"<p class='note'>Mean paired difference to {esc(str(service or top.best))}, 95% "
        f"percentile bootstrap interval ({n_resamples} resamples, seed {seed}), paired "
        "permutation p-value. Click a column header to sort.</p>",
        _img(comparison_figure(comparison, metric), f"{metric} differences"),
        _table(comparison),
        f"<h2>Score bands (top {top_k})</h2>",
        "<p class='note'>Fused scores of the top-k chunks per config, grouped by the number "
        "of arms in the config, against the anchors arms/(k+1): one arm's #1 vote 1/61 = "
        "0.0164, two arms' 2/61 = 0.0328, the three-arm ceiling 3/61 = 0.0492 (weights 1, "
        "k = 60). Shaded: the healthy band, the 5th-95th percentile of the best relevant "
        "hit. Gate: the score/ceiling threshold on the top hit maximising Youden's J.</p>",
        "<p class='note'>Other fusion methods have no arms/(k+1) anchors: the table's "
        "<code>score_axis</code> says what each config's score means and its ceiling (a "
        "method without one, e.g. Borda or z-score CombSUM, has no ratio; its gate threshold is "
        "on the raw fused score). The charts show the RRF configs.</p>",
        _img(band_figure(fused, rrf), "fused scores per arm count against the anchors") if rrf else "",
        _table(overview_frame(tables).drop(columns=["name", "kind"])),
        "<details><summary>score / ceiling by arms voted, per config; band cells</summary>",
        _img(ratio_figure(fused, rrf), "score/ceiling by arms voted, relevant vs not") if rrf else "",
        _table(cells_frame(tables)), "</details>",
    ]
    if questions is not None and "language" in questions:
        lang = language_table(metrics, questions, metric, also=())
        if not lang.empty:
            parts += [f"<h2>Per question language: {esc(metric)}</h2>",
                      "<p class='note'>Answerable questions; n per language in the header.</p>",
                      _img(language_figure(lang, metric), f"{metric} per language")]
    if run.has_table("answers"):
        parts += _answers_html(run)
    parts += [
        "<h2>Summary per config</h2>",
        "<p class='note'>Ranking metrics: mean over answerable questions (median for "
        "first_rel_rank); ratio = top score / ceiling.</p>",
        _table(summary_frame(metrics, configs)),
        f"<details><summary>{esc(metric)} per question and config</summary>",
        _img(heatmap_figure(metrics, metric), f"{metric} per question and config"),
        "</details>",
        f"<script>{_JS}</script></body></html>",
    ]
    return "\n".join(p for p in parts if p)


def write_report(run: Run, out: Path, **options: object) -> Path:
    """Write :func:`render_html` of ``run`` to ``out`` (UTF-8) and return the path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(run, **options), encoding="utf-8")  # type: ignore[arg-type]
    return out
