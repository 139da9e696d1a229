"""Metric facts, asked by everything that interprets a metric; answer metrics declared.

Every metric rulegauge stores is a :class:`~rulegauge.metrics.family.MetricFamily` in
one registry (:data:`rulegauge.metrics.family.METRICS`): ranking and score metrics are
declared on their computations in :mod:`rulegauge.metrics.ranking`; answer metrics are
declared below (their facts must be known to the comparison, gate and reports without
the answering code) and computed in :mod:`rulegauge.answering.answer_metrics`. The
comparison and the gate (which side is better, which questions count, mean or
median), the policy (which names it may gate), the summary, the per-language table,
the report and the answerer side-by-side table ask this module. The mapping of other
tools' names is documented in ``docs/metrics.md``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from rulegauge.core.errors import RegistryError, RulegaugeError
from rulegauge.metrics import ranking  # noqa: F401 - declares the ranking and score families
from rulegauge.metrics.family import AGGREGATES, KINDS, METRICS, SCOPES, Metric, declare


def resolve(name: str, *, kinds: tuple[str, ...] = KINDS) -> Metric:
    """The canonical metric of ``name`` (alias or canonical, any case), of one of ``kinds``.

    >>> resolve("RR@10").name, resolve("ndcg_cut@5").name
    ('MRR@10', 'nDCG@5')
    """
    return Metric.parse(name, kinds=kinds)


def metric_info(name: str) -> Metric | None:
    """The metric ``name`` if it is known *and* has a better direction, else None
    (what comparisons and gates may judge)."""
    try:
        info = resolve(name)
    except RegistryError:
        return None
    return info if info.family.higher_is_better is not None else None


def known_metric_names() -> list[str]:
    """Every family with a direction, ``@k`` where it takes a cutoff."""
    return [f.label for _, f in METRICS.items() if f.higher_is_better is not None]


def scope_mask(frame: pd.DataFrame, metric: str | pd.Series) -> np.ndarray:
    """Rows of ``frame`` (columns ``answerable`` [, ``outcome``]) in the scope of
    ``metric``: one name for every row, or a column of names (unknown: ``all``)."""
    if isinstance(metric, str):
        return SCOPES.get(resolve(metric).scope)(frame)
    scopes = metric.map(lambda n: _scope_or_all(str(n))).to_numpy()
    out = np.zeros(len(frame), dtype=bool)
    for scope in dict.fromkeys(scopes.tolist()):
        sel = scopes == scope
        out[sel] = SCOPES.get(scope)(frame.loc[sel])
    return out


def in_scope(frame: pd.DataFrame, metric: Metric) -> pd.DataFrame:
    """The rows of ``frame`` (one metric's rows) that count for ``metric``: its declared
    scope (:data:`~rulegauge.metrics.family.SCOPES`: all, answerable, answered, responded)."""
    return frame[SCOPES.get(metric.scope)(frame)]


def scored_rows(metrics: pd.DataFrame, metric: str) -> tuple[Metric, pd.DataFrame]:
    """(the metric ``metric`` names, its rows of a ``metrics`` table in scope); raises
    naming the metrics present when it has no direction or no row in scope."""
    info = metric_info(metric)
    present = ", ".join(sorted(metrics["metric"].unique()))
    if info is None:
        raise RulegaugeError(f"metric {metric!r} has no known direction; metrics in the run: {present}")
    rows = in_scope(metrics[metrics["metric"] == info.name], info)
    if rows.empty:
        raise RulegaugeError(f"no {info.name} rows in scope ({info.scope}); metrics in the run: {present}")
    return info, rows


def _scope_or_all(name: str) -> str:
    try:
        return resolve(name).scope
    except RegistryError:
        return "all"


def aggregator(name: str) -> Callable[[np.ndarray], float]:
    """The declared aggregate (mean or median) of metric ``name``, as a function of its
    float64 values (resolved once, for callers aggregating many groups of one metric)."""
    agg = AGGREGATES.get(resolve(name).aggregate)
    return lambda values: agg(np.asarray(values, dtype=np.float64))


def aggregate(name: str, values: np.ndarray) -> float:
    """The declared aggregate (mean or median) of ``values`` of metric ``name``."""
    return aggregator(name)(values)


# ---- answer metrics (computed in rulegauge.answering.answer_metrics) -------------------------
_ALCE = "Gao et al. 2023 (ALCE), at page level"
declare("context_recall", kind="answer", direction="higher", scope="answerable",
        description="requirements with a page in the read / requirements", reference=_ALCE)
declare("citation_precision", kind="answer", direction="higher", scope="answerable",
        default=float("nan"),
        description="relevant distinct cited pages / distinct cited pages, over answers that cite "
                    "(NaN when nothing resolvable is cited: abstentions left out of means)",
        reference=_ALCE)
declare("citation_recall", kind="answer", direction="higher", scope="answerable",
        description="requirements with a cited page / requirements", reference=_ALCE)
declare("dangling_markers", kind="answer", direction="lower", scope="all",
        description="distinct cited numbers with no passage read")
declare("no_citation", kind="answer", direction="lower", scope="answered",
        description="1 if an answered answer cites no passage read")
declare("abstained", kind="answer", direction="none", scope="all",
        description="1 if the answerer abstained (mean: the abstention rate)")
declare("abstention_correct", kind="answer", direction="higher", scope="all",
        description="1 if abstained exactly when the question is unanswerable (error: 0; mean: "
                    "the abstention accuracy)")
declare("fence_pass", kind="answer", direction="higher", scope="responded",
        description="1 if the answer fence passes the text (0.0 on error: empty)")
declare("letter_density", kind="answer", direction="none", scope="responded",
        description="the fence's letters / non-space characters of the text (0.0 if empty)")
declare("latency_ms", kind="answer", direction="lower", scope="all", measured=True,
        description="wall time of the call in ms (the answers table's column: measured, "
                    "not stored in answer_metrics)")
declare("error", kind="answer", direction="lower", scope="all",
        description="1 if the call failed")
declare("fact_recall", kind="answer", direction="higher", scope="responded", default=float("nan"),
        description="reference facts the answer states / facts (rulegauge.answering.facts: per "
                    "sentence, stemmed); undefined (NaN, left out of means) without facts",
        reference="Lin & Demner-Fushman 2006 (nugget recall)")
declare("judge_fact_recall", kind="answer", direction="higher", scope="responded",
        default=float("nan"),
        description="facts the judge (rulegauge.answering.judge) says the answer states / facts; "
                    "only for judged answers, NaN when a verdict is missing")
