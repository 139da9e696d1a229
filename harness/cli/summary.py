"""The per-config summary printed after ``harness run``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

SUMMARY_METRICS = ("hit@1", "hit@5", "recall@5", "MRR@10", "nDCG@10", "first_rel_rank")


def summary_frame(metrics: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    """Per config: means of ranking metrics over answerable questions (median for
    first_rel_rank), and the mean top score/ceiling for answerable and unanswerable."""
    from harness.metrics import parse

    rows = []
    for cid in configs["config_id"]:
        m = metrics[metrics["config_id"] == cid]
        row: dict[str, object] = {"config_id": cid}
        for name in SUMMARY_METRICS:
            vals = m[(m["metric"] == name) & m["answerable"]]["value"].to_numpy()
            if not len(vals):
                continue
            agg = parse(name).family.aggregate
            row[name] = float(np.median(vals)) if agg == "median" else float(vals.mean())
        ratio = m[m["metric"] == "top_score_ratio"]
        row["ratio (ans)"] = float(ratio[ratio["answerable"]]["value"].mean())
        row["ratio (unans)"] = float(ratio[~ratio["answerable"]]["value"].mean()) \
            if (~ratio["answerable"]).any() else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def print_summary(run_path: Path, console: Console | None = None) -> None:
    from harness.store import Run

    run = Run(run_path)
    # CI logs are not terminals: give tables room instead of eliding config ids
    console = console or Console(width=None if Console().is_terminal else 160)
    df = summary_frame(run.table("metrics"), run.table("configs"))
    q = run.table("questions")
    table = Table(title=f"run {run.run_id}: {len(q)} questions "
                        f"({int((~q['answerable']).sum())} unanswerable, left out of ranking means)")
    for col in df.columns:
        table.add_column(col, justify="left" if col == "config_id" else "right")
    for _, r in df.iterrows():
        table.add_row(*[str(r[c]) if c == "config_id" else
                        ("-" if pd.isna(r[c]) else f"{r[c]:.3f}") for c in df.columns])
    console.print(table)
    if run.has_table("answer_metrics"):
        from harness.answering.sidebyside import print_side_by_side

        print_side_by_side(run, console)
    console.print(f"run directory: {run.path}")
