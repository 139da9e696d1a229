"""Per-config summary of a run's metrics (means over answerable questions)."""

from __future__ import annotations

import pandas as pd

from harness.metrics.info import aggregate

SUMMARY_METRICS = ("hit@1", "hit@5", "recall@5", "MRR@10", "nDCG@10", "first_rel_rank")


def summary_frame(metrics: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    """Per config: means of ranking metrics over answerable questions (median for
    first_rel_rank), and the mean top score/ceiling for answerable and unanswerable."""
    rows = []
    for cid in configs["config_id"]:
        m = metrics[metrics["config_id"] == cid]
        row: dict[str, object] = {"config_id": cid}
        for name in SUMMARY_METRICS:
            vals = m[(m["metric"] == name) & m["answerable"]]["value"].to_numpy()
            if not len(vals):
                continue
            row[name] = aggregate(name, vals)
        ratio = m[m["metric"] == "top_score_ratio"]
        row["ratio (ans)"] = float(ratio[ratio["answerable"]]["value"].mean())
        row["ratio (unans)"] = float(ratio[~ratio["answerable"]]["value"].mean()) \
            if (~ratio["answerable"]).any() else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)
