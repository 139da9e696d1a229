"""Per-question change rules: which metric movements a comparison names, and how.

A :class:`ChangeRule` applies to some metrics and classifies a question's
(before, after) values as a regression, an improvement, or nothing. Rules register
by name in :data:`CHANGE_RULES`: lost/gained ``hit@k``, first relevant page moved
down/up (``first_rel_rank``; +inf prints as "not retrieved"), citation lost/gained
(``citation_recall``), fence failed/passed (``fence_pass``), and pages from outside the corpus
entering or leaving the top k (``foreign@k``: foreign hits, :mod:`rulegauge.corpus.foreign`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rulegauge.core.registry import Registry


@dataclass(frozen=True)
class ChangeRule:
    """Names a per-question change of one metric; ``classify(metric, before, after)``
    returns (direction, description) or None when the rule does not fire."""

    applies: Callable[[str], bool]
    classify: Callable[[str, float, float], tuple[str, str] | None]


def _fmt(x: float) -> str:
    return "not retrieved" if x == float("inf") else f"{x:g}"


def _hit(metric: str, b: float, c: float) -> tuple[str, str] | None:
    if b >= 1.0 > c:
        return "regression", f"lost {metric}"
    return ("improvement", f"gained {metric}") if c >= 1.0 > b else None


def _first_rel(metric: str, b: float, c: float) -> tuple[str, str] | None:
    if c == b:
        return None
    what = "down" if c > b else "up"
    return ("regression" if c > b else "improvement",
            f"first relevant page moved {what} ({_fmt(b)} -> {_fmt(c)})")


def _citation(metric: str, b: float, c: float) -> tuple[str, str] | None:
    if c == b:
        return None
    return ("regression", f"citation lost ({metric} {b:g} -> {c:g})") if c < b else (
        "improvement", f"citation gained ({metric} {b:g} -> {c:g})")


def _fence(metric: str, b: float, c: float) -> tuple[str, str] | None:
    if b >= 1.0 > c:
        return "regression", "answer now fails the fence"
    return ("improvement", "answer now passes the fence") if c >= 1.0 > b else None


def _foreign(metric: str, b: float, c: float) -> tuple[str, str] | None:
    if c == b:
        return None
    k = metric.partition("@")[2]
    what = "more" if c > b else "fewer"
    return ("regression" if c > b else "improvement",
            f"{what} pages from outside the corpus in the top {k} ({metric} {b:g} -> {c:g})")


CHANGE_RULES: Registry[ChangeRule] = Registry("change rule")
CHANGE_RULES.add("hit", ChangeRule(lambda m: m.startswith("hit@"), _hit))
CHANGE_RULES.add("first_rel_rank", ChangeRule(lambda m: m == "first_rel_rank", _first_rel))
CHANGE_RULES.add("citation", ChangeRule(lambda m: m == "citation_recall", _citation))
CHANGE_RULES.add("fence", ChangeRule(lambda m: m == "fence_pass", _fence))
CHANGE_RULES.add("foreign", ChangeRule(lambda m: m.startswith("foreign@"), _foreign))
