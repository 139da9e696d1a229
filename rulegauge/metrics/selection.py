"""Which configs a report draws: the top N, the service config and each arm alone.

A real grid has hundreds of configs; a chart with one row per config is unreadable
past a few dozen. :func:`chosen_configs` picks the configs the report's charts show:

* with explicit ids (``rulegauge report -c ID -c ID``): exactly those, in the order of
  the ranking, every unknown id reported at once (:class:`~rulegauge.core.errors.ConfigError`
  naming it and the closest known ids);
* otherwise the ``top`` best of the ranking (best first, ties by id through
  :mod:`rulegauge.core.ordering`), plus the service config and every one-arm config
  (``kind == "arm"``) when they are not among them.

Every config still appears in the report's sortable table; only the charts are
restricted. :func:`ties_with` names the configs whose aggregate equals a given one's
(a tie is reported as a tie, never as one arbitrary winner).

One ranking order everywhere (the report, the run summary, ``tune``, the notebooks):
:func:`primary_metric` is the metric configs are ranked on, and :func:`rank_configs`
orders them by it, best first, configs whose values are equal within :data:`TIE_RTOL`
in numeric config order (:func:`rulegauge.core.config_order.config_sort_key`: ``rrf_k6``
before ``rrf_k8`` before ``rrf_k10``), never as text.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from rulegauge.core.config_order import config_sort_key
from rulegauge.core.errors import ConfigError
from rulegauge.metrics.info import metric_info
from rulegauge.metrics.ranking import DEFAULT_METRICS

DEFAULT_TOP = 20
# aggregates are means of per-question values: the same values summed in another
# order can differ in the last bits, so equality allows a few ulps (relative)
TIE_RTOL = 1e-12

DEFAULT_RANKING_METRIC = "recall@5"
"""What configs are ranked on when the run's metrics are the default list."""

__all__ = ["DEFAULT_RANKING_METRIC", "DEFAULT_TOP", "TIE_RTOL", "check_config_ids", "chosen_configs",
           "primary_metric", "rank_configs", "ties_with"]


def primary_metric(manifest: Mapping[str, Any]) -> str:
    """The metric a run's configs are ranked on: :data:`DEFAULT_RANKING_METRIC` when the run
    scored the default metric list (or its manifest lists none), else the first metric the
    run was asked for (``-m`` or the grid's ``metrics = [...]``) that is a ranking metric
    with a direction; recall@5 again when none is."""
    listed = [str(m) for m in manifest.get("metrics") or ()]
    if not listed or set(listed) == set(DEFAULT_METRICS):
        return DEFAULT_RANKING_METRIC
    for name in listed:
        info = metric_info(name)
        if info is not None and info.kind == "ranking":
            return info.name
    return DEFAULT_RANKING_METRIC


def _close(a: float, b: float) -> bool:
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= TIE_RTOL * max(1.0, abs(a))


def rank_configs(values: Mapping[str, float], *, higher_is_better: bool = True) -> list[str]:
    """Config ids best first by ``values`` (aggregates of one metric; direction from the
    metric), equal values within :data:`TIE_RTOL` in
    :func:`rulegauge.core.config_order.config_sort_key` order; NaN last.

    Ties are found on the sorted values (a run of neighbours each within the tolerance of
    the run's first), so a last-bit difference of two means never orders a tie as text."""
    sign = 1.0 if higher_is_better else -1.0
    finite = sorted((c for c in values if not math.isnan(float(values[c]))),
                    key=lambda c: (-sign * float(values[c]), config_sort_key(c)))
    nan = sorted((c for c in values if math.isnan(float(values[c]))), key=config_sort_key)
    out: list[str] = []
    i = 0
    while i < len(finite):
        j = i + 1
        while j < len(finite) and _close(float(values[finite[i]]), float(values[finite[j]])):
            j += 1
        out += sorted(finite[i:j], key=config_sort_key)
        i = j
    return out + nan


def check_config_ids(ids: Sequence[str], known: Sequence[str]) -> None:
    """Raise :class:`ConfigError` naming every id of ``ids`` not in ``known``."""
    have = set(known)
    unknown = [i for i in dict.fromkeys(ids) if i not in have]
    if not unknown:
        return
    lines = []
    for i in unknown:
        near = difflib.get_close_matches(i, sorted(have), n=3)
        lines.append(f"unknown config id {i!r}" + (f" (did you mean {', '.join(near)}?)" if near else ""))
    raise ConfigError("; ".join(lines) + f"; the run has {len(have)} configs "
                      "(rulegauge query \"select config_id from configs\")")


def chosen_configs(ranked: Sequence[str], configs: pd.DataFrame, top: int = DEFAULT_TOP,
                   explicit: Sequence[str] = (), service: str | None = None) -> tuple[str, ...]:
    """The configs the report's charts show, in ``ranked`` order (best first).

    ``ranked``: every config id, best first; ``configs``: the run's ``configs`` table
    (its ``kind`` column marks the one-arm configs); ``top`` >= 1."""
    if top < 1:
        raise ConfigError(f"--top must be at least 1, got {top}")
    if explicit:
        check_config_ids(explicit, ranked)
        keep = set(explicit)
    else:
        arms = {str(c) for c, k in zip(configs["config_id"], configs["kind"], strict=True)
                if str(k) == "arm"}
        keep = set(ranked[:top]) | arms | ({service} if service else set())
    return tuple(c for c in ranked if c in keep)


def ties_with(values: pd.Series, config_id: str) -> tuple[str, ...]:
    """Config ids (in :func:`rulegauge.core.config_order.config_sort_key` order) whose value
    equals ``values[config_id]`` within :data:`TIE_RTOL`, ``config_id`` included; ``values``
    is indexed by config id."""
    v = float(values[config_id])
    if not math.isfinite(v):
        return (config_id,)
    tol = TIE_RTOL * max(1.0, abs(v))
    return tuple(sorted((str(c) for c, x in values.items()
                         if math.isfinite(float(x)) and abs(float(x) - v) <= tol), key=config_sort_key))
