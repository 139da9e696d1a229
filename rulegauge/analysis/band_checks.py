"""Checks of a run's ``fused`` table against its ``configs`` before score bands are read
from it: columns, ceilings, ratios, votes, and the RRF formula for RRF configs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rulegauge.analysis.anchors import config_anchors
from rulegauge.core.errors import Problem, ValidationError
from rulegauge.store.tables import CONFIGS, FUSED

_RTOL, _ATOL = 1e-9, 1e-12


def _rank_col(arm: str) -> str:
    return f"rank_{arm}"


def _mismatch(bad: np.ndarray, rows: pd.DataFrame, where: str, what: str) -> list[Problem]:
    if not bad.any():
        return []
    first = rows[bad].iloc[0]
    return [Problem(where, f"{int(bad.sum())} row(s) with {what} (first: question "
                           f"{first['question_id']}, chunk {first['chunk_id']})")]


def validate(fused: pd.DataFrame, configs: pd.DataFrame, where: str = "fused.parquet") -> None:
    """Check the fused table against its configs and the RRF formula; raise
    :class:`ValidationError` listing every problem (one per config and check)."""
    problems: list[Problem] = []
    for spec, df, name in ((FUSED, fused, where), (CONFIGS, configs, "configs.parquet")):
        missing = [c.name for c in spec.columns  # a backfilled column: an older run's table lacks it
                   if not c.name.endswith("*") and c.backfill is None and c.name not in df]
        if missing:
            problems.append(Problem(name, f"missing columns {missing}"))
    if problems:
        raise ValidationError(problems, "cannot compute score bands")
    by_id = {str(r["config_id"]): r for _, r in configs.iterrows()}
    unknown = sorted(set(fused["config_id"].astype(str)) - set(by_id))
    if unknown:
        problems.append(Problem(where, f"config ids not in configs.parquet: {unknown}"))
    for cid, rows in fused[fused["config_id"].isin(list(by_id))].groupby("config_id", sort=True):
        row, here = by_id[str(cid)], f"{where}: config {cid}"
        try:
            a = config_anchors(row)
        except ValueError as exc:
            problems.append(Problem(f"configs.parquet: config {cid}", str(exc)))
            continue
        def close(x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
            return np.asarray(np.isclose(x, y, rtol=_RTOL, atol=_ATOL, equal_nan=True))

        what = "sum(w)/(k+1)" if a.method == "rrf" else f"the {a.method} ceiling"
        if not close(float(row["ceiling"]), a.ceiling):
            problems.append(Problem(f"configs.parquet: config {cid}",
                                    f"ceiling {row['ceiling']!r} != {what} = {a.ceiling!r}"))
        score, ceil = rows["fused_score"].to_numpy(float), rows["ceiling"].to_numpy(float)
        problems += _mismatch(~close(ceil, a.ceiling), rows, here, f"ceiling != the config's {a.ceiling!r}")
        with np.errstate(invalid="ignore", divide="ignore"):
            problems += _mismatch(~close(rows["score_ratio"].to_numpy(float), score / ceil), rows, here,
                                  "score_ratio != fused_score / ceiling")
        problems += _mismatch(rows["n_arms"].to_numpy() != len(a.arms), rows, here,
                              f"n_arms != {len(a.arms)}")
        missing_ranks = [_rank_col(x) for x in a.arms if _rank_col(x) not in rows]
        if missing_ranks:
            problems.append(Problem(here, f"missing rank columns {missing_ranks}"))
            continue
        ranks = rows[[_rank_col(x) for x in a.arms]].astype("float64").to_numpy()
        voted = ~np.isnan(ranks)
        problems += _mismatch(voted.sum(axis=1) != rows["arms_voted"].to_numpy(), rows, here,
                              "arms_voted != number of the config's arms ranking the chunk")
        if a.method != "rrf":  # score-based methods need the arms' scores: checked by the oracle tests
            continue
        expect = np.where(voted, np.asarray(a.weights) / (a.k + np.nan_to_num(ranks)), 0.0).sum(1)
        problems += _mismatch(~close(score, expect), rows, here,
                              "fused_score != sum of w/(k+rank) over voting arms")
    if problems:
        raise ValidationError(problems, "fused table is inconsistent with its configs")
