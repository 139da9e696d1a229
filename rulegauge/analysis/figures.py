"""The report's charts, as matplotlib ``Figure`` objects (no pyplot state).

Shared by :mod:`rulegauge.analysis.report` and the notebooks. Every figure is sized for
a 1400 px page at 100 dpi (at most 13.4 in wide) with labels of 9-11 pt so they stay
readable when the PNG is shown at its natural size.

* :func:`interval_figure`: configs by metric, the mean with its bootstrap interval;
* :func:`band_figure`: fused scores of the top k per number of arms in the config,
  against the arms/(k+1) anchors (one arm's #1 vote, two arms', the ceiling);
* :func:`language_figure`: per-language heat map, values written in the cells;
* :func:`comparison_figure`: forest plot of paired differences to a reference;
* :func:`question_figure`: questions by configs heat map of one metric;
* :func:`ratio_figure`: score/ceiling by arms voted, one panel per config;
* :func:`answers_figure`: answer metrics per answerer, grouped bars.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from rulegauge.analysis.bands import BandTable

MAX_WIDTH_IN = 13.4
REL, NOT_REL, SERVICE, BEST = "#2a9d55", "#9a9a9a", "#d1495b", "#264653"


_P = ParamSpec("_P")


def plain_text(build: Callable[_P, Figure]) -> Callable[_P, Figure]:
    """Build a figure with every text taken literally: ids, arm names and titles come
    from users, and ``$x$`` would otherwise be read as mathtext (a lone ``$`` is a
    ParseException when the figure is drawn). The text is escaped for matplotlib, as
    it is for HTML in the report."""
    @functools.wraps(build)
    def wrapped(*args: _P.args, **kwargs: _P.kwargs) -> Figure:
        with mpl.rc_context({"text.parse_math": False, "text.usetex": False}):
            return build(*args, **kwargs)
    return wrapped


@plain_text
def interval_figure(frame: pd.DataFrame, service: str | None = None,
                    width_in: float = MAX_WIDTH_IN) -> Figure:
    """One panel per metric: each config's aggregate (dot) with its interval (bar).

    ``frame`` columns: ``metric``, ``config_id``, ``value``, ``lo``, ``hi``; configs
    are drawn in the order of the frame's first metric (best on top). The service
    config is drawn in red. ``width_in``: the figure's width in inches."""
    metrics = list(dict.fromkeys(frame["metric"]))
    configs = list(dict.fromkeys(frame[frame["metric"] == metrics[0]]["config_id"]))
    n = len(metrics)
    fig = Figure(figsize=(min(width_in, MAX_WIDTH_IN), 0.32 * len(configs) + 1.6),
                 layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, n, sharey=True, squeeze=False)).ravel()
    y = {c: len(configs) - 1 - i for i, c in enumerate(configs)}
    for ax, metric in zip(axes, metrics, strict=True):
        f = frame[frame["metric"] == metric]
        for row in f.itertuples(index=False):
            colour = SERVICE if row.config_id == service else BEST
            ok = np.isfinite(row.lo) and np.isfinite(row.hi)
            if ok:
                ax.plot([row.lo, row.hi], [y[row.config_id]] * 2, color=colour, lw=2, alpha=.6)
            ax.plot([row.value], [y[row.config_id]], "o", color=colour, ms=5)
        ax.set_title(metric, fontsize=11)
        ax.grid(axis="x", color="#eee")
        ax.tick_params(labelsize=9)
    axes[0].set_yticks(list(y.values()), list(y), fontsize=9)
    fig.supxlabel("mean over answerable questions, 95% BCa bootstrap interval "
                  "(red: the service config)", fontsize=9)
    return fig


@plain_text
def band_figure(fused: pd.DataFrame, tables: tuple[BandTable, ...]) -> Figure:
    """Fused scores of the top-k chunks, one panel per number of arms and k.

    Per config: relevant (green) and non-relevant (grey) chunks as jittered dots, the
    healthy band (5th-95th percentile of the best relevant hit) as a shaded bar, and
    the config's anchors as ticks: m arms' #1 votes over (k+1) for m = 1..arms (for
    weights 1, k=60: 1/61 = 0.0164, 2/61 = 0.0328, 3/61 = 0.0492, the last the
    ceiling), labelled at the panel's right edge. Each panel has its own score axis,
    so k=60 configs are not squashed under k=20 ones (whose ceiling is 3/21).
    Jitter comes from a seeded local generator."""
    rng = np.random.default_rng(0)
    groups: dict[tuple[int, float], list[BandTable]] = {}
    for t in tables:
        n = len(t.anchors.arms)
        groups.setdefault((n, t.anchors.k if n > 1 else 0.0), []).append(t)
    keys = sorted(groups, key=lambda g: (g[0] == 1, -g[1], -g[0]))
    widths = [len(groups[g]) + 0.9 for g in keys]
    fig = Figure(figsize=(MAX_WIDTH_IN, 5.2), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(keys), squeeze=False, width_ratios=widths)).ravel()
    by_config = dict(iter(fused.groupby("config_id", sort=False)))
    for ax, key in zip(axes, keys, strict=True):
        members, n = groups[key], key[0]
        for x, t in enumerate(members):
            f = by_config.get(t.config_id, fused.iloc[:0])
            top = f[f["fused_rank"] <= t.top_k]
            for rel, colour, dx in ((False, NOT_REL, -0.12), (True, REL, 0.12)):
                v = top.loc[top["relevant"].astype(bool) == rel, "fused_score"].to_numpy(float)
                ax.scatter(x + dx + rng.uniform(-0.08, 0.08, len(v)), v, s=7, color=colour,
                           alpha=0.55, lw=0, label="relevant" if rel else "not relevant")
            band = t.bands[0]
            if math.isfinite(band.score_lo) and math.isfinite(band.score_hi):
                ax.add_patch(_rect(x + 0.28, band.score_lo, 0.1, band.score_hi - band.score_lo))
            for m, anchor in enumerate(t.anchors.vote_tops, start=1):
                ax.plot([x - 0.4, x + 0.4], [anchor, anchor], color="#333" if m == n else "#888",
                        lw=1.2 if m == n else 0.8, ls="-" if m == n else "--")
        for m, anchor in enumerate(members[0].anchors.vote_tops, start=1):
            label = "ceiling" if m == n else f"{m} arm{'s' if m > 1 else ''} #1"
            ax.annotate(f"{label}\n{anchor:.4f}", (len(members) - 0.5, anchor), fontsize=8,
                        va="center", color="#333", annotation_clip=False)
        ax.set_xticks(range(len(members)), [t.name for t in members], rotation=30,
                      ha="right", fontsize=9)
        ax.set_xlim(-0.6, len(members) + 0.55)
        ax.set_ylim(0, max(t.anchors.ceiling for t in members) * 1.12)
        title = f"{n} arm{'s' if n > 1 else ''}" + (f", k={key[1]:g}" if n > 1 else "")
        ax.set_title(title, fontsize=11)
        ax.tick_params(axis="y", labelsize=8)
        ax.grid(axis="y", color="#f0f0f0")
    axes[0].set_ylabel(f"fused score (top {tables[0].top_k if tables else 5})", fontsize=10)
    handles = {h.get_label(): h for ax in axes for h in ax.get_legend_handles_labels()[0]}
    handles["healthy band (p5-p95 best relevant)"] = _rect(0, 0, 1, 1)
    fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=3,
               fontsize=9, markerscale=2)
    return fig


def _rect(x: float, y: float, w: float, h: float):  # type: ignore[no-untyped-def]
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, color=REL, alpha=0.25, lw=0)


def _luminance(rgb: tuple[float, ...]) -> float:
    """WCAG 2 relative luminance of an sRGB colour (components in [0, 1])."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def text_colour(background: tuple[float, ...]) -> str:
    """Black or white, whichever contrasts more with ``background`` (WCAG 2 contrast
    ratio; the better of the two is at least 4.58:1): no dark label on a dark cell."""
    lum = _luminance(background)
    return "black" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "white"


@plain_text
def language_figure(table: pd.DataFrame, metric: str) -> Figure:
    """Configs (rows) by question language (columns) of ``metric`` from
    :func:`rulegauge.metrics.languages.language_table`, the value written in each cell."""
    wide = table.pivot(index="config_id", columns="language", values=metric)
    wide = wide.reindex(list(dict.fromkeys(table["config_id"])))
    counts = table.groupby("language")["n"].max()
    fig = Figure(figsize=(min(MAX_WIDTH_IN, 1.1 * wide.shape[1] + 4.5),
                          0.36 * wide.shape[0] + 1.6), layout="constrained")
    ax = fig.subplots()
    values = wide.to_numpy(float)
    im = ax.imshow(values, aspect="auto", cmap="viridis", vmin=0, vmax=1,
                   interpolation="nearest")
    for (i, j), v in np.ndenumerate(values):
        if math.isfinite(v):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=9,
                    color=text_colour(tuple(float(c) for c in np.ravel(im.cmap(im.norm(v))))))
    ax.set_xticks(range(wide.shape[1]), [f"{c} (n={counts[c]})" for c in wide.columns],
                  fontsize=10)
    ax.xaxis.tick_top()
    ax.set_yticks(range(wide.shape[0]), list(wide.index), fontsize=9)
    fig.colorbar(im, ax=ax, label=f"{metric} (answerable questions)", shrink=0.8)
    return fig


@plain_text
def comparison_figure(comparison: pd.DataFrame, metric: str) -> Figure:
    """Forest plot: mean paired difference to the reference with its interval."""
    c = comparison.iloc[::-1]
    fig = Figure(figsize=(9, 0.32 * len(c) + 1.3), layout="constrained")
    ax = fig.subplots()
    y = np.arange(len(c))
    ok = np.isfinite(c["ci_lo"].to_numpy(float)) & np.isfinite(c["diff"].to_numpy(float))
    ax.errorbar(c["diff"][ok], y[ok], xerr=[(c["diff"] - c["ci_lo"])[ok],
                                            (c["ci_hi"] - c["diff"])[ok]],
                fmt="o", color=BEST, capsize=3)
    ax.axvline(0, color="#999", lw=.8)
    ax.set_yticks(y, list(c["config_id"]), fontsize=9)
    ref = comparison.loc[comparison["reference"], "config_id"].iloc[0]
    ax.set_xlabel(f"{metric}: config - {ref} (BCa bootstrap CI of the mean paired difference)",
                  fontsize=9)
    return fig


@plain_text
def question_figure(wide: pd.DataFrame, metric: str) -> Figure:
    """Questions (rows) by configs (columns) of one metric's per-question values."""
    fig = Figure(figsize=(min(MAX_WIDTH_IN, 0.55 * wide.shape[1] + 3.5),
                          0.2 * wide.shape[0] + 2.2), layout="constrained")
    ax = fig.subplots()
    im = ax.imshow(wide.to_numpy(float), aspect="auto", cmap="viridis", interpolation="nearest")
    ax.set_xticks(range(wide.shape[1]), list(wide.columns), rotation=45, ha="right", fontsize=9)
    ax.set_yticks(range(wide.shape[0]), list(wide.index), fontsize=8)
    fig.colorbar(im, ax=ax, label=metric, shrink=0.6)
    return fig


@plain_text
def ratio_figure(fused: pd.DataFrame, tables: tuple[BandTable, ...]) -> Figure:
    """Box plots of ``score_ratio`` in the top k by arm count, relevant (green)
    against not (grey), one panel per config; dashed lines mark the anchors
    (m arms' #1 votes over the ceiling). Unused panels of the grid are hidden."""
    n = max(len(tables), 1)
    cols = min(n, 4)
    rows_ = math.ceil(n / cols)
    fig = Figure(figsize=(min(MAX_WIDTH_IN, 3.3 * cols), 2.8 * rows_), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows_, cols, squeeze=False)).ravel()
    groups = dict(iter(fused.groupby("config_id", sort=False)))
    for ax, t in zip(axes, tables, strict=False):
        f = groups.get(t.config_id, fused.iloc[:0])
        top = f[f["fused_rank"] <= t.top_k]
        for m in range(1, len(t.anchors.arms) + 1):
            ax.axhline(t.anchors.vote_tops[m - 1] / t.anchors.ceiling, color="#bbb", ls="--", lw=.8)
            for rel, dx, colour in ((False, -0.18, NOT_REL), (True, 0.18, REL)):
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
        ax.remove()
    return fig


@plain_text
def answers_figure(frame: pd.DataFrame) -> Figure:
    """Horizontal grouped bars: one group per answer metric (0-1 scale), one bar per
    answerer, the value written beside it. ``frame`` columns: ``answerer``,
    ``metric``, ``value`` (NaN bars are left out)."""
    metrics = list(dict.fromkeys(frame["metric"]))
    answerers = list(dict.fromkeys(frame["answerer"]))
    height = 0.28 * len(metrics) * max(len(answerers), 1) + 1.4
    fig = Figure(figsize=(9, height), layout="constrained")
    ax = fig.subplots()
    bar = 0.8 / max(len(answerers), 1)
    y0 = np.arange(len(metrics))[::-1]
    for i, a in enumerate(answerers):
        f = frame[frame["answerer"] == a].set_index("metric").reindex(metrics)
        y = y0 + ((len(answerers) - 1) / 2 - i) * bar
        v = f["value"].to_numpy(float)
        ax.barh(y, np.nan_to_num(v), bar * 0.92, label=a)
        for yy, vv in zip(y, v, strict=True):
            ax.annotate("-" if not math.isfinite(vv) else f"{vv:.2f}",
                        (np.nan_to_num(vv) + 0.01, yy), va="center", fontsize=8)
    ax.set_yticks(y0, metrics, fontsize=10)
    ax.set_xlim(0, 1.1)
    ax.set_xlabel("mean over the metric's scope", fontsize=10)
    fig.legend(fontsize=9, loc="outside upper center", ncols=min(len(answerers), 3))
    ax.grid(axis="x", color="#eee")
    return fig
