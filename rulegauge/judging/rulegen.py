"""The rule-based question generator (``--answerer extractive``): deterministic, offline.

It reads a page's rule sentences and turns the few shapes it recognises into questions,
the sentence itself being the answer. Nothing is paraphrased or invented: every word of
a question comes from its sentence, reordered, plus a fixed question frame. It is a
baseline and what the tests use, not a substitute for a model or a person.

Units: the page's lines, a line joined to the next when the next starts in lower case
(a wrapped sentence); a line without closing punctuation is a heading and is never
used. Units are split into sentences (:func:`rulegauge.answering.answerers.extractive.
split_sentences`); a sentence is a candidate when it ends in ``.`` or ``!`` and has 4 to
40 words. Rules, tried in this order on each sentence (the first that fits wins):

English (``en``)

* ``count``: SUBJECT VERB NUMBER NOUN [TAIL]. -> "How many NOUN do/does SUBJECT VERB
  [TAIL]?" ("Each player draws two cards from the deck." -> "How many cards does each
  player draw from the deck?"); NUMBER is a digit above 1 or two..twelve, twenty; SUBJECT is 1-5
  words without punctuation; VERB is a lower-case word not ending in -ing/-ed (-s forms
  take *does* and lose the -s/-es; *has* becomes *have*). A VERB *is/are* gives "What
  is/are SUBJECT?" ("The hand limit is 5 oil cards." -> "What is the hand limit?").
* ``modal``: SUBJECT MODAL REST. with MODAL may, can, cannot, can't, must, should ->
  "MODAL SUBJECT REST?" ("You cannot light a lamp in a flooded district." -> "Can you
  light a lamp in a flooded district?"); a *not* after the modal is dropped, so the
  question asks and the sentence answers no.
* ``condition``: If/When CLAUSE, ... -> "What happens if/when CLAUSE?".

SUBJECT always starts with a determiner or pronoun (a, the, each, you, ...: lowered),
which keeps imperatives ("Advance the marker two spaces.") and headings out; REST and
TAIL stop at ; or : or a comma before and/but/or.

German (``de``): ``count``: SUBJECT VERB NUMBER NOUN REST -> "Wie viele NOUN VERB
SUBJECT REST?" (V2 order kept: "Jeder Spieler zieht zwei Karten." -> "Wie viele Karten
zieht jeder Spieler?"); ``modal``: SUBJECT darf/kann/muss/soll (and plurals) REST ->
"Darf SUBJECT REST?"; ``condition``: Wenn CLAUSE, ... -> "Was passiert, wenn CLAUSE?".

A leading adverbial phrase ending in a comma ("In a five-player game, each guild uses nine
lanterns.") is kept in front of the question. Other languages have no rules: a page in
one, or a question language other than the page's (the rules cannot translate), gives
no proposal and is counted as *unsupported* by :mod:`rulegauge.judging.generate`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rulegauge.answering.answerers.extractive import split_sentences

GENERATOR_ID = "rules-v1"
MIN_WORDS, MAX_WORDS = 4, 40
_NUMBERS = {
    "en": {"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
           "eleven", "twelve", "twenty"},
    "de": {"zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "elf",
           "zwölf", "zwanzig"},
}
_LOWER_FIRST = {
    "en": {"a", "an", "the", "each", "every", "all", "any", "you", "your", "players",
           "this", "that", "these", "those", "both", "we", "they", "he", "she", "it", "one",
           "everyone", "whoever", "its", "their", "his", "her", "my", "our"},
    "de": {"der", "die", "das", "ein", "eine", "einen", "jeder", "jede", "jedes", "alle",
           "man", "er", "sie", "es", "du", "ihr", "wir", "dein", "deine", "kein", "keine"},
}
_NOT_VERB_EN = {"the", "a", "an", "of", "to", "and", "or", "than", "with", "at", "least",
                "most", "up", "for", "by", "from", "in", "on", "all", "only", "exactly",
                "about", "these", "those", "its", "their", "his", "her", "your", "my", "our",
                "first", "second", "third", "last", "next", "other", "more", "less"}
_NOT_NOUN_EN = {"are", "is", "were", "was", "have", "has", "can", "may", "must", "will", "do"}
_NP_STOP_EN = {"to", "from", "in", "on", "at", "for", "with", "per", "of", "and", "or", "but",
               "then", "into", "onto", "if", "when", "until", "each", "as", "that", "which",
               "instead", "more", "less", "fewer", "than"}
_MODALS_EN = {"may": "May", "can": "Can", "cannot": "Can", "can't": "Can", "must": "Must",
              "should": "Should"}
_MODALS_DE = {"darf": "Darf", "dürfen": "Dürfen", "kann": "Kann", "können": "Können",
              "muss": "Muss", "müssen": "Müssen", "soll": "Soll", "sollen": "Sollen"}
_BE_EN = {"is": "is", "are": "are"}
_PUNCT = ".,;:!?\"'()[]«»“”"
_SUBJECT_STOP = {
    "en": {"may", "can", "cannot", "must", "should", "will", "to", "from", "in", "on", "at",
           "for", "with", "through", "into", "onto", "of", "and", "or", "is", "are"},
    "de": {"darf", "kann", "muss", "soll", "können", "müssen", "dürfen", "sollen", "ist", "sind",
           "und", "oder", "wird", "werden", "hat", "haben"}}
_PRONOUNS_DE = {"man", "er", "sie", "es", "du", "ihr", "wir"}
_CONTEXT_HEADS = {"en": {"in", "at", "during", "on", "after", "before", "with", "for", "once",
                         "from", "whenever"},
                  "de": {"im", "in", "bei", "beim", "nach", "vor", "zu", "während", "am", "mit"}}
_CONJUNCTIONS = {"and", "but", "or", "so", "then", "und", "aber", "oder", "dann", "sonst"}


@dataclass(frozen=True)
class Candidate:
    """A question, the page sentence that answers it, and the rule that made it."""

    question: str
    answer: str
    rule: str


def units(text: str) -> list[str]:
    """Sentence-bearing units of a page (module docstring): headings dropped."""
    out: list[str] = []
    for line in (x.strip() for x in text.splitlines()):
        if not line:
            continue
        if out and line[0].islower() and out[-1][-1:] not in ".!?:":
            out[-1] += " " + line
        else:
            out.append(line)
    return [u for u in out if u[-1:] in ".!?"]


def sentences(text: str) -> list[str]:
    """Candidate sentences of a page, in page order."""
    found = [s for u in units(text) for s in split_sentences(u)]
    return [s for s in found if s[-1:] in ".!" and MIN_WORDS <= len(s.split()) <= MAX_WORDS]


def _bare(word: str) -> str:
    return word.strip(_PUNCT)


def _clause(words: list[str]) -> str:
    """Words up to the first ; or :, or a comma before a conjunction (final marks stripped)."""
    out = []
    for i, w in enumerate(words):
        if w[-1:] in ";:" or (w[-1:] == "," and i + 1 < len(words)
                              and words[i + 1].lower() in _CONJUNCTIONS):
            out.append(w[:-1])
            break
        out.append(w)
    return " ".join(out).rstrip(_PUNCT + " ")


def _context(words: list[str], language: str) -> tuple[str, list[str]]:
    """A leading adverbial phrase (In, During, ... up to a comma within the first 8
    words), and the words after it."""
    if not words or words[0].lower() not in _CONTEXT_HEADS[language]:
        return "", words
    for i, w in enumerate(words[:8]):
        if w.endswith(","):
            return " ".join(words[:i + 1])[:-1], words[i + 1:]
    return "", words


def _subject(words: list[str], language: str) -> str | None:
    """1-5 words without punctuation, the first a determiner or pronoun (lowered; German
    *Sie* keeps its capital), none after it a modal, preposition or determiner-at-the-end."""
    if not 1 <= len(words) <= 5 or any(_bare(w) != w for w in words):
        return None
    if words[0].lower() not in _LOWER_FIRST[language]:
        return None  # an imperative ("Advance the marker two spaces") or a heading
    inner = {w.lower() for w in words[1:]}
    if inner & (_SUBJECT_STOP[language]) or (len(words) > 1
                                             and words[-1].lower() in _LOWER_FIRST[language]):
        return None  # "you can go through the", "the President draws the"
    if language == "de" and not ((len(words) == 1 and words[0].lower() in _PRONOUNS_DE)
                                 or (len(words) > 1 and words[-1][:1].isupper())):
        return None  # "Die ersten drei Stapel": a German subject ends in a noun
    first = words[0] if words[0] == "Sie" else words[0].lower()
    return " ".join([first, *words[1:]])


def _framed(context: str, question: str) -> str:
    text = f"{context}, {question[0].lower()}{question[1:]}" if context else question
    return re.sub(r"\s+", " ", text).strip() + "?"


def _is_number(word: str, language: str) -> bool:
    """A count above one (one, 1 and ein are left out: "how many" wants a plural)."""
    w = _bare(word).lower()
    return (w.isdigit() and int(w) > 1) or w in _NUMBERS[language]


def _en_base(verb: str) -> tuple[str, str]:
    if verb == "has":
        return "does", "have"
    if verb.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return "does", verb[:-2]
    if verb.endswith("s") and not verb.endswith("ss"):
        return "does", verb[:-1]
    return "do", verb


def _count_en(words: list[str], context: str) -> str | None:
    for i in range(1, min(len(words) - 1, 7)):
        if not _is_number(words[i], "en"):
            continue
        verb = words[i - 1]
        subject = _subject(words[:i - 1], "en")
        if subject is None or not verb.isalpha() or not verb.islower() or verb in _NOT_VERB_EN:
            return None
        if verb in _BE_EN:
            return _framed(context, f"What {verb} {subject}") if len(words[:i - 1]) >= 2 else None
        if verb.endswith(("ing", "ed")) or verb in _MODALS_EN:
            return None
        noun: list[str] = []
        for w in words[i + 1:i + 4]:
            if _bare(w).lower() in _NP_STOP_EN or not _bare(w):
                break
            noun.append(_bare(w))
            if _bare(w) != w:
                break
        if not noun or noun[0].lower() in _NOT_NOUN_EN:
            return None
        do, base = _en_base(verb)
        tail = _clause(words[i + 1 + len(noun):]) if words[i + len(noun)] == noun[-1] else ""
        return _framed(context, f"How many {' '.join(noun)} {do} {subject} {base} {tail}")
    return None


def _modal(words: list[str], context: str, language: str) -> str | None:
    modals = _MODALS_EN if language == "en" else _MODALS_DE
    for i in range(1, min(len(words) - 1, 6)):
        modal = modals.get(words[i].lower())
        if modal is None:
            continue
        subject = _subject(words[:i], language)
        rest = words[i + 1:]
        if rest and rest[0].lower() == "not" if language == "en" else rest and rest[0] == "nicht":
            rest = rest[1:]
        body = _clause(rest)
        if subject is None or len(body.split()) < 2 or body.count("(") != body.count(")"):
            return None
        return _framed(context, f"{modal} {subject} {body}")
    return None


def _condition(words: list[str], language: str) -> str | None:
    heads = {"en": {"If": "What happens if", "When": "What happens when"},
             "de": {"Wenn": "Was passiert, wenn"}}[language]
    head = heads.get(words[0])
    if head is None:
        return None
    for i, w in enumerate(words[1:16], start=1):
        if w.endswith(","):
            clause = " ".join(words[1:i + 1])[:-1]
            return f"{head} {clause}?" if i >= 2 else None
    return None


def _count_de(words: list[str], context: str) -> str | None:
    for i in range(1, min(len(words) - 1, 7)):
        if not _is_number(words[i], "de"):
            continue
        verb, subject = words[i - 1], _subject(words[:i - 1], "de")
        if subject is None or not verb.isalpha() or not verb.islower():
            return None
        noun: list[str] = []
        for w in words[i + 1:i + 4]:
            noun.append(_bare(w))
            if _bare(w)[:1].isupper() or _bare(w) != w:
                break
        if not noun or not noun[-1][:1].isupper():
            return None
        rest = _clause(words[i + 1 + len(noun):])
        return _framed(context, f"Wie viele {' '.join(noun)} {verb} {subject} {rest}")
    return None


def _rules(sentence: str, language: str) -> tuple[str, str] | None:
    """(question, rule) of the first rule that fits ``sentence``, or None."""
    words = sentence.split()
    if (q := _condition(words, language)) is not None:
        return q, "condition"
    context, body = _context(words, language)
    if (q := COUNT_RULES[language](body, context)) is not None:
        return q, "count"
    if (q := _modal(body, context, language)) is not None:
        return q, "modal"
    return None


COUNT_RULES: dict[str, Callable[[list[str], str], str | None]] = {"en": _count_en,
                                                                  "de": _count_de}
"""Language -> its count rule (the modal and condition rules share one body); a language
not listed has no rules."""
RULES = tuple(COUNT_RULES)


def supports(page_language: str, language: str) -> bool:
    """Whether the rules can ask in ``language`` about a page in ``page_language``."""
    return page_language.split("-")[0] == language.split("-")[0] and language.split("-")[0] in RULES


def generate(text: str, language: str, limit: int) -> list[Candidate]:
    """At most ``limit`` candidates of a page in ``language``, in page order."""
    base = language.split("-")[0]
    if base not in RULES:
        return []
    out: list[Candidate] = []
    for s in sentences(text):
        made = _rules(s, base)
        if made is not None:
            out.append(Candidate(made[0], s, made[1]))
            if len(out) >= limit:
                break
    return out
