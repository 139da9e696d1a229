"""The per-config summary printed after ``rulegauge run`` (tables, or JSON with ``--json``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from rich.console import Console
from rich.table import Table

from rulegauge.arms.base import empty_warning
from rulegauge.cli.output import make_console
from rulegauge.metrics.info import resolve
from rulegauge.metrics.languages import language_table, print_language_table
from rulegauge.metrics.selection import primary_metric
from rulegauge.metrics.summary import best_rows, legend, metric_names, summary_frame
from rulegauge.pipeline.depth_unit import short_warning
from rulegauge.regression.service import service_config
from rulegauge.store.rundir import Run


def summary_json(run_path: Path) -> str:
    """The summary as strict JSON: run id and directory, question counts, one
    record per config (the columns of :func:`summary_frame`, NaN as null, full
    precision) and the search time p50 / p95 per arm and config (``search_latency``,
    empty for a run without the table)."""
    import json
    import math

    from rulegauge.store.rundir import Run

    run = Run(run_path)
    df = summary_frame(run.arrow("metrics"), run.table("configs"))
    q = run.table("questions")
    records = [{k: (None if isinstance(v, float) and math.isnan(v) else v)
                for k, v in row.items()} for row in df.to_dict(orient="records")]
    from rulegauge.metrics.latency import TABLE, latency_rows

    latency = [] if not run.has_table(TABLE) else [
        {"what": r.what, "name": r.name, "timing": r.timing, "questions": r.n,
         "p50_ms": None if math.isnan(r.p50) else r.p50, "p95_ms": None if math.isnan(r.p95) else r.p95}
        for r in latency_rows(run.table(TABLE), run.table("configs"), [str(c) for c in df["config_id"]])]
    return json.dumps({"run_id": run.run_id, "path": str(run.path),
                       "questions": len(q), "unanswerable": int((~q["answerable"]).sum()),
                       "legend": legend(list(df.columns)), "configs": records,
                       "search_latency": latency}, indent=2, allow_nan=False)


"""Configs printed after a run at most (every single-arm config, then the best others):
a 200-config grid prints a readable table; ``--summary-rows 0``, ``--json``, ``rulegauge
report`` and ``rulegauge query`` give every config."""


def print_summary(run_path: Path, console: Console | None = None, *, metrics: pa.Table | None = None,
                  rows: int) -> None:
    """Print a run's per-config summary (:func:`summary_frame`), its per-arm empty counts,
    the per-language table of multilingual runs and the answerers' side-by-side.

    ``metrics`` is the run's metrics table when the caller holds it (the run just wrote
    it), else it is read once from the run; ``rows`` caps the printed configs (0 = all)."""
    run = Run(run_path)
    # CI logs are not terminals: full width, no row broken (rulegauge.cli.output)
    # ids and paths print verbatim: no markup, no highlighting ("[/b]" in an id is text)
    console = console or make_console()
    metrics = metrics if metrics is not None else run.arrow("metrics")
    configs = run.table("configs")
    full = summary_frame(metrics, configs)
    kind_of = dict(zip(configs["config_id"].astype(str), configs["kind"].astype(str), strict=True))
    service = service_config(configs)
    df, by, best = best_rows(full, [kind_of[str(c)] for c in full["config_id"]], rows,
                       metric=primary_metric(run.manifest), service=service)
    q = run.table("questions")
    n_unans = int((~q["answerable"]).sum())
    table = Table(title=f"run {run.run_id}: {len(q)} questions "
                        f"({n_unans} unanswerable, left out of ranking means)")
    for col in df.columns:
        table.add_column(col, justify="left" if col == "config_id" else "right")
    for r in df.itertuples(index=False):
        table.add_row(*[str(v) if c == "config_id" else ("-" if pd.isna(v) else f"{v:.3f}")
                        for c, v in zip(df.columns, r, strict=True)])
    console.print(table)
    if legend(list(df.columns)):
        console.print(legend(list(df.columns)))
    if best is not None:
        console.print(f"best by {by}: {best} (rows ranked by {by}, ties in numeric config order, "
                      "as in rulegauge report and tune)")
    if len(df) < len(full):
        console.print(f"showing {len(df)} of {len(full)} configs: the best by {by}, the service config and the "
                      "single-arm ones; all of them: --summary-rows 0, --json, rulegauge report or rulegauge query")
    print_empty_arms(run.manifest, console)
    print_search_latency(run, [str(c) for c in df["config_id"]], console)
    names = metric_names(metrics)
    lang_metric = "recall@5" if "recall@5" in names else next(
        (n for n in names if resolve(n).scope == "answerable"), None)
    if q["language"].nunique() > 1 and lang_metric is not None:
        # only the rows the table shows reach pandas (the metrics table can hold millions)
        one = metrics.filter(pc.equal(metrics.column("metric"), lang_metric)).to_pandas()
        one = one[one["config_id"].isin(set(df["config_id"]))]  # the configs printed above
        print_language_table(language_table(one, q, lang_metric, also=()), console,
                             title=f"{lang_metric} per question language (answerable questions)")
    if run.has_table("answer_metrics"):
        # deferred: heavy import (scipy through the paired statistics)
        from rulegauge.answering.sidebyside_print import print_side_by_side

        print_side_by_side(run, console)
    console.print(f"run directory: {run.path}")


def print_search_latency(run: Run, config_ids: list[str], console: Console) -> None:
    """The search time p50 / p95 per arm and per config shown (:mod:`rulegauge.metrics.latency`);
    nothing for a run without the ``search_latency`` table."""
    from rulegauge.metrics.latency import TABLE, latency_rows

    if not run.has_table(TABLE):
        return
    rows = latency_rows(run.table(TABLE), run.table("configs"), config_ids)
    if not rows:
        return
    table = Table(title="search time per question, ms (warm-up call excluded; docs/metrics.md)")
    for col in ("arm / config", "timing", "questions", "p50", "p95"):
        table.add_column(col, justify="left" if col in ("arm / config", "timing") else "right")
    for r in rows:
        table.add_row(f"{r.what} {r.name}", r.timing, str(r.n),
                      *("-" if pd.isna(v) else f"{v:.1f}" if v >= 10 else f"{v:.3f}" for v in (r.p50, r.p95)))
    console.print(table)


def print_empty_arms(manifest: dict[str, Any], console: Console, err: Console | None = None) -> None:
    """One line of per-arm empty-result counts; a warning on stderr for each arm
    empty for more than half the questions (:func:`rulegauge.arms.base.empty_warning`),
    for what an arm says of itself, and for short lists
    (:func:`rulegauge.pipeline.depth_unit.short_warning`)."""
    arms = {name: info for name, info in manifest.get("arms", {}).items() if "empty_questions" in info}
    if not arms:
        return
    console.print("questions with no hits, per arm: " + ", ".join(
        f"{name} {info['empty_questions']} of {info['questions']}" for name, info in arms.items()),
        markup=False, highlight=False)
    err = err or make_console(stderr=True)
    for name, info in arms.items():
        warning = empty_warning(name, info)
        if warning:
            err.print(f"warning: {warning}", markup=False, highlight=False)
        if info.get("warning"):  # a fact the arm states about itself on this corpus
            err.print(f"warning: arm {name}: {info['warning']}", markup=False, highlight=False)
        short = short_warning(name, info)  # lists that hold fewer pages than a metric counts
        if short:
            err.print(f"warning: {short}", markup=False, highlight=False)
