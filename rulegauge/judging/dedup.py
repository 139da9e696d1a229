"""Near-duplicate questions: normalised token Jaccard at or above a threshold.

Definition: a question's *token set* ``T(q)`` is the set of its word tokens after
case folding and Snowball stemming in the question's language
(:class:`rulegauge.core.text.Tokenizer`; languages without a stemmer are only
folded). Two questions of the same language are near-duplicates when::

    J(a, b) = |T(a) & T(b)| / |T(a) | T(b)|  >=  threshold        (default 4/5)

compared as exact fractions (:class:`fractions.Fraction`), so no float rounding
decides. Questions in different languages are never duplicates of each other (a
German question is not a repeat of an English one). An empty token set equals
only another empty one.

Order: proposals are visited in the order given (the generator's: document, page,
language, then the generator's own order); each one is kept unless it is a
near-duplicate of a question *already kept*, in which case it is dropped and
recorded with the kept one it repeats and their ``J``. The result does not depend
on hash seeds or thread timing.

Example: "How many cards does each player draw?" and "How many cards does every
player draw?" share 6 of 8 stems (J = 0.75): both kept; "How many oil cards may
you keep?" and "How many oil cards can you keep?" (J = 3/4) are kept too, while
a question asked twice with other punctuation or case (J = 1) is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from rulegauge.core.text import Tokenizer

THRESHOLD = Fraction(4, 5)
RULE = "normalised token Jaccard (folded, Snowball-stemmed per language) >= {t}, same language"


@dataclass(frozen=True)
class Duplicate:
    """Item ``dropped`` repeats item ``kept`` (indexes into the input) with ``jaccard``."""

    dropped: int
    kept: int
    jaccard: Fraction


def token_set(question: str, language: str) -> frozenset[str]:
    return frozenset(Tokenizer(stem_language=language.split("-")[0].lower())(question))


def jaccard(a: frozenset[str], b: frozenset[str]) -> Fraction:
    """|a & b| / |a | b|; 1 for two empty sets."""
    union = len(a | b)
    return Fraction(len(a & b), union) if union else Fraction(1)


def rule_text(threshold: Fraction = THRESHOLD) -> str:
    return RULE.format(t=f"{threshold} ({float(threshold):.3f})")


def near_duplicates(items: Sequence[tuple[str, str]], threshold: Fraction = THRESHOLD
                    ) -> tuple[list[int], list[Duplicate]]:
    """``items`` are (question, language); returns (indexes kept, duplicates dropped)."""
    kept: list[int] = []
    sets: dict[str, list[tuple[int, frozenset[str]]]] = {}
    dropped: list[Duplicate] = []
    for i, (question, language) in enumerate(items):
        ts = token_set(question, language)
        same = sets.setdefault(language, [])
        hit = next(((k, j) for k, other in same if (j := jaccard(ts, other)) >= threshold), None)
        if hit is not None:
            dropped.append(Duplicate(i, hit[0], hit[1]))
            continue
        kept.append(i)
        same.append((i, ts))
    return kept, dropped
