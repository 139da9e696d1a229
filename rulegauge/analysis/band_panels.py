"""Score bands as small multiples: one small chart per chosen config.

:func:`band_panel_figure` draws one config's top-k fused scores against the number of
arms that voted for each chunk (x), relevant chunks green and the rest grey (jittered
from a seeded local generator), the healthy band (5th-95th percentile of the best
relevant hit, :mod:`rulegauge.analysis.bands`) shaded across the panel, and for RRF the
anchors: m arms' #1 votes over (k+1) (1/61, 2/61, 3/61 at k = 60, weights 1; the last
is the ceiling), labelled on the right. Each panel is 340 x 260 px, so a page shows
them side by side in a 1400 px window and one per row on a 390 px phone, readable at
its natural size either way.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from rulegauge.analysis.figures import NOT_REL, REL, plain_text

if TYPE_CHECKING:
    from rulegauge.analysis.bands import BandTable

PANEL_IN = (3.4, 2.6)

__all__ = ["PANEL_IN", "band_panel_figure"]


@plain_text
def band_panel_figure(fused: pd.DataFrame, table: BandTable, seed: int = 0) -> Figure:
    """One config's band panel (see module docstring); ``fused`` holds that config's
    rows (other configs' rows are ignored)."""
    rng = np.random.default_rng(seed)
    t, a = table, table.anchors
    f = fused[(fused["config_id"] == t.config_id) & (fused["fused_rank"] <= t.top_k)]
    n = max(len(a.arms), 1)
    fig = Figure(figsize=PANEL_IN, layout="constrained")
    ax = fig.subplots()
    band = t.bands[0]
    if math.isfinite(band.score_lo) and math.isfinite(band.score_hi):
        ax.axhspan(band.score_lo, band.score_hi, color=REL, alpha=0.15, lw=0,
                   label="healthy band")
    voted = f["arms_voted"].to_numpy(float) if "arms_voted" in f else np.ones(len(f))
    rel = f["relevant"].astype(bool).to_numpy()
    score = f["fused_score"].to_numpy(float)
    for mask, colour, dx, label in ((~rel, NOT_REL, -0.12, "not relevant"),
                                    (rel, REL, 0.12, "relevant")):
        x = voted[mask] + dx + rng.uniform(-0.08, 0.08, int(mask.sum()))
        ax.scatter(x, score[mask], s=6, color=colour, alpha=0.6, lw=0, label=label)
    top = 0.0
    for m, anchor in enumerate(a.vote_tops if a.method == "rrf" else (), start=1):
        ax.axhline(anchor, color="#333" if m == n else "#999", lw=0.8, ls="-" if m == n else "--")
        ax.annotate(f"{'ceiling' if m == n else f'{m} #1'} {anchor:.4f}", (n + 0.45, anchor),
                    fontsize=6.5, va="bottom", ha="right", color="#333")
        top = max(top, anchor)
    finite = score[np.isfinite(score)]
    hi = max(top, float(finite.max()) if len(finite) else 0.0)
    lo = min(0.0, float(finite.min()) if len(finite) else 0.0)
    ax.set_ylim(lo, hi * 1.1 if hi > 0 else 1.0)
    ax.set_xlim(0.5, n + 0.5)
    ax.set_xticks(range(1, n + 1))
    ax.set_xlabel("arms voted", fontsize=7)
    ax.set_ylabel(f"fused score (top {t.top_k})", fontsize=7)
    ax.tick_params(labelsize=7)
    title = t.name if len(t.name) <= 40 else t.name[:39] + "…"
    ax.set_title(title, fontsize=8)
    ax.grid(axis="y", color="#f0f0f0")
    return fig
