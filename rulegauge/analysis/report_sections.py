"""Report sections for real grids: metric against k / weight, score bands as small
multiples of the chosen configs, and the search time per arm and config
(:mod:`rulegauge.analysis.report`)."""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd

from rulegauge.analysis.band_panels import band_panel_figure
from rulegauge.analysis.bands import BandTable
from rulegauge.analysis.report_html import figure_grid, img, table_html
from rulegauge.analysis.sweeps import sweep_figure, sweep_frame, sweep_params

__all__ = ["bands_html", "latency_html", "sweeps_html"]


def latency_html(latency: pd.DataFrame | None, configs: pd.DataFrame, chosen: Sequence[str]) -> list[str]:
    """The search time p50 / p95 per arm and per charted config (:mod:`rulegauge.metrics.latency`);
    nothing for a run without the ``search_latency`` table (``latency`` None)."""
    from rulegauge.metrics.latency import latency_rows

    if latency is None:
        return []
    rows = latency_rows(latency, configs, chosen)
    frame = pd.DataFrame([{"arm / config": f"{r.what} {r.name}", "timing": r.timing, "questions": r.n,
                           "p50 ms": r.p50, "p95 ms": r.p95} for r in rows])
    return ["<h2>Search time</h2>",
            "<p class='note'>Per question, in ms: the <code>http</code> arm's calls timed one by one "
            "(the preflight's warm-up call excluded), an in-process arm's batch search shared evenly "
            "by its questions (p50 = p95); a config's is the sum of its arms'. Gate it with "
            "<code>[metrics.search_p50_ms] max_increase = 50</code> (percent; docs/gate.md). "
            "Method: docs/metrics.md.</p>", table_html(frame)] if len(frame) else []


def sweeps_html(configs: pd.DataFrame, comparison: pd.DataFrame, metric: str,
                chosen: Sequence[str], service: str | None) -> list[str]:
    """One chart per swept parameter (RRF k, each arm's weight) over *every* config of
    the run on a line; nothing when the grid sweeps none."""
    values = comparison.set_index("config_id")["value"]
    params = sweep_params(configs)
    if not params:
        return []
    parts = [f"<h2>{html.escape(metric)} against fusion parameters</h2>",
             "<p class='note'>One line per arm subset (and per held setting of the other "
             "parameters when a subset has several): every config of the run that differs "
             "from its neighbours on the line only in the swept parameter. Ringed: the charted "
             "configs; red: the service config.</p>"]
    charts = []
    for param in params:
        frame = sweep_frame(configs, values, param)
        what = "k" if param == "k" else f"the weight of {param.split(':', 1)[1]}"
        charts.append(img(sweep_figure(frame, metric, tuple(chosen), service),
                          f"{metric} against {what}"))
    return [*parts, figure_grid(charts, min_px=640)]


def bands_html(fused: pd.DataFrame, shown: tuple[BandTable, ...], overview: pd.DataFrame,
               cells: pd.DataFrame, top_k: int) -> list[str]:
    """Score bands: one small panel per charted config (``shown``), the ``overview``
    table (every config), the band ``cells`` (charted configs) folded away."""
    by_config = dict(iter(fused.groupby("config_id", sort=False)))
    panels = [img(band_panel_figure(by_config.get(t.config_id, fused.iloc[:0]), t),
                  f"score bands of {t.config_id}") for t in shown]
    return [
        f"<h2>Score bands (top {top_k})</h2>",
        "<p class='note'>One panel per charted config: its top-k fused scores by the number "
        "of arms that voted for the chunk, relevant green, the rest grey, against the anchors "
        "arms/(k+1) (one arm's #1 vote 1/61 = 0.0164, two arms' 2/61 = 0.0328, the three-arm "
        "ceiling 3/61 = 0.0492 at weights 1, k = 60). Shaded: the healthy band, the 5th-95th "
        "percentile of the best relevant hit. Gate: the score/ceiling threshold on the top hit "
        "maximising Youden's J.</p>",
        "<p class='note'>Other fusion methods have no arms/(k+1) anchors: the table's "
        "<code>score_axis</code> says what each config's score means and its ceiling (a method "
        "without one, e.g. Borda or z-score CombSUM, has no ratio; its gate threshold is on the "
        "raw fused score).</p>",
        figure_grid(panels) if panels else "",
        table_html(overview, tall=len(overview) > 40),
        "<details><summary>band cells of the charted configs</summary>",
        table_html(cells), "</details>",
    ]
