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
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from rulegauge.analysis.figures import MAX_WIDTH_IN, plain_text
from rulegauge.analysis.report_html import figure_grid, img, table_html
from rulegauge.analysis.trend import collect_runs, trend
from rulegauge.store.rundir import Run

MAX_TREND_RUNS = 20
log = logging.getLogger(__name__)

__all__ = ["MAX_TREND_RUNS", "trend_figure", "trend_html", "trend_runs"]


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


@plain_text
def trend_figure(values: pd.DataFrame, series: str, title: str, label: str) -> Figure:
    """One line per ``label`` column value of ``values`` (``run_id``, ``value``) over runs."""
    runs = list(dict.fromkeys(values["run_id"]))
    x = {r: i for i, r in enumerate(runs)}
    fig = Figure(figsize=(min(MAX_WIDTH_IN, 6.6), 3.6), layout="constrained")
    ax = fig.subplots()
    for name, g in values.groupby(label, sort=True):
        ax.plot([x[r] for r in g["run_id"]], g["value"], marker="o", ms=3, lw=1.3, label=str(name))
    ax.set_xticks(range(len(runs)), [r[-15:] for r in runs], rotation=35, ha="right", fontsize=7)
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
