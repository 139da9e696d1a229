"""Does a regression rest on unjudged pages? The condensed list says.

A question that got worse on ``nDCG@10`` because pages the gold set never judged moved
into its top 10 has not necessarily got worse: those pages may be relevant. The
condensed-list variant of the same metric (``nDCG(judged_only=True)@10``: unjudged
pages removed before the cutoff, Sakai 2007) sees only judged pages, so when it did
*not* get worse for that question, the pages newly ranked above its judged ones are
unjudged, and the regression rests on them. :func:`unjudged_notes` names those
questions for every failing check of a metric whose condensed variant both sides
stored (the built-in list stores ``nDCG(judged_only=True)@10``; add others with
``-m``). Judge the pages (``rulegauge pool``) before trusting such a regression.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rulegauge.core.errors import RegistryError
from rulegauge.metrics.family import Metric
from rulegauge.metrics.info import resolve
from rulegauge.regression.pairing import ConfigPair
from rulegauge.store.baseline import Side

_NAMED = 10


def condensed_of(metric: str) -> Metric | None:
    """The condensed-list variant of ``metric`` (every other parameter kept: ``RBP(p=0.9)@10`` ->
    ``RBP(p=0.9,judged_only=True)@10``), None when it has none (or is one)."""
    try:
        m = resolve(metric)
    except RegistryError:
        return None
    if not m.family.condensable or m.judged_only:
        return None
    return m.with_params(judged_only=True)


def _values(side: Side, config: str, metric: str) -> dict[str, float]:
    if not side.has_table("metrics"):
        return {}
    t = side.table("metrics")
    sel = t[(t["config_id"].astype(str) == config) & (t["metric"].astype(str) == metric)]
    return dict(zip(sel["question_id"].astype(str), sel["value"].astype(float), strict=True))


def resting_on_unjudged(base: Side, candidate: Side, pair: ConfigPair, metric: str,
                        questions: Sequence[str]) -> list[str] | None:
    """Of ``questions`` (worse on ``metric``), those whose condensed-list value did not get
    worse; None when the metric has no condensed variant stored on both sides."""
    cm = condensed_of(metric)
    if cm is None:
        return None
    b, c = _values(base, pair.base, cm.name), _values(candidate, pair.candidate, cm.name)
    if not b or not c:
        return None
    hib = cm.higher_is_better

    def not_worse(q: str) -> bool:
        vb, vc = b.get(q), c.get(q)
        return (vb is not None and vc is not None and not pd.isna(vb) and not pd.isna(vc)
                and (vc >= vb if hib else vc <= vb))

    return [q for q in questions if not_worse(q)]


def unjudged_notes(base: Side, candidate: Side, pair: ConfigPair,
                   failed: Sequence[tuple[str, Sequence[str]]]) -> tuple[str, ...]:
    """One note per metric of the failing checks ``(metric, questions worse)`` whose
    regressed questions include some that rest on unjudged pages."""
    by_metric: dict[str, dict[str, None]] = {}
    for metric, worse in failed:
        by_metric.setdefault(metric, {}).update(dict.fromkeys(worse))
    out = []
    for metric, qids in by_metric.items():
        found = resting_on_unjudged(base, candidate, pair, metric, list(qids))
        if not found:
            continue
        cm = condensed_of(metric)
        more = f" (+{len(found) - _NAMED} more)" if len(found) > _NAMED else ""
        out.append(f"{metric}: {len(found)} of the {len(qids)} questions that got worse did not get "
                   f"worse on {cm} ({', '.join(found[:_NAMED])}{more}): the pages newly ranked above "
                   f"their judged pages are unjudged, so the regression rests on unjudged pages; "
                   f"judge them (rulegauge pool) before trusting it")
    return tuple(out)
