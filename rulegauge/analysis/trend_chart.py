"""The report's trend section: this run among the earlier runs of its gold set.

When the run's folder holds other complete runs of the same gold set created before it,
:func:`trend_html` draws, from :func:`rulegauge.analysis.trend.trend` over the last
:data:`MAX_TREND_RUNS` of them (this run the newest): the metric per run for the service
config, the best config and each arm alone (those of this run), and the service config's
(else the best's) rank-1 score-band shares per run; the mean +- 3 sigma alerts of those
series on this run are listed. One run alone: no section. Earlier runs scored with other
metrics (``-m``) keep their place on the axis without a point; a run that cannot be opened
(a table failing its manifest hash) is left out, named in the section and logged.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from rulegauge.analysis.figures import MAX_WIDTH_IN, plain_text
from rulegauge.analysis.report_html import figure_grid, img, table_html
from rulegauge.analysis.trend import collect_runs, trend
from rulegauge.store.rundir import Run

MAX_TREND_RUNS = 20
LABEL_CHARS, LABEL_LINES = 18, 3  # a run id on the trend's x axis: up to 3 lines of 18 characters
log = logging.getLogger(__name__)

__all__ = ["MAX_TREND_RUNS", "run_labels", "trend_figure", "trend_html", "trend_runs"]


def trend_runs(run: Run) -> list[Path]:
    """Complete runs of ``run``'s gold set in its folder, oldest first, up to and including
    ``run``, at most :data:`MAX_TREND_RUNS`; ``[]`` when ``run`` is not among them."""
    goldset = (run.manifest.get("goldset") or {}).get("name")
    if goldset is None:
        return []
    runs = [p.resolve() for p in collect_runs(run.path.parent, goldset=str(goldset))]
    here = run.path.resolve()
    if here not in runs:
        return []
    return runs[: runs.index(here) + 1][-MAX_TREND_RUNS:]


def _rows(text: str, width: int) -> list[str]:
    """``text`` cut after its separators (``-_.:``) into rows of at most ``width`` characters
    (a part longer than ``width`` is cut every ``width`` characters)."""
    rows, row = [], ""
    parts = [p[i:i + width] for p in re.split(r"(?<=[-_.:])", text) for i in range(0, max(len(p), 1), width)]
    for part in parts:
        if row and len(row) + len(part) > width:
            rows.append(row)
            row = ""
        row += part
    return [*rows, row]


def _common_start(texts: Sequence[str]) -> str:
    """The longest text every one of ``texts`` starts with (character by character)."""
    first = min(texts, key=len, default="")
    for i, ch in enumerate(first):
        if any(t[i] != ch for t in texts):
            return first[:i]
    return first


def run_labels(run_ids: Sequence[str], width: int = LABEL_CHARS, lines: int = LABEL_LINES) -> list[str]:
    """Tick labels that tell the runs apart: each id whole, wrapped at its separators into at
    most ``lines`` rows of ``width`` characters; an id longer than that keeps the part that
    differs from the others (the prefix and suffix every id shares become "…") and, still too
    long, its head and tail around a "…". Two equal labels get the run's place added."""
    ids = [str(r) for r in run_ids]
    shortest = min((len(r) for r in ids), default=0)
    head = _common_start(ids) if len(ids) > 1 else ""
    tail = _common_start([r[::-1] for r in ids])[::-1] if len(ids) > 1 else ""
    tail = tail[len(tail) - max(0, min(len(tail), shortest - len(head))):]  # no overlap with head
    # cut at separators, so the token that differs stays whole with a word of context after it
    head = head[: max((head.rfind(c) for c in "-_.:"), default=-1) + 1]
    seps = [i for i, c in enumerate(tail) if c in "-_.:" and i > 0]
    tail = tail[seps[0]:] if seps else ""

    def fits(text: str) -> bool:
        rows = _rows(text, width)
        return len(rows) <= lines and all(len(r) <= width for r in rows)

    out = []
    for r in ids:
        text = r
        if not fits(text) and (head or tail):
            text = ("…" if head else "") + r[len(head): len(r) - len(tail)] + ("…" if tail else "")
        if not fits(text):
            keep = width * lines - 1 - lines  # room for the "…" and the rows' separators
            text = text[: keep // 2] + "…" + text[len(text) - (keep - keep // 2):]
        out.append("\n".join(row if len(row) <= width else row[: width - 1] + "…"
                             for row in _rows(text, width)[:lines]))
    counts: dict[str, int] = {}
    for label in out:
        counts[label] = counts.get(label, 0) + 1
    return [f"{label}\n(#{i + 1})" if counts[label] > 1 else label for i, label in enumerate(out)]


@plain_text
def trend_figure(values: pd.DataFrame, series: str, title: str, label: str) -> Figure:
    """One line per ``label`` column value of ``values`` (``run_id``, ``value``) over runs."""
    runs = list(dict.fromkeys(values["run_id"]))
    x = {r: i for i, r in enumerate(runs)}
    fig = Figure(figsize=(min(MAX_WIDTH_IN, 6.6), 3.6), layout="constrained")
    ax = fig.subplots()
    for name, g in values.groupby(label, sort=True):
        ax.plot([x[r] for r in g["run_id"]], g["value"], marker="o", ms=3, lw=1.3, label=str(name))
    ax.set_xticks(range(len(runs)), run_labels(runs), rotation=0 if len(runs) <= 6 else 40,
                  ha="center" if len(runs) <= 6 else "right", fontsize=7)
    ax.set_title(title, fontsize=10)
    ax.set_ylabel(series, fontsize=9)
    ax.tick_params(axis="y", labelsize=8)
    ax.grid(color="#eee")
    ax.legend(fontsize=7, loc="best")
    return fig


def trend_html(run: Run, metric: str, configs: Sequence[str], band_config: str) -> list[str]:
    """The trend section (module docstring), or ``[]`` with fewer than two runs."""
    runs = trend_runs(run)
    if len(runs) < 2:
        return []
    t = trend(runs, metrics=(metric,), configs=tuple(dict.fromkeys((*configs, band_config))))
    v = t.values
    metric_rows = v[(v["series"] == "metric") & v["config_id"].isin(set(configs))]
    band_rows = v[(v["series"] == "band") & (v["config_id"] == band_config)]
    charts = [img(trend_figure(metric_rows, metric, f"{metric} per run", "config_id"),
                  f"{metric} per run")]
    if len(band_rows):
        charts.append(img(trend_figure(band_rows, "share of questions",
                                       f"rank-1 score/ceiling band, {band_config}", "name"),
                          "score band shares per run"))
    alerts = pd.DataFrame([{"series": a.series, "config_id": a.config_id, "name": a.name,
                            "value": a.value, "mean": a.mean, "sigma": a.sigma,
                            "history": a.history, "direction": a.direction} for a in t.alerts])
    e = html.escape
    for why in t.skipped:
        log.warning("trend: run skipped: %s", why)
    left_out = (f"<p class='note'>Left out (cannot be opened): {e('; '.join(t.skipped))}.</p>"
                if t.skipped else "")
    gaps = f"<p class='note'>{e('; '.join(t.missing))} (scored with other metrics).</p>" if t.missing else ""
    return [
        "<h2>Trend over runs</h2>",
        f"<p class='note'>The last {len(runs)} complete runs of gold set "
        f"{e(str(t.goldset))} in this folder, this one the newest (<code>rulegauge trend</code> "
        "for every series). Bands: the share of questions whose rank-1 chunk's score/ceiling "
        "is below 1/3, 1/3 to 2/3, from 2/3. "
        + (f"{len(alerts)} series of this run outside mean +- 3 sigma of the earlier runs:"
           if len(alerts) else "No series of this run is outside mean +- 3 sigma of the earlier "
           f"runs ({t.checked} checked, {t.too_short} with too short a history).") + "</p>",
        left_out, gaps,
        table_html(alerts) if len(alerts) else "",
        figure_grid(charts, min_px=640),
    ]
