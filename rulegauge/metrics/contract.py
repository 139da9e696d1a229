"""The metric contract, checked where values enter a run: every value within its family's bounds.

A metric family declares ``bounds`` (:attr:`~rulegauge.metrics.family.MetricFamily.bounds`: every
value lies in ``[low, high]``; ranking families default to ``[0, 1]``). Every value a computation
gives is checked as it is scored (:func:`rulegauge.metrics.ranking.score`, which calls
:func:`check_values` for each metric of each config, after an unanswerable question took the
metric's default), before anything is stored: a value outside the bounds, or NaN where the
family's kind does not allow it (a ranking metric is a number for every answerable question;
a ``score`` metric may be NaN, ``top_score_ratio`` of a method without a ceiling), stops the run
with :class:`MetricContractError` (exit 2) naming the metric, its package, the question and the
value. The check is one vectorised comparison per metric and config.

The conformance suite :mod:`rulegauge.testing.metrics` meets the same check on synthetic runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rulegauge.core.component import component
from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.family import Metric

NAN_KINDS = frozenset({"score", "answer"})
"""Kinds whose values may be NaN (undefined: no ceiling, nothing cited)."""


class MetricContractError(RulegaugeError):
    """A metric's values break its declared bounds (module docstring); names metric, package, question."""


def value_problem(metric: Metric, values: np.ndarray, questions: Sequence[Any]) -> str | None:
    """Why ``values`` (one per question of ``questions``: question ids, or records with a
    ``question_id``) break ``metric``'s contract, or None."""
    v = np.asarray(values, dtype=np.float64)
    lo, hi = metric.family.bounds
    nan = np.isnan(v)
    bad = (v < lo) | (v > hi)
    if metric.kind not in NAN_KINDS:
        bad |= nan
    if not bad.any():
        return None
    at = np.flatnonzero(bad)
    i = int(at[0])
    qid = str(getattr(questions[i], "question_id", questions[i])) if i < len(questions) else f"#{i}"
    more = f" (and {len(at) - 1} more questions)" if len(at) > 1 else ""
    why = ("NaN, and a ranking metric is a number for every answerable question" if nan[i]
           else f"outside the declared bounds [{lo}, {hi}]")
    where = getattr(metric.family.compute, "__module__", "") or "?"
    return (f"{component('metric', 'rulegauge.metrics', metric.family.name)} broke the metric contract "
            f"(docs/plugins.md): {metric.name} (computed by {where}) is {float(v[i])!r} for question {qid}: "
            f"{why}{more}")


def check_values(metric: Metric, values: np.ndarray, questions: Sequence[Any], where: str = "") -> None:
    """Raise :class:`MetricContractError` when ``values`` break ``metric``'s bounds (module
    docstring); ``where`` (e.g. ``config rrf_k60_bm25+boost``) is added to the message."""
    problem = value_problem(metric, values, questions)
    if problem is not None:
        raise MetricContractError(problem + (f", {where}" if where else ""))
