"""Relevance grades and requirement counts where they enter a gold set.

Every grade a user or a file gives is bounded when it is read
(:data:`rulegauge.core.limits.MAX_GRADE`): a gold set's graded ref ``{ref: doc#page,
grade: n}`` takes 1..MAX_GRADE; a qrels relevance (``goldset import-beir``,
``goldset import-trec``, ``goldset from-qrels``, graded qrels as a judgments file) is
read as ASCII digits with an optional ``-`` (``²``, ``١``, ``1_0``, ``+1`` and a
5,000-digit number are refused by name, never passed to ``int``) and must lie in
-MAX_GRADE..MAX_GRADE: 1 and above is the grade, 0 and below (TREC judges spam -2)
judged non-relevant. A grade of 10^30 would otherwise be accepted and make every other
relevant page's gain vanish from that question's nDCG; 10^400 overflows a float.

A question holds at most :data:`rulegauge.core.limits.MAX_REQUIREMENTS` requirements;
one with an any-of requirement (alternative pages) at most
:data:`rulegauge.core.limits.MAX_ANY_OF_REQUIREMENTS`, the bits of the requirement mask
the recall kernel ORs over a list (:mod:`rulegauge.metrics.gold`). A question whose
requirements are single pages is counted page by page and has no such limit.

Reference: TREC's qrels format (``trec_eval``: integer relevance, <= 0 not relevant).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rulegauge.core.limits import MAX_ANY_OF_REQUIREMENTS, MAX_GRADE, MAX_REQUIREMENTS

_INTEGER = re.compile(r"-?[0-9]+")


def relevance_problem(text: str, what: str = "relevance") -> str | None:
    """Why the qrels relevance ``text`` (called ``what`` in the message: BEIR says
    ``score``) is not an integer in -MAX_GRADE..MAX_GRADE, or None."""
    shown = text if len(text) <= 40 else f"{text[:20]}... ({len(text):,} characters)"
    if not _INTEGER.fullmatch(text):
        return f"{what} must be an integer (ASCII digits), got {shown!r}"
    if len(text.lstrip("-").lstrip("0")) > 6 or not -MAX_GRADE <= int(text) <= MAX_GRADE:
        return (f"{what} {shown} is outside -{MAX_GRADE}..{MAX_GRADE} (grades go up to "
                f"{MAX_GRADE}; 0 and below: judged non-relevant)")
    return None


def grade_problem(grade: object) -> str | None:
    """Why ``grade`` is not a requirement grade (an integer 1..MAX_GRADE), or None."""
    if isinstance(grade, bool) or not isinstance(grade, int) or not 1 <= grade <= MAX_GRADE:
        return f"the grade must be an integer 1..{MAX_GRADE}, got {_short(grade)}"
    return None


def requirements_problem(requirements: Sequence[Sequence[object]]) -> str | None:
    """Why a question cannot hold ``requirements`` (too many; too many with an any-of
    list among them), or None."""
    n = len(requirements)
    if n > MAX_REQUIREMENTS:
        return f"{n:,} requirements, above the limit of {MAX_REQUIREMENTS:,} a question"
    if n > MAX_ANY_OF_REQUIREMENTS and any(len(r) > 1 for r in requirements):
        return (f"{n} requirements with an any-of list among them: a question with alternative "
                f"pages holds at most {MAX_ANY_OF_REQUIREMENTS} (make each requirement one page, "
                "or split the question)")
    return None


def _short(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**40:
        return f"an integer of about {int(abs(value).bit_length() * 0.30103) + 1:,} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:40] + "..."
