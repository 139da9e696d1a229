"""Metric facts, asked by everything that interprets a metric.

Every metric rulegauge stores is a :class:`~rulegauge.metrics.family.MetricFamily` in
one registry (:data:`rulegauge.metrics.family.METRICS`): ranking and score metrics are
declared on their computations in :mod:`rulegauge.metrics.ranking`, the search-latency
ones in :mod:`rulegauge.metrics.latency`; a product's metrics
by the product (answer metrics: :mod:`rulegauge.answering.metric_facts`, light to import),
loaded through the plug-in group ``rulegauge.stages`` the first time a name is not known
(:func:`resolve`, :func:`known_metric_names`), so the comparison, gate and reports know
their facts without the kernel importing the product. The
comparison and the gate (which side is better, which questions count, mean or
median), the policy (which names it may gate), the summary, the per-language table,
the report and the answerer side-by-side table ask this module. The mapping of other
tools' names is documented in ``docs/metrics.md``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from rulegauge.core import plugins
from rulegauge.core.errors import RegistryError, RulegaugeError
from rulegauge.metrics import latency, ranking  # noqa: F401 - declare the ranking, score and search families
from rulegauge.metrics.family import AGGREGATES, KINDS, METRICS, SCOPES, Metric

PRODUCT_METRICS = "rulegauge.stages"
"""The plug-in group whose modules declare the products' metrics (answer metrics)."""


def resolve(name: str, *, kinds: tuple[str, ...] = KINDS) -> Metric:
    """The canonical metric of ``name`` (alias or canonical, any case), of one of ``kinds``.

    A name the registry does not know loads the products' metrics first (module docstring).

    >>> resolve("RR@10").name, resolve("ndcg_cut@5").name
    ('MRR@10', 'nDCG@5')
    """
    try:
        return Metric.parse(name, kinds=kinds)
    except RegistryError:  # a package's metric module (core/plugins), or a product's metrics
        plugins.load("rulegauge.metrics")
        plugins.load(PRODUCT_METRICS)
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
    """Every family with a direction, ``@k`` where it takes a cutoff (products' included)."""
    plugins.load(PRODUCT_METRICS)
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
