"""Report sections of slices and overlap: the metric per tag and game, and how much the
service config's lists changed since the previous run of the gold set (RBO, Jaccard).

:func:`slice_frame` aggregates the report's metric over the questions of each slice (every
tag that at least :data:`MIN_SLICE` questions carry, and every game when there are
several), each question in its metric's scope (ranking metrics: answerable questions), for
the configs given (the service config and the best): the view ``[slices.NAME]`` gates
(:mod:`rulegauge.regression.slices`). :func:`overlap_html` compares the run with the
previous complete run of its gold set in the same folder (:func:`rulegauge.analysis.trend_chart.trend_runs`)
by the RBO_ext@10 and Jaccard@10 of each question's fused lists, per config both hold
(:mod:`rulegauge.regression.overlap`): no judgment read, so unlabelled questions count.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rulegauge.analysis.report_html import table_html
from rulegauge.analysis.trend_chart import trend_runs
from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.info import aggregate, in_scope, metric_info
from rulegauge.regression.overlap import comparison_overlap, overlap_frame
from rulegauge.regression.pairing import ConfigPair
from rulegauge.store.rundir import Run

MIN_SLICE = 2  # questions a tag needs for a row


def _slices(questions: pd.DataFrame) -> list[tuple[str, set[str]]]:
    tags: dict[str, set[str]] = {}
    for qid, ts in zip(questions["question_id"].astype(str), questions["tags"], strict=True):
        for t in ts if ts is not None else ():
            tags.setdefault(str(t), set()).add(qid)
    out = [(f"tag {t}", ids) for t, ids in sorted(tags.items()) if len(ids) >= MIN_SLICE]
    games = questions["game"].dropna().astype(str)
    if games.nunique() > 1:
        out += [(f"game {g}", set(questions.loc[games.index[games == g], "question_id"].astype(str)))
                for g in sorted(games.unique())]
    return out


def slice_frame(metrics: pd.DataFrame, questions: pd.DataFrame, metric: str,
                configs: Sequence[str]) -> pd.DataFrame:
    """One row per slice: its questions in the metric's scope (``n``) and the metric's
    aggregate per config in ``configs`` (full precision; module docstring)."""
    info = metric_info(metric)
    if info is None:
        raise RulegaugeError(f"metric {metric!r} has no known direction")
    m = in_scope(metrics[metrics["metric"] == info.name], info)
    rows = []
    for name, ids in _slices(questions):
        part = m[m["question_id"].astype(str).isin(ids)]
        n = int(part["question_id"].nunique())
        if n == 0:
            continue
        row: dict[str, object] = {"slice": name, "n": n}
        for c in configs:
            vals = part.loc[part["config_id"] == c, "value"].to_numpy(np.float64)
            row[c] = aggregate(info.name, vals) if len(vals) else float("nan")
        rows.append(row)
    return pd.DataFrame(rows, columns=["slice", "n", *configs])


def slices_html(run: Run, metric: str, configs: Sequence[str]) -> list[str]:
    """The per-slice section (nothing when the run has no slice of two questions)."""
    if not run.has_table("questions"):
        return []
    frame = slice_frame(run.table("metrics"), run.table("questions"), metric,
                        list(dict.fromkeys(configs)))
    if frame.empty:
        return []
    esc = html.escape
    return [f"<h2>Per slice: {esc(metric)}</h2>",
            f"<p class='note'>Each tag carried by at least {MIN_SLICE} questions (and each game), "
            f"the questions in {esc(metric)}'s scope; a policy gates a slice on its own with "
            "<code>[slices.NAME]</code> and <code>rulegauge compare --slice tag=NAME</code> tests "
            "it (docs/gate.md \"Slices\").</p>", table_html(frame, tall=len(frame) > 40)]


def overlap_html(run: Run, configs: Sequence[str], depth: int = 10, p: float = 0.9) -> list[str]:
    """The overlap section against the previous run of the gold set (nothing without one)."""
    runs = trend_runs(run)
    if len(runs) < 2:
        return []
    try:
        previous = Run(runs[-2])
    except RulegaugeError:  # a run failing its hashes: the trend section names it
        return []
    pairs = [ConfigPair(c, c) for c in dict.fromkeys(configs)]
    overlaps, notes = comparison_overlap(previous, run, pairs, depth, p)
    esc = html.escape
    parts = [f"<h2>Overlap with the previous run: RBO(p={p:g})@{depth}, Jaccard@{depth}</h2>",
             f"<p class='note'>Each question's top {depth} chunks in this run against run "
             f"{esc(previous.run_id)}: rank-biased overlap (RBO_ext, Webber, Moffat and Zobel "
             "2010; 1 = the same list) and Jaccard of the two sets; no judgment is read, so "
             "unlabelled questions count. <code>rulegauge compare</code> gives it for any two "
             "runs, and <code>[overlap] min_rbo</code> gates it.</p>"]
    if overlaps:
        parts.append(table_html(overlap_frame(overlaps)))
    parts += [f"<p class='note'>not measured: {esc(n)}</p>" for n in notes]
    return parts
