"""Per-config summary of a run's metrics (means over answerable questions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rulegauge.core.config_order import sort_configs
from rulegauge.core.tablerows import known_codes, known_runs
from rulegauge.metrics.info import aggregator, resolve
from rulegauge.metrics.ranking import DEFAULT_METRICS
from rulegauge.metrics.selection import rank_configs

SUMMARY_METRICS = ("hit@1", "hit@5", "recall@5", "MRR@10", "nDCG@10", "nDCG(judged_only=True)@10",
                   "Judged@10", "first_rel_rank")
"""Shown when the run has them; every other ranking metric the user chose is shown after them."""

RATIO_ANSWERABLE, RATIO_UNANSWERABLE = "top_score_ratio_answerable", "top_score_ratio_unanswerable"
"""Summary columns (and JSON keys): the mean of ``top_score_ratio`` (top fused score over
the config's ceiling) over answerable and over unanswerable questions."""

LEGEND = {
    "first_rel_rank": "first_rel_rank is the median rank of the first relevant page (answerable questions)",
    RATIO_ANSWERABLE: f"{RATIO_ANSWERABLE} / {RATIO_UNANSWERABLE}: mean top fused score over "
                      "the ceiling, on answerable / unanswerable questions (high on unanswerable: "
                      "confident where nothing answers)",
}
"""One legend line per summary column that needs one (printed under the table)."""


def legend(columns: Sequence[str]) -> str:
    """The legend of a summary's ``columns``, one line per entry (empty when none needs
    one); every other metric column is a mean over answerable questions."""
    lines = ["other metric columns: means over answerable questions"] if len(columns) > 1 else []
    every = [c for c in columns if c not in (*LEGEND, "config_id", RATIO_ANSWERABLE, RATIO_UNANSWERABLE)
             and _every_question(c)]  # foreign@k
    lines = [f"{', '.join(every)}: mean over every question, answerable or not" if every else "", *lines]
    return "\n".join(x for x in [*(text for col, text in LEGEND.items() if col in columns), *lines] if x)


def _every_question(column: str) -> bool:
    """A ranking metric of scope ``all`` (``foreign@k``): its mean counts every question."""
    m = resolve(column, kinds=("ranking",))
    return m.scope == "all"


Metrics: TypeAlias = pd.DataFrame | pa.Table
"""A metrics table as read with pandas, or as Arrow (what a run writes; the fast path)."""


def summary_columns(metric_names: list[str]) -> list[str]:
    """The ranking metrics a summary shows: :data:`SUMMARY_METRICS` the run has, then, when
    the run's metrics were chosen (``-m`` or the grid's ``metrics``), its other ranking metrics."""
    chosen = [] if set(metric_names) == set(DEFAULT_METRICS) else [
        n for n in metric_names if resolve(n).kind == "ranking" and n not in SUMMARY_METRICS]
    return [n for n in SUMMARY_METRICS if n in metric_names] + chosen


def codes(metrics: Metrics, column: str) -> tuple[np.ndarray, list[str]]:
    """Integer code of each row's ``column`` value and the distinct values, in order of
    first appearance (``codes[i]`` indexes the list). An Arrow column is encoded by runs
    of equal values (a run's table is written config by config, metric by metric: a few
    thousand runs), only each run's first value dictionary-encoded in C++; a pandas
    column goes through :func:`pandas.factorize` (both keep that order)."""
    if isinstance(metrics, pa.Table):
        known = known_codes(metrics, column)  # recorded by the code that built the table
        if known is not None:
            return known
        col = metrics.column(column).combine_chunks()
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        n = len(col)
        change = pc.not_equal(col.slice(1), col.slice(0, max(n - 1, 0))).to_numpy(zero_copy_only=False)
        starts = np.r_[0, np.flatnonzero(change) + 1] if n else np.zeros(0, np.int64)
        enc = pc.dictionary_encode(col.take(pa.array(starts, pa.int64())))
        runs = np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64)
        return (np.repeat(runs, np.diff(np.r_[starts, n])),
                [str(v) for v in enc.dictionary.to_pylist()])
    found, uniques = pd.factorize(metrics[column], sort=False)
    return np.asarray(found, np.int64), [str(v) for v in uniques]


def column(metrics: Metrics, name: str, dtype: type) -> np.ndarray:
    """A column of either form as a NumPy array of ``dtype``."""
    if isinstance(metrics, pa.Table):
        return np.asarray(metrics.column(name).to_numpy(), dtype)
    return metrics[name].to_numpy(dtype)


def metric_names(metrics: Metrics) -> list[str]:
    """The metrics of a table, in order of first appearance."""
    runs = known_runs(metrics, "metric") if isinstance(metrics, pa.Table) else None
    return runs[2] if runs is not None else codes(metrics, "metric")[1]


def grouped_values(metrics: Metrics, names: Sequence[str]) -> dict[tuple[str, str, bool], np.ndarray]:
    """``(config_id, metric, answerable) -> values`` for the metrics ``names``, each group's
    values in table order (so a mean sums them in the same order as a filter would)."""
    answerable = column(metrics, "answerable", bool)
    vals = column(metrics, "value", np.float64)
    runs = _recorded_blocks(metrics) if isinstance(metrics, pa.Table) else None
    if runs is None:
        c_codes, c_names = codes(metrics, "config_id")
        m_codes, m_names = codes(metrics, "metric")
        block = c_codes * len(m_names) + m_codes
        starts = np.r_[0, np.flatnonzero(np.diff(block)) + 1] if len(block) else np.zeros(0, np.int64)
        run_block = block[starts]
    else:
        starts, run_block, c_names, m_names = runs
    chosen = set(names)
    wanted = np.isin(np.arange(len(m_names)), [i for i, n in enumerate(m_names) if n in chosen])
    out = {}
    if len(np.unique(run_block)) == len(starts):  # each (config, metric) in one run: no sort
        for k, start, end in zip(run_block.tolist(), starts.tolist(), np.r_[starts[1:], len(vals)].tolist(),
                                 strict=True):
            if wanted[k % len(m_names)]:
                a, v = answerable[start:end], vals[start:end]
                for flag in (False, True):
                    part = v[a == flag]
                    if len(part):
                        out[(c_names[k // len(m_names)], m_names[k % len(m_names)], flag)] = part
        return out
    if runs is not None:  # the general path reads per-row codes
        c_codes, m_codes = codes(metrics, "config_id")[0], codes(metrics, "metric")[0]
        block = c_codes * len(m_names) + m_codes
    keep = wanted[m_codes]
    key = block[keep] * 2 + answerable[keep]
    o = np.argsort(key, kind="stable")  # stable: table order within a group
    key, v = key[o], vals[keep][o]
    cuts = np.flatnonzero(np.diff(key)) + 1
    for start, end in zip(np.r_[0, cuts], np.r_[cuts, len(key)], strict=True):
        if end > start:
            k = int(key[start])
            out[(c_names[k // 2 // len(m_names)], m_names[k // 2 % len(m_names)], bool(k % 2))] = v[start:end]
    return out


def _recorded_blocks(metrics: pa.Table) -> tuple[np.ndarray, np.ndarray, list[str], list[str]] | None:
    """(run starts, (config code * metrics + metric code) of each run, config ids, metric
    names) from the runs the table's builder recorded for both columns
    (:func:`rulegauge.core.tablerows.known_runs`), or None: without a pass over the rows."""
    c, m = known_runs(metrics, "config_id"), known_runs(metrics, "metric")
    if c is None or m is None:
        return None
    starts = np.union1d(c[0], m[0])
    at_c = c[1][np.searchsorted(c[0], starts, side="right") - 1]
    at_m = m[1][np.searchsorted(m[0], starts, side="right") - 1]
    return starts, at_c * len(m[2]) + at_m, c[2], m[2]


def summary_frame(metrics: Metrics, configs: pd.DataFrame) -> pd.DataFrame:
    """Per config, in :func:`rulegauge.core.config_order.config_sort_key` order: the
    aggregate (:mod:`rulegauge.metrics.info`: mean, median for
    first_rel_rank) of each shown ranking metric over answerable questions (every question
    for a metric of scope ``all``: ``foreign@k``), and the mean
    top score/ceiling for answerable and unanswerable questions when the run has it.
    A metric with no answerable value for any config has no column (never a plausible 0)."""
    names = metric_names(metrics)
    shown = summary_columns(names)
    # one grouping pass over the table (a filter per config is quadratic in configs)
    groups = grouped_values(metrics, [*shown, "top_score_ratio"])
    rows = []
    agg = {name: aggregator(name) for name in shown}
    every = {name: _every_question(name) for name in shown}
    for cid in sort_configs(configs["config_id"].astype(str)):
        row: dict[str, object] = {"config_id": cid}
        for name in shown:
            vals = groups.get((cid, name, True))
            if every.get(name) and (cid, name, False) in groups:  # foreign@k: every question counts
                vals = np.concatenate([v for v in (vals, groups[(cid, name, False)]) if v is not None])
            if vals is None or not len(vals):
                continue
            row[name] = agg[name](vals)
        if "top_score_ratio" in names:
            ans, unans = groups.get((cid, "top_score_ratio", True)), groups.get((cid, "top_score_ratio", False))
            row[RATIO_ANSWERABLE] = float(ans.mean()) if ans is not None and len(ans) else float("nan")
            row[RATIO_UNANSWERABLE] = float(unans.mean()) if unans is not None and len(unans) else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def best_rows(frame: pd.DataFrame, kinds: Sequence[str], limit: int, *, metric: str | None = None,
              service: str | None = None) -> tuple[pd.DataFrame, str | None, str | None]:
    """The rows of a summary frame to print, in the ranking order of the report and ``tune``
    (:func:`rulegauge.metrics.selection.rank_configs`): the fused configs best first by
    ``metric`` (the run's :func:`~rulegauge.metrics.selection.primary_metric`; when the
    frame lacks it, its first metric column; the metric's registry direction; ties in
    numeric config order), at most ``limit`` rows of them (0: all), then the service config
    when it is not among them, then every single-arm config (``kinds`` is the configs'
    kind, ``arm`` for those), in config order.

    Returns the rows, the metric they were ranked by and the best config of all (single-arm
    ones included: the report's headline best); both None when the frame has no metric
    column (the rows stay in config order)."""
    columns = [c for c in frame.columns if c not in ("config_id", RATIO_ANSWERABLE, RATIO_UNANSWERABLE)]
    by = metric if metric in columns else next(iter(columns), None)
    ids = frame["config_id"].astype(str).tolist()
    arm = [k == "arm" for k in kinds]
    fused = [c for c, a in zip(ids, arm, strict=True) if not a]
    best = None
    if by is not None:
        values = dict(zip(ids, frame[by].to_numpy(np.float64), strict=True))
        ranked = rank_configs(values, higher_is_better=bool(resolve(by).higher_is_better))
        best, fused = ranked[0], [c for c in ranked if c in set(fused)]
    room = len(fused) if limit <= 0 else max(limit - sum(arm), 1)
    if service in fused[room:]:  # the service config is always shown: it takes the last place
        room = max(room - 1, 1)
    shown = fused[:room] + ([service] if service in fused[room:] else [])
    shown += [c for c, a in zip(ids, arm, strict=True) if a]
    at = {c: i for i, c in enumerate(ids)}
    return frame.iloc[[at[c] for c in shown]].reset_index(drop=True), by, best
