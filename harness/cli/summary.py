"""The per-config summary printed after ``harness run``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

from harness.analysis.languages import language_table, print_language_table
from harness.analysis.summary import summary_frame
from harness.metrics.info import resolve
from harness.store.rundir import Run


def print_summary(run_path: Path, console: Console | None = None) -> None:
    run = Run(run_path)
    # CI logs are not terminals: give tables room instead of eliding config ids
    console = console or Console(width=None if Console().is_terminal else 160)
    df = summary_frame(run.table("metrics"), run.table("configs"))
    q = run.table("questions")
    n_unans = int((~q["answerable"]).sum())
    table = Table(title=f"run {run.run_id}: {len(q)} questions "
                        f"({n_unans} unanswerable, left out of ranking means)")
    for col in df.columns:
        table.add_column(col, justify="left" if col == "config_id" else "right")
    for _, r in df.iterrows():
        table.add_row(*[str(r[c]) if c == "config_id" else
                        ("-" if pd.isna(r[c]) else f"{r[c]:.3f}") for c in df.columns])
    console.print(table)
    metrics = run.table("metrics")
    names = list(dict.fromkeys(metrics["metric"]))
    lang_metric = "recall@5" if "recall@5" in names else next(
        (n for n in names if resolve(n).scope == "answerable"), None)
    if q["language"].nunique() > 1 and lang_metric is not None:
        print_language_table(language_table(metrics, q, lang_metric, also=()), console,
                             title=f"{lang_metric} per question language (answerable questions)")
    if run.has_table("answer_metrics"):
        # deferred: heavy import (scipy through the paired statistics)
        from harness.answering.sidebyside import print_side_by_side

        print_side_by_side(run, console)
    console.print(f"run directory: {run.path}")
