"""The values one run gives the trend series (:mod:`rulegauge.analysis.trend`).

:func:`run_series` reads a retrieval run's ``metrics`` and stored ``fused`` rows;
:func:`ruling_series` a rulings run's ``ruling_decodes``. Both return rows
``series, config_id, name, value`` (definitions in :mod:`rulegauge.analysis.trend`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from rulegauge.core.errors import RulegaugeError
from rulegauge.store.rundir import Run

BANDS = (("low", 0.0, 1 / 3), ("mid", 1 / 3, 2 / 3), ("high", 2 / 3, np.inf))
"""Score-ratio bands of the rank-1 chunk: [low, high) each."""
RULINGS_CONFIG = "production"
COLUMNS = ["series", "config_id", "name", "value"]


def _rows(series: str, config_id: str, values: dict[str, float]) -> list[dict[str, object]]:
    return [{"series": series, "config_id": config_id, "name": n, "value": float(v)} for n, v in values.items()]


def _band_shares(ratios: pd.Series, n_questions: int) -> dict[str, float]:
    return {name: float(((ratios >= lo) & (ratios < hi)).sum()) / n_questions for name, lo, hi in BANDS}


def _metric_rows(run: Run, metrics: Sequence[str]) -> list[dict[str, object]]:
    m = run.arrow("metrics", ["config_id", "metric", "value", "answerable"]).to_pandas()
    if metrics:  # a run scored with other metrics (-m) gives none of them: no rows, no error
        m = m[m["metric"].isin(metrics)]
    means = m[m["answerable"]].groupby(["config_id", "metric"], sort=True)["value"].mean()
    return [{"series": "metric", "config_id": c, "name": n, "value": float(v)} for (c, n), v in means.items()]


def _fused_rows(run: Run, n_questions: int) -> list[dict[str, object]]:
    if not run.has_table("fused"):
        return []
    names = pq.read_schema(run.path / "fused.parquet").names
    ranks = [c for c in names if c.startswith("rank_")]
    f = run.arrow("fused", ["config_id", "fused_rank", "score_ratio", *ranks]).to_pandas()
    out: list[dict[str, object]] = []
    for cid, g in f.groupby("config_id", sort=True, observed=True):
        top = g[g["fused_rank"] == 1]
        ratios = top["score_ratio"].dropna()
        if len(ratios):
            out += _rows("band", str(cid), _band_shares(ratios, n_questions))
        arms = [c for c in ranks if g[c].notna().any()]
        out += _rows("top1_arm", str(cid), {c[5:]: top[c].notna().sum() / n_questions for c in arms})
        out += _rows("voted_arm", str(cid), {c[5:]: g[c].notna().mean() for c in arms})
    return out


def run_series(run: Run, metrics: Sequence[str] = ()) -> pd.DataFrame:
    """A retrieval run's series values (metric means, band and arm shares per config);
    of ``metrics`` (default all) those the run scored: a metric it lacks has no rows."""
    n_questions = int(run.arrow("questions", ["question_id"]).num_rows)
    if n_questions == 0:
        raise RulegaugeError(f"run {run.run_id} has no questions")
    return pd.DataFrame(_metric_rows(run, metrics) + _fused_rows(run, n_questions), columns=COLUMNS)


def ruling_series(run: Run) -> pd.DataFrame:
    """A rulings run's series values: rank-1 band shares and decoded arm shares of the
    ruling pages (config ``production``)."""
    d = run.table("ruling_decodes")
    pages = int(run.arrow("rulings", ["question_id"]).num_rows)
    if pages == 0:
        raise RulegaugeError(f"rulings run {run.run_id} has no pages")
    top = d[d["fused_rank"] == 1]
    rows = _rows("band", RULINGS_CONFIG, _band_shares(top["score_ratio"].dropna(), pages))
    if "ranks" in top.columns:
        decoded = [list(r) for r in top["ranks"] if isinstance(r, list | tuple | np.ndarray)]
        n_arms = max((len(r) for r in decoded), default=0)
        voted = {f"arm{i + 1}": sum(r[i] is not None and r[i] == r[i] for r in decoded) / pages
                 for i in range(n_arms)}  # r[i] == r[i] is False for NaN
        rows += _rows("top1_arm", RULINGS_CONFIG, voted)
    return pd.DataFrame(rows, columns=COLUMNS)
