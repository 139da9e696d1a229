"""Fact recall: does an answer state the reference facts of its question?

A gold question may list reference facts (``answer: {facts: [[phrasing, alt], ...]}``,
:attr:`harness.goldset.records.Question.facts`). A fact is *stated* when any one of
its phrasings is *matched* by one sentence of the answer:

* the answer's ``[n]`` citation markers and Markdown emphasis are removed, and it is
  split into sentences at ``. ! ? ; :`` followed by white space, and at line breaks;
* the phrasing and each sentence are tokenised by :class:`harness.core.text.Tokenizer`
  (NFC, case and script folding, Unicode word tokens) and stemmed with the Snowball
  stemmer of the phrasing's language (:func:`harness.core.text.guess_language`, the
  question's language as the default), so "lanterns" matches "lantern" and
  "Laternen" matches "Laterne";
* matched = every token of the phrasing occurs in the sentence (order free).

``fact_recall`` = stated facts / facts; undefined (NaN) for a question without
facts, and those questions are left out of its means.

Edge cases: an empty answer states nothing; a phrasing with no word token never
matches; numbers must match as written ("3" does not match "three": give both
phrasings). The matching is deterministic and cheap; for paraphrases it cannot
see, use the judge (:mod:`harness.answering.judge`).

Reference: "nugget"-style answer evaluation, Lin & Demner-Fushman, "Methods for
automatically evaluating answers to complex questions" (Information Retrieval 9,
2006), whose POURPRE matches nuggets by term overlap.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from harness.core.text import Tokenizer, guess_language

_MARKER = re.compile(r"\[\s*\d+(?:\s*[-–,]\s*\d+)*\s*\]")
_EMPHASIS = re.compile(r"[*_`>#]+")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The answer's sentences, markers and emphasis removed (module docstring)."""
    t = _EMPHASIS.sub("", _MARKER.sub("", text or ""))
    return [" ".join(s.split()) for s in _SENTENCE.split(t) if s.strip()]


def _tokenizer(phrasing: str, default_language: str) -> Tokenizer:
    return Tokenizer(stem_language=guess_language(phrasing, default=default_language))


def phrasing_matched(phrasing: str, sents: Sequence[str], language: str = "en") -> bool:
    """Whether one of ``sents`` holds every (stemmed) token of ``phrasing``."""
    tok = _tokenizer(phrasing, language)
    want = set(tok(phrasing))
    if not want:
        return False
    return any(want <= set(tok(s)) for s in sents)


def facts_stated(text: str, facts: Sequence[Sequence[str]], language: str = "en"
                 ) -> tuple[bool, ...]:
    """For each fact, whether any of its phrasings is matched in ``text``."""
    sents = sentences(text)
    return tuple(any(phrasing_matched(p, sents, language) for p in fact) for fact in facts)


def fact_recall(text: str, facts: Sequence[Sequence[str]], language: str = "en") -> float:
    """Stated facts / facts; NaN when there are no facts."""
    if not facts:
        return math.nan
    stated = facts_stated(text, facts, language)
    return sum(stated) / len(stated)
