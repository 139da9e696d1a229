"""Fact recall: does an answer state the reference facts of its question?

A gold question may list reference facts (``answer: {facts: [[phrasing, alt], ...]}``,
:attr:`rulegauge.goldset.records.Question.facts`). A fact is *stated* when any one of
its phrasings is *matched* by one sentence of the answer:

* the answer's ``[n]`` citation markers and Markdown emphasis are removed, and it is
  split into sentences at ``. ! ? ; :`` followed by white space, and at line breaks;
* the phrasing and each sentence are tokenised by :class:`rulegauge.core.text.Tokenizer`
  (NFC, case and script folding, Unicode word tokens) and stemmed with the Snowball
  stemmer of the phrasing's language (:func:`rulegauge.core.text.guess_language`, the
  question's language as the default), so "lanterns" matches "lantern";
* the phrasing's *function words* ("a", "the", "of"...: :mod:`rulegauge.answering.fact_words`)
  are optional; every other token of it must occur in the sentence **in the phrasing's
  order**, at most :data:`MAX_GAP` other content tokens (function words not counted)
  between two consecutive ones: a phrase, not a bag of words ("a second or a third
  lantern" states "second lantern", "light lanterns" matches "light a lantern", "the
  lantern is lit" does not match "light lantern");
* **negation**: when the phrasing states nothing negative, an occurrence with a negation
  cue ("not", "never", "cannot", "can't", "nicht", "не", "نمی"...) inside it or among the
  :data:`NEGATION_WINDOW` tokens before it (and after it, in verb-final Persian) does not
  count ("may not be nominated" does not state "may be nominated"), except a cue in
  another clause (after a comma, semicolon or dash) or one that bounds a number ("no
  more than 5 cards", "не больше 5 карт"); a phrasing that is itself negative ("no
  change") must be matched with its cue, as a phrase;
* **short words never match alone**: a phrasing needs at least one *content* token (not a
  function word, not a number or number word, not a negation cue, at least two
  characters): "three", "a", "5" alone match nothing;
* **stems**: two tokens match when their stems are equal or, in Russian, when one stem
  of at least :data:`MIN_PREFIX` letters begins the other (gold-set authors write
  stem-like Russian phrasings, "держ" for "держать", that Snowball does not reduce to the
  same stem).

``fact_recall`` = stated facts / facts; undefined (NaN) for a question without
facts, and those questions are left out of its means.

Edge cases: an empty answer states nothing; a phrasing with no content token never
matches; numbers must match as written ("3" does not match "three": give both
phrasings). The matching is deterministic and cheap; its agreement with facts labelled
by hand is measured in docs/answering.md (``goldsets/sample-fact-labels.yaml``); for
paraphrases it cannot see, use the judge (:mod:`rulegauge.answering.judge`).

References: "nugget"-style answer evaluation, Lin & Demner-Fushman, "Methods for
automatically evaluating answers to complex questions" (Information Retrieval 9,
2006), whose POURPRE matches nuggets by term overlap; negation cues after NegEx
(Chapman et al., 2001).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rulegauge.answering.fact_words import (
    COMPARATIVES,
    VERB_FINAL,
    function_words,
    is_negation,
    number_words,
)
from rulegauge.core.text import Tokenizer, guess_language

MAX_GAP = 2
"""Other tokens allowed between two consecutive tokens of a phrasing."""
NEGATION_WINDOW = 3
"""Tokens before an occurrence searched for a negation cue."""
MIN_PREFIX = 4
"""Shortest Russian stem that may match as a prefix of a longer one."""
_PREFIX_LANGUAGES = frozenset(("ru",))

_MARKER = re.compile(r"\[\s*\d+(?:\s*[-–,]\s*\d+)*\s*\]")
_EMPHASIS = re.compile(r"[*_`>#]+")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")
_CLAUSE = re.compile(r"[,;:()\u2013\u2014\u060c]")
"""Clause boundaries for negation scope: comma, semicolon, colon, brackets, dashes, the
Arabic comma (NegEx ends a negation's scope at such terminators)."""
_PLAIN = Tokenizer()


def sentences(text: str) -> list[str]:
    """The answer's sentences, markers and emphasis removed (module docstring)."""
    t = _EMPHASIS.sub("", _MARKER.sub("", text or ""))
    return [" ".join(s.split()) for s in _SENTENCE.split(t) if s.strip()]


@dataclass(frozen=True)
class _Tokens:
    raw: tuple[str, ...]
    stems: tuple[str, ...]
    clause: tuple[int, ...]  # clause number of each token (negation does not cross clauses)


@lru_cache(maxsize=4096)
def _tokens(text: str, language: str) -> _Tokens:
    raw: list[str] = []
    clause: list[int] = []
    for i, part in enumerate(_CLAUSE.split(text)):
        toks = _PLAIN(part)
        raw += toks
        clause += [i] * len(toks)
    # raw tokens hold no apostrophe or ZWNJ, so stemming them joined keeps one stem per token
    stems = tuple(Tokenizer(stem_language=language)(" ".join(raw)))
    if len(stems) != len(raw):  # defensive: never pair a stem with the wrong token
        stems = tuple(raw)
    return _Tokens(tuple(raw), stems, tuple(clause))


@dataclass(frozen=True)
class _Phrase:
    language: str
    stems: tuple[str, ...]
    negative: bool
    matchable: bool


def _is_number(token: str, language: str) -> bool:
    return token.isdigit() or token in number_words(language)


@lru_cache(maxsize=4096)
def _phrase(phrasing: str, default_language: str) -> _Phrase:
    language = guess_language(phrasing, default=default_language)
    toks = _tokens(phrasing, language)
    fw = function_words(language)
    keep = [i for i, t in enumerate(toks.raw) if t not in fw or is_negation(t, language)]
    content = [i for i in keep if not is_negation(toks.raw[i], language)
               and not _is_number(toks.raw[i], language) and len(toks.raw[i]) >= 2]
    return _Phrase(language=language, stems=tuple(toks.stems[i] for i in keep),
                   negative=any(is_negation(toks.raw[i], language) for i in keep),
                   matchable=bool(content))


def _same(want: str, got: str, language: str) -> bool:
    if want == got:
        return True
    if language not in _PREFIX_LANGUAGES or want.isdigit() or got.isdigit():
        return False
    short, long_ = sorted((want, got), key=len)
    return len(short) >= MIN_PREFIX and long_.startswith(short)


def _occurrences(phrase: _Phrase, sent: _Tokens) -> list[tuple[int, ...]]:
    """Every in-order placement of the phrase's tokens, at most :data:`MAX_GAP` other
    content tokens between two consecutive ones (function words do not count)."""
    found: list[tuple[int, ...]] = []
    fw = function_words(phrase.language)
    # content[j]: content tokens before position j, so a gap is a difference of two counts
    content = [0]
    for t in sent.raw:
        content.append(content[-1] + (t not in fw))

    def place(k: int, start: int, taken: tuple[int, ...]) -> None:
        if k == len(phrase.stems):
            found.append(taken)
            return
        for j in range(start, len(sent.stems)):
            if taken and content[j] - content[taken[-1] + 1] > MAX_GAP:
                break
            if _same(phrase.stems[k], sent.stems[j], phrase.language):
                place(k + 1, j + 1, (*taken, j))

    place(0, 0, ())
    return found


def _negated(taken: tuple[int, ...], sent: _Tokens, language: str) -> bool:
    lo = max(0, taken[0] - NEGATION_WINDOW)
    hi = taken[-1] + 1 + (NEGATION_WINDOW if language in VERB_FINAL else 0)
    raw = sent.raw
    scope = {sent.clause[j] for j in taken}
    return any(is_negation(raw[j], language) and sent.clause[j] in scope
               and not (j + 1 < len(raw) and raw[j + 1] in COMPARATIVES)
               for j in range(lo, min(hi, len(raw))) if j not in taken)


def phrasing_matched(phrasing: str, sents: Sequence[str], language: str = "en") -> bool:
    """Whether one of ``sents`` states ``phrasing`` (module docstring: phrase, negation,
    content and stem rules)."""
    phrase = _phrase(phrasing, language)
    if not phrase.matchable:
        return False
    for s in sents:
        sent = _tokens(s, phrase.language)
        for taken in _occurrences(phrase, sent):
            if phrase.negative or not _negated(taken, sent, phrase.language):
                return True
    return False


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
