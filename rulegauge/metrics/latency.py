"""Search latency: each arm's search time per question, and its p50 and p95 per config.

Definition. An arm's search time for a question is measured where the arm searches
(:func:`rulegauge.pipeline.retrieval.run_arms`): the ``http`` arm times each call with a
monotonic clock (``time.perf_counter``) around the request of the attempt that brought
the reply (retries' backoff sleeps are not the endpoint's time), timing ``call``; an
in-process arm (``bm25``, ``boost``, ``dense``...) searches every question in one batch,
so its search time (``prepare``, the index build, excluded) is shared evenly by its
questions, timing ``batch`` (its p50 equals its p95). The warm-up call is excluded: the
``http`` arm's preflight asks the first question once before the run (connections,
caches and lazy loading on the service's side warm up there) and that call is never
recorded. Kept in the ``search_latency`` table (one row per question and arm), out of
``metrics``: a measurement of the machine, not a function of the run's inputs
(:attr:`~rulegauge.metrics.family.MetricFamily.measured`, as answer latency is the
``answers`` table's column).

A config's search time for a question is the sum of its arms' (arms searched one after
another; a service that queries its arms in parallel waits for the slowest, so the sum is
an upper bound there). ``search_p50_ms`` and ``search_p95_ms`` are the median and the
95th percentile (numpy's linear quantile) of it over the questions: metrics of kind
``search``, compared per question like every metric (paired test, wins and losses) when a
comparison names them, and gated by a policy (``max_increase``, in percent:
``docs/gate.md``). Method: docs/metrics.md, *Search latency*.

Edge cases: a failed call, or a journal record from before latencies were kept, has no
latency (null): the question is left out of its arm's quantiles, and a config with such an
arm has no value for it (left out of the pairs). A run without the table (older runs) has
no search metrics: a comparison names them as not on both sides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd

from rulegauge.metrics.family import declare

TABLE = "search_latency"
P50, P95 = "search_p50_ms", "search_p95_ms"
LATENCY_METRICS = (P50, P95)


def config_search_ms(arm_ms: np.ndarray) -> np.ndarray:
    """A config's search time per question: the sum of its arms' (``(Q, A)`` -> ``(Q,)``);
    NaN where any arm's is unknown."""
    out: np.ndarray = np.asarray(arm_ms, dtype=np.float64).sum(axis=1)
    return out


_WHY = ("the sum of the config's arms' search times per question (http arm: each call timed, "
        "warm-up excluded; in-process arm: its batch time / questions)")
declare(P50, kind="search", direction="lower", scope="all", aggregate="median", measured=True,
        description=f"median over the questions of {_WHY}, in ms (the search_latency table's "
                    "column: measured, not stored in metrics)", compute=config_search_ms)
declare(P95, kind="search", direction="lower", scope="all", aggregate="p95", measured=True,
        description=f"95th percentile (linear) over the questions of {_WHY}, in ms",
        compute=config_search_ms)


class Tables(Protocol):
    """What is read: a run or a comparison side."""

    def has_table(self, name: str) -> bool: ...

    def table(self, name: str) -> pd.DataFrame: ...


def config_latency(latency: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    """``question_id, config_id, latency_ms``: each config's search time per question (module
    docstring); a config with an arm the table lacks is left out."""
    wide = latency.pivot(index="question_id", columns="arm", values="latency_ms").sort_index()
    frames = []
    for cid, arms in zip(configs["config_id"].astype(str), configs["arms"], strict=True):
        names = [str(a) for a in arms]
        if not names or any(a not in wide.columns for a in names):
            continue
        frames.append(pd.DataFrame({"question_id": wide.index.astype(str), "config_id": cid,
                                    "latency_ms": config_search_ms(wide[names].to_numpy(np.float64))}))
    cols = ["question_id", "config_id", "latency_ms"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def latency_frame(side: Tables) -> pd.DataFrame:
    """The long metric frame of a side's search latency (``question_id, config_id, answerer,
    metric, value, answerable``): one row per question, config and latency metric, the
    values of both metrics being the config's search time (their aggregates differ)."""
    per = config_latency(side.table(TABLE), side.table("configs"))
    answerable = side.table("questions").set_index("question_id")["answerable"]
    base = per.assign(answerer="", value=per["latency_ms"].astype("float64"),
                      answerable=per["question_id"].map(answerable).fillna(True).astype(bool))
    cols = ["question_id", "config_id", "answerer", "metric", "value", "answerable"]
    return pd.concat([base.assign(metric=m)[cols] for m in LATENCY_METRICS], ignore_index=True)


@dataclass(frozen=True)
class LatencyRow:
    """The p50 and p95 of one arm or config over its questions with a latency (``n``)."""

    what: str  # "arm" or "config"
    name: str
    timing: str  # call, batch, or both joined with "+" for a config
    n: int
    p50: float
    p95: float


def _row(what: str, name: str, timing: str, values: np.ndarray) -> LatencyRow:
    v = values[~np.isnan(values)]
    if not len(v):
        return LatencyRow(what, name, timing, 0, float("nan"), float("nan"))
    return LatencyRow(what, name, timing, len(v), float(np.median(v)), float(np.quantile(v, 0.95)))


def latency_rows(latency: pd.DataFrame, configs: pd.DataFrame,
                 config_ids: Sequence[str] = ()) -> list[LatencyRow]:
    """Per arm (table order), then per config of ``config_ids`` (in that order): the p50 and
    p95 of its search time (module docstring)."""
    out = []
    for arm, rows in latency.groupby("arm", sort=False):
        timing = "+".join(sorted(set(rows["timing"].astype(str))))
        out.append(_row("arm", str(arm), timing, rows["latency_ms"].to_numpy(np.float64)))
    timing_of = {r.name: r.timing for r in out}
    chosen = configs[configs["config_id"].astype(str).isin(set(config_ids))]
    per = config_latency(latency, chosen)
    arms_of = dict(zip(chosen["config_id"].astype(str), chosen["arms"], strict=True))
    for cid in dict.fromkeys(config_ids):
        rows = per[per["config_id"] == cid]
        if rows.empty:
            continue
        timing = "+".join(sorted({t for a in arms_of[cid] for t in timing_of[str(a)].split("+")}))
        out.append(_row("config", cid, timing, rows["latency_ms"].to_numpy(np.float64)))
    return out
