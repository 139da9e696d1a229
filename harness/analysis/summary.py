"""Per-config summary of a run's metrics (means over answerable questions)."""

from __future__ import annotations

import pandas as pd

from harness.metrics.info import aggregate, resolve
from harness.metrics.ranking import DEFAULT_METRICS

SUMMARY_METRICS = ("hit@1", "hit@5", "recall@5", "MRR@10", "nDCG@10", "first_rel_rank")
"""Shown when the run has them; every other ranking metric the user chose is shown after them."""


def summary_columns(metric_names: list[str]) -> list[str]:
    """The ranking metrics a summary shows: :data:`SUMMARY_METRICS` the run has, then, when
    the run's metrics were chosen (``-m`` or the grid's ``metrics``), its other ranking metrics."""
    chosen = [] if set(metric_names) == set(DEFAULT_METRICS) else [
        n for n in metric_names if resolve(n).kind == "ranking" and n not in SUMMARY_METRICS]
    return [n for n in SUMMARY_METRICS if n in metric_names] + chosen


def summary_frame(metrics: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    """Per config: the aggregate (:mod:`harness.metrics.info`: mean, median for
    first_rel_rank) of each shown ranking metric over answerable questions, and the mean
    top score/ceiling for answerable and unanswerable questions when the run has it."""
    names = list(dict.fromkeys(metrics["metric"]))
    shown = summary_columns(names)
    rows = []
    for cid in configs["config_id"]:
        m = metrics[metrics["config_id"] == cid]
        row: dict[str, object] = {"config_id": cid}
        for name in shown:
            vals = m[(m["metric"] == name) & m["answerable"]]["value"].to_numpy()
            if not len(vals):
                continue
            row[name] = aggregate(name, vals)
        if "top_score_ratio" in names:
            ratio = m[m["metric"] == "top_score_ratio"]
            row["ratio (ans)"] = float(ratio[ratio["answerable"]]["value"].mean())
            row["ratio (unans)"] = float(ratio[~ratio["answerable"]]["value"].mean()) \
                if (~ratio["answerable"]).any() else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)
