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
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence

import pandas as pd

from rulegauge.core.errors import ConfigError

DEFAULT_TOP = 20
# aggregates are means of per-question values: the same values summed in another
# order can differ in the last bits, so equality allows a few ulps (relative)
TIE_RTOL = 1e-12

__all__ = ["DEFAULT_TOP", "TIE_RTOL", "check_config_ids", "chosen_configs", "natural_key", "ties_with"]


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


def natural_key(config_id: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key reading digit runs as numbers: ``rrf_k6_...`` before ``rrf_k10_...``."""
    return tuple((1, int(p), "") if p.isdigit() else (0, 0, p)
                 for p in re.split(r"(\d+)", config_id) if p)


def ties_with(values: pd.Series, config_id: str) -> tuple[str, ...]:
    """Config ids (in :func:`natural_key` order) whose value equals ``values[config_id]`` within
    :data:`TIE_RTOL`, ``config_id`` included; ``values`` is indexed by config id."""
    v = float(values[config_id])
    if not math.isfinite(v):
        return (config_id,)
    tol = TIE_RTOL * max(1.0, abs(v))
    return tuple(sorted((str(c) for c, x in values.items()
                         if math.isfinite(float(x)) and abs(float(x) - v) <= tol), key=natural_key))
