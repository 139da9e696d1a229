"""Per-config summary of a run's metrics (means over answerable questions)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.metrics.info import aggregate

SUMMARY_METRICS = ("hit@1", "hit@5", "recall@5", "MRR@10", "nDCG@10", "first_rel_rank")


def summary_frame(metrics: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    """Per config: means of ranking metrics over answerable questions (median for
    first_rel_rank), and the mean top score/ceiling for answerable and unanswerable."""
    # one groupby over the table (a filter per config is quadratic in configs)
    m = metrics[metrics["metric"].isin([*SUMMARY_METRICS, "top_score_ratio"])]
    groups = {key: vals.to_numpy(np.float64) for key, vals in m.groupby(
        [m["config_id"].astype(str), m["metric"].astype(str), m["answerable"].astype(bool)],
        sort=False)["value"]}
    rows = []
    for cid in configs["config_id"].astype(str):
        row: dict[str, object] = {"config_id": cid}
        for name in SUMMARY_METRICS:
            vals = groups.get((cid, name, True))
            if vals is None or not len(vals):
                continue
            row[name] = aggregate(name, vals)
        ans, unans = groups.get((cid, "top_score_ratio", True)), groups.get((cid, "top_score_ratio", False))
        row["ratio (ans)"] = float(ans.mean()) if ans is not None else float("nan")
        row["ratio (unans)"] = float(unans.mean()) if unans is not None and len(unans) else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)
