"""Per-config summary of a run's metrics (means over answerable questions)."""

from __future__ import annotations

import numpy as np
import pandas as pd

SUMMARY_METRICS = ("hit@1", "hit@5", "recall@5", "MRR@10", "nDCG@10", "first_rel_rank")


def summary_frame(metrics: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    """Per config: means of ranking metrics over answerable questions (median for
    first_rel_rank), and the mean top score/ceiling for answerable and unanswerable."""
    from harness.metrics.ranking import parse

    # one groupby over the table (a filter per config is quadratic in configs)
    m = metrics[metrics["metric"].isin([*SUMMARY_METRICS, "top_score_ratio"])]
    g = m.groupby([m["config_id"].astype(str), m["metric"].astype(str), m["answerable"].astype(bool)],
                  sort=False)["value"]
    stats = {key: (mean, med) for key, mean, med in zip(g.mean().index, g.mean().to_numpy(),
                                                       g.median().to_numpy(), strict=True)}
    rows = []
    for cid in configs["config_id"].astype(str):
        row: dict[str, object] = {"config_id": cid}
        for name in SUMMARY_METRICS:
            if (cid, name, True) not in stats:
                continue
            mean, med = stats[(cid, name, True)]
            row[name] = float(med) if parse(name).family.aggregate == "median" else float(mean)
        row["ratio (ans)"] = float(stats.get((cid, "top_score_ratio", True), (np.nan, np.nan))[0])
        row["ratio (unans)"] = float(stats.get((cid, "top_score_ratio", False), (np.nan, np.nan))[0])
        rows.append(row)
    return pd.DataFrame(rows)
