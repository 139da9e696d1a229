"""Metrics per question language: how each config and each arm alone does in every language.

:func:`language_table` joins a run's ``metrics`` table with its ``questions``
table and aggregates, for every config (single-arm configs ``arm-<name>``
included) and every question language, the chosen metrics over the *answerable*
questions of that language: the mean (the median for ``first_rel_rank``, as the
metric's family says, :mod:`rulegauge.metrics.ranking`) and the number of questions.

Conventions: unanswerable questions are left out (a ranking metric has no
meaning for them); a language whose questions are all unanswerable gets no
row, never a 0.0. Rows come in the run's config order (first appearance in the
metrics table), then by language code. A metric the run did not compute, or a
question missing from the questions table, raises :class:`RulegaugeError`
listing what is there.

Reference: the per-language breakdown follows the CLEF cross-language
evaluation practice of reporting each topic language separately (Braschler &
Peters 2004, "Cross-language evaluation forum: objectives, results,
achievements", Information Retrieval 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.info import aggregate
from rulegauge.store.rundir import Run

if TYPE_CHECKING:
    from rich.console import Console

DEFAULT_ALSO = ("hit@5",)
"""Metrics shown beside the main one when the run has them."""


def language_table(metrics_df: pd.DataFrame, questions_df: pd.DataFrame,
                   metric: str = "recall@5",
                   also: Sequence[str] = DEFAULT_ALSO) -> pd.DataFrame:
    """Per (config, language): ``n`` answerable questions and the aggregate of
    ``metric`` and of each of ``also`` that the run computed.

    Columns: ``config_id``, ``language``, ``n``, ``metric``, then the ``also``
    metrics present; values at full precision (round only when printing).
    """
    names = sorted(set(metrics_df["metric"]))
    if metric not in names:
        raise RulegaugeError(f"the run has no metric {metric!r}; it has: {', '.join(names)}")
    wanted = [metric, *(m for m in also if m in names and m != metric)]
    lang = questions_df.set_index("question_id")["language"]
    unknown = sorted(set(metrics_df["question_id"]) - set(lang.index))
    if unknown:
        raise RulegaugeError(f"{len(unknown)} question(s) of the metrics table are not in the "
                           f"questions table: {', '.join(unknown[:10])}")
    m = metrics_df[metrics_df["answerable"].astype(bool) & metrics_df["metric"].isin(wanted)]
    m = m.assign(language=m["question_id"].map(lang).to_numpy())
    configs = list(dict.fromkeys(metrics_df["config_id"]))
    rows = []
    for cid in configs:
        per = m[m["config_id"] == cid]
        for language in sorted(set(per["language"])):
            cell = per[per["language"] == language]
            row: dict[str, object] = {"config_id": cid, "language": language,
                                      "n": int(cell["question_id"].nunique())}
            for name in wanted:
                vals = cell.loc[cell["metric"] == name, "value"].to_numpy(dtype=np.float64)
                row[name] = aggregate(name, vals)
            rows.append(row)
    return pd.DataFrame(rows, columns=["config_id", "language", "n", *wanted])


def run_language_table(run: str | Path, metric: str = "recall@5",
                       also: Sequence[str] = DEFAULT_ALSO) -> pd.DataFrame:
    """:func:`language_table` of a run directory (``rulegauge.store.rundir.Run``)."""
    r = Run(Path(run))
    return language_table(r.table("metrics"), r.table("questions"), metric, also)


def print_language_table(table: pd.DataFrame, console: Console | None = None,
                         title: str | None = None) -> None:
    """Render a :func:`language_table` with rich: one row per config, one column per
    language (header ``lang (n=…)``), cells ``metric/also…`` to 3 decimals."""
    console = console or Console()
    metrics = [c for c in table.columns if c not in ("config_id", "language", "n")]
    languages = sorted(set(table["language"]))
    counts = table.groupby("language")["n"].max()
    out = Table(title=title or f"per question language: {' / '.join(metrics)} "
                               "(answerable questions)")
    out.add_column("config_id", no_wrap=True)
    for language in languages:
        out.add_column(f"{language} (n={counts[language]})", justify="right", no_wrap=True)
    for cid in dict.fromkeys(table["config_id"]):
        cells = table[table["config_id"] == cid].set_index("language")
        out.add_row(cid, *("/".join(f"{cells.at[lg, m]:.3f}" for m in metrics)
                           if lg in cells.index else "-" for lg in languages))
    console.print(out)
