"""One self-contained HTML report of a run: summary, score bands, config comparison.

The file embeds every figure as a base64 PNG (matplotlib ``Figure`` objects drawn
with the Agg renderer, no pyplot state) and inline CSS, and references nothing
outside itself, so it opens offline and can be mailed around.

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
from harness.analysis.summary import summary_frame
from harness.core.errors import HarnessError
from harness.core.ordering import order
from harness.metrics.info import AGGREGATES, SCOPES, MetricInfo, metric_info
from harness.regression.compare import compare_runs
from harness.store.rundir import Run

DEFAULT_METRIC = "recall@5"
_CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;font-size:12px;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#f2f2f2}
td:first-child,th:first-child{text-align:left}img{max-width:100%}.note{color:#555}"""


def _rows_in_scope(metrics: pd.DataFrame, metric: str) -> tuple[MetricInfo, pd.DataFrame]:
    info = metric_info(metric)
    if info is None:
        raise HarnessError(f"metric {metric!r} has no known direction; choose one of: "
                           f"{', '.join(sorted(metrics['metric'].unique()))}")
    rows = metrics[metrics["metric"] == info.name]
    rows = rows[SCOPES.get(info.scope)(rows)]
    if rows.empty:
        raise HarnessError(f"no {info.name} rows in scope ({info.scope}); metrics present: "
                           f"{', '.join(sorted(metrics['metric'].unique()))}")
    return info, rows


def config_comparison(run: Run, metric: str = DEFAULT_METRIC, reference: str | None = None,
                      confidence: float = 0.95, n_resamples: int = 10_000,
                      seed: int = 0) -> pd.DataFrame:
    """Every config of ``run`` against ``reference`` on ``metric`` through
    :func:`harness.regression.compare.compare_runs` (the run on both sides), best first.

    Columns: ``config_id``, ``value`` (aggregate), ``diff`` (value - reference
    value), ``ci_lo``/``ci_hi`` (bootstrap CI of the mean paired difference),
    ``p_value`` (paired permutation test), ``wins``/``ties``/``losses``, ``n``,
    ``reference`` and ``note`` (why a CI is missing, e.g. infinite values)."""
    info, rows = _rows_in_scope(run.table("metrics"), metric)
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
            "config_id": t.config_id, "name": t.name, "kind": t.kind, "n_arms": len(a.arms),
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


def ratio_figure(fused: pd.DataFrame, tables: tuple[BandTable, ...]) -> Figure:
    """Box plots of ``score_ratio`` in the top k by arm count, relevant (green)
    against not (grey), one panel per config; dashed lines mark the anchors
    (m arms' #1 votes over the ceiling)."""
    n = max(len(tables), 1)
    cols = min(n, 3)
    rows_ = math.ceil(n / cols)
    fig = Figure(figsize=(4.2 * cols, 3.2 * rows_), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows_, cols, squeeze=False)).ravel()
    groups = dict(iter(fused.groupby("config_id", sort=False)))
    for ax, t in zip(axes, tables, strict=False):
        f = groups.get(t.config_id, fused.iloc[:0])
        top = f[f["fused_rank"] <= t.top_k]
        for m in range(1, len(t.anchors.arms) + 1):
            ax.axhline(t.anchors.vote_tops[m - 1] / t.anchors.ceiling, color="#bbb", ls="--", lw=.8)
            for rel, dx, colour in ((False, -0.18, "#999"), (True, 0.18, "#2a9d55")):
                v = top[(top["arms_voted"] == m) & (top["relevant"] == rel)]["score_ratio"]
                if len(v):
                    ax.boxplot([v.to_numpy(float)], positions=[m + dx], widths=0.3,
                               patch_artist=True, manage_ticks=False,
                               boxprops={"facecolor": colour}, medianprops={"color": "k"},
                               label="relevant" if rel else "not relevant")
        ax.set_xticks(range(1, len(t.anchors.arms) + 1))
        ax.set_xlim(0.5, len(t.anchors.arms) + 0.5)
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{t.name} (top {t.top_k})", fontsize=9)
        ax.set_xlabel("arms voted", fontsize=8)
        ax.set_ylabel("score / ceiling", fontsize=8)
    handles = {h.get_label(): h for ax in axes for h in ax.get_legend_handles_labels()[0]}
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=2)
    for ax in axes[len(tables):]:
        ax.set_visible(False)
    return fig


def comparison_figure(comparison: pd.DataFrame, metric: str) -> Figure:
    """Forest plot: mean paired difference to the reference with its interval."""
    c = comparison.iloc[::-1]
    fig = Figure(figsize=(7, 0.35 * len(c) + 1.2), layout="constrained")
    ax = fig.subplots()
    y = np.arange(len(c))
    ok = np.isfinite(c["ci_lo"].to_numpy(float)) & np.isfinite(c["diff"].to_numpy(float))
    ax.errorbar(c["diff"][ok], y[ok], xerr=[(c["diff"] - c["ci_lo"])[ok],
                                            (c["ci_hi"] - c["diff"])[ok]],
                fmt="o", color="#264653", capsize=3)
    ax.axvline(0, color="#999", lw=.8)
    ax.set_yticks(y, list(c["config_id"]), fontsize=8)
    ref = comparison.loc[comparison["reference"], "config_id"].iloc[0]
    ax.set_xlabel(f"{metric}: config - {ref} (bootstrap CI of the mean paired difference)",
                  fontsize=8)
    return fig


def heatmap_figure(metrics: pd.DataFrame, metric: str = DEFAULT_METRIC) -> Figure:
    """Questions (rows) by configs (columns) of one metric's per-question values."""
    _, rows = _rows_in_scope(metrics, metric)
    wide = rows.pivot(index="question_id", columns="config_id", values="value").sort_index()
    fig = Figure(figsize=(0.5 * wide.shape[1] + 3, 0.22 * wide.shape[0] + 2), layout="constrained")
    ax = fig.subplots()
    im = ax.imshow(wide.to_numpy(float), aspect="auto", cmap="viridis", interpolation="nearest")
    ax.set_xticks(range(wide.shape[1]), list(wide.columns), rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(wide.shape[0]), list(wide.index), fontsize=6)
    fig.colorbar(im, ax=ax, label=metric)
    return fig


def png_base64(fig: Figure) -> str:
    """The figure as a base64 PNG string."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _img(fig: Figure, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{png_base64(fig)}">'


def _table(df: pd.DataFrame) -> str:
    return df.to_html(index=False, border=0, na_rep="-", float_format=lambda x: f"{x:.4g}")


def render_html(run: Run, top_k: int = 5, metric: str | None = None, seed: int = 0,
                n_resamples: int = 10_000) -> str:
    """The report of ``run`` as one HTML string (see module docstring)."""
    metrics, configs, fused = run.table("metrics"), run.table("configs"), run.table("fused")
    metric = metric or (DEFAULT_METRIC if (metrics["metric"] == DEFAULT_METRIC).any()
                        else str(sorted(metrics["metric"].unique())[0]))
    tables = run_band_tables(run, top_k=top_k)
    comparison = config_comparison(run, metric, seed=seed, n_resamples=n_resamples)
    m = run.manifest
    esc = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>harness report {esc(run.run_id)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Run {esc(run.run_id)}</h1>",
        f"<p class='note'>created {esc(str(m.get('created', '?')))} · status "
        f"{esc(str(m.get('status', '?')))} · {len(configs)} configs · "
        f"{run.table('questions').shape[0] if run.has_table('questions') else '?'} questions</p>",
        "<h2>Summary per config</h2>",
        "<p class='note'>Ranking metrics: mean over answerable questions (median for "
        "first_rel_rank); ratio = top score / ceiling.</p>",
        _table(summary_frame(metrics, configs)),
        f"<h2>Score bands (top {top_k})</h2>",
        "<p class='note'>Anchors: one arm's #1 vote w/(k+1), two arms' #1 votes, the "
        "ceiling sum(w)/(k+1). Band: 5th-95th percentile of the best relevant hit. Gate: "
        "score/ceiling threshold on the top hit maximising Youden's J.</p>",
        _table(overview_frame(tables)),
        _img(ratio_figure(fused, tables), "score/ceiling by arms voted, relevant vs not"),
        _table(cells_frame(tables)),
        f"<h2>Config comparison: {esc(metric)}</h2>",
        f"<p class='note'>Mean paired difference to the reference, 95% percentile "
        f"bootstrap interval ({n_resamples} resamples, seed {seed}).</p>",
        _table(comparison),
        _img(comparison_figure(comparison, metric), f"{metric} differences"),
        _img(heatmap_figure(metrics, metric), f"{metric} per question and config"),
        "</body></html>",
    ]
    return "\n".join(parts)


def write_report(run: Run, out: Path, **options: object) -> Path:
    """Write :func:`render_html` of ``run`` to ``out`` (UTF-8) and return the path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(run, **options), encoding="utf-8")  # type: ignore[arg-type]
    return out
