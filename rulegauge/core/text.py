"""Text normalisation and tokenisation: the one place text is cleaned.

``normalise`` is applied to every page a loader produces; ``tokenize`` is used by
every lexical component (bm25 arm, boost arm, errata matching, extractive
answerer) so that they agree on what a "term" is.

Conventions
-----------
* Unicode NFC; control characters (U+0000-U+001F except tab/newline/form feed,
  U+007F-U+009F, e.g. the U+0007 bullets PDF extraction leaves) become spaces.
* Line ends: CRLF and a lone CR are line breaks, except a CR touching a space,
  tab or no-break space, which is a word separator: some PDF producers put
  TAB CR SPACE NBSP between words (pypdf's text of the SRD 5.1), and reading
  those CRs as line breaks would put every word on a line of its own.
* Soft hyphens are dropped; a word hyphenated at a line end (``rule-\\nbook``)
  is joined when the next line starts with a lower-case letter.
* Runs of spaces/tabs collapse to one space; lines are stripped; three or
  more newlines collapse to two. Newlines are kept (headings are line-based).
* Zero-width non-joiner (U+200C) and joiner (U+200D) are kept: Persian needs them.

Tokens are maximal runs of letters and digits (``[^\\W_]``), case-folded;
Arabic-script variants are folded to Persian forms (Arabic yeh U+064A and alef
maksura U+0649 -> Persian yeh U+06CC, Arabic kaf U+0643 -> keheh U+06A9, heh
with yeh above U+06C0 -> heh U+0647), Persian and Arabic-Indic digits are
folded to ASCII (so "۳" matches "3"), tatweel and Arabic diacritics are
dropped; Cyrillic ё -> е. The ZWNJ splits a Persian compound into its parts, so
"رئیس‌جمهور" matches "رئیس جمهور".

Stemming (optional, :class:`Tokenizer` ``stem_language``) uses the Snowball
stemmers of ``snowballstemmer`` for en, de, fr, es, ru and fa. For Persian the
parts of a ZWNJ compound that are bare inflectional affixes (plural ``ها``,
comparative ``تر``, verbal prefix ``می``...) are dropped before stemming, so
"کارت‌ها" and "کارتها" both stem to "کارت".

References: Unicode TR #15 (normalisation forms); Porter, "Snowball: a language
for stemming algorithms" (2001), https://snowballstem.org/.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass, field

import snowballstemmer

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0d-\x1f\x7f-\x9f]")
_CR_SEPARATOR = re.compile(r"(?<=[ \t\u00a0])\r(?!\n)|\r(?=[ \t\u00a0])")
_SOFT_HYPHEN = "\u00ad"
_HYPHEN_BREAK = re.compile(r"(?<=[^\W\d_])-[ \t]*\n[ \t]*(?=[^\W\d_])")
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200b\u202f\u205f\u3000]+")
_MANY_NEWLINES = re.compile(r"\n{3,}")

ZWNJ = "\u200c"
_DIGITS = {chr(base + i): str(i) for base in (0x06F0, 0x0660) for i in range(10)}
_ARABIC_FOLD = str.maketrans(
    {
        "\u064a": "\u06cc",  # Arabic yeh -> Persian yeh
        "\u0649": "\u06cc",  # alef maksura -> Persian yeh
        "\u0643": "\u06a9",  # Arabic kaf -> keheh
        "\u06c0": "\u0647",  # heh with yeh above (ezafe) -> heh
        "\u0640": None,  # tatweel
        "ё": "е",
        ZWNJ: " ",
        "\u200d": None,
        **_DIGITS,
    }
)
_ARABIC_MARKS = re.compile(r"[\u064b-\u065f\u0670\u06d6-\u06ed]")
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_ZWNJ_TOKEN = re.compile(r"[^\W_]+(?:\u200c[^\W_]+)+")

STEMMERS = {"en": "english", "de": "german", "fr": "french", "es": "spanish",
            "ru": "russian", "fa": "persian"}
"""Language code -> Snowball algorithm name used when stemming."""

_PERSIAN_AFFIXES = frozenset(
    ("ها", "های", "هایی", "ی", "ای", "ام", "ات", "اش", "مان", "تان", "شان",
     "تر", "ترین", "می", "نمی")
)

# Glyph-index debris left by PDF extraction when a font has no usable ToUnicode map.


def normalise(text: str) -> str:
    """Clean extracted text (see module docstring for the exact rules).

    Idempotent: ``normalise(normalise(t)) == normalise(t)``.
    """
    t = unicodedata.normalize("NFC", text)
    t = _CR_SEPARATOR.sub(" ", t)
    t = t.replace("\r\n", "\n").replace("\r", "\n").replace(_SOFT_HYPHEN, "")
    t = _CONTROL.sub(" ", t)
    t = _HYPHEN_BREAK.sub(lambda m: _join_hyphen(m, t), t)
    t = _SPACES.sub(" ", t)
    t = "\n".join(line.strip() for line in t.split("\n"))
    t = _MANY_NEWLINES.sub("\n\n", t)
    return t.strip()


def _join_hyphen(m: re.Match[str], text: str) -> str:
    nxt = text[m.end() : m.end() + 1]
    return "" if nxt.islower() else "-"


def fold(text: str) -> str:
    """Case- and script-fold ``text`` for matching (no tokenisation)."""
    t = unicodedata.normalize("NFC", text).casefold().translate(_ARABIC_FOLD)
    return _ARABIC_MARKS.sub("", t)


_LOCAL = threading.local()


def _stemmer(language: str):  # type: ignore[no-untyped-def]
    """The Snowball stemmer of a language code (:data:`STEMMERS`), or None."""
    name = STEMMERS.get(language)
    return snowball(name) if name else None


def snowball(algorithm: str):  # type: ignore[no-untyped-def]
    """A Snowball stemmer per thread by algorithm name (``"english"``, ``"porter"``...):
    snowballstemmer objects keep state between calls and corrupt each other when shared
    across threads."""
    cache = getattr(_LOCAL, "stemmers", None)
    if cache is None:
        cache = _LOCAL.stemmers = {}
    if algorithm not in cache:
        cache[algorithm] = snowballstemmer.stemmer(algorithm)
    return cache[algorithm]


def _drop_persian_affixes(text: str) -> str:
    """Remove ZWNJ-attached affix parts (``کارت‌ها`` -> ``کارت``) before folding."""

    def keep(m: re.Match[str]) -> str:
        parts = [p for p in m.group(0).split(ZWNJ) if fold(p) not in _PERSIAN_AFFIXES]
        return ZWNJ.join(parts) if parts else m.group(0)

    return _ZWNJ_TOKEN.sub(keep, text)


@dataclass(frozen=True)
class Tokenizer:
    """Unicode-aware word tokenizer with optional Snowball stemming.

    ``stem_language`` selects a Snowball stemmer (:data:`STEMMERS`: en, de, fr,
    es, ru, fa); unknown languages are left unstemmed. ``min_len`` drops shorter
    tokens except digits. ``stopwords`` are compared with folded, unstemmed tokens.
    """

    stem_language: str | None = None
    min_len: int = 1
    stopwords: frozenset[str] = field(default_factory=frozenset)

    def __call__(self, text: str) -> list[str]:
        if self.stem_language == "fa" and ZWNJ in text:
            text = _drop_persian_affixes(unicodedata.normalize("NFC", text))
        folded = fold(text)
        out: list[str] = _TOKEN.findall(folded)
        if "'" in folded or "’" in folded:  # split at apostrophes (parts are never empty)
            out = [part for t in out for part in t.replace("’", "'").split("'")]
        if self.min_len > 1 or self.stopwords:
            out = [p for p in out
                   if (len(p) >= self.min_len or p.isdigit()) and p not in self.stopwords]
        if self.stem_language:
            st = _stemmer(self.stem_language)
            if st is not None:
                out = st.stemWords(out)
        return out

    def describe(self) -> dict[str, object]:
        return {"stem_language": self.stem_language, "min_len": self.min_len,
                "stopwords": len(self.stopwords)}


def tokenize(text: str) -> list[str]:
    """Tokenise with the default :class:`Tokenizer` (no stemming)."""
    return Tokenizer()(text)


def letters_ratio(text: str) -> tuple[int, int]:
    """(Unicode letters, non-space characters) of ``text``: the fence's inputs."""
    letters = sum(1 for ch in text if unicodedata.category(ch).startswith("L"))
    nonspace = sum(1 for ch in text if not ch.isspace())
    return letters, nonspace


_SCRIPT_LANGUAGE = (("ARABIC", "fa"), ("CYRILLIC", "ru"))
_LATIN_STOPWORDS = {
    "en": frozenset(("the", "and", "of", "to", "is", "in", "you", "your", "a", "are", "that",
                     "with", "for", "on", "each")),
    "de": frozenset(("der", "die", "das", "und", "ist", "nicht", "ein", "eine", "mit", "zu",
                     "den", "von", "sie", "auf")),
    "fr": frozenset(("le", "la", "les", "et", "est", "des", "un", "une", "du", "en", "que",
                     "pour", "sur", "vous", "pas")),
    "es": frozenset(("el", "la", "los", "las", "y", "es", "de", "del", "un", "una", "que",
                     "en", "por", "para", "se", "con")),
}


def guess_language(text: str, default: str = "en") -> str:
    """Guess a language code from the script and, for Latin text, stopwords.

    Arabic script -> ``fa`` (rulegauge' only Arabic-script language), Cyrillic
    -> ``ru``; Latin text goes to whichever of en, de, fr, es has most stopword
    hits (ties and no hits -> ``default``). A heuristic for bare files given to
    ``rulegauge ingest``; gold sets state the language explicitly.
    """
    sample = text[:20000]
    counts: dict[str, int] = {}
    for ch in sample:
        if ch.isalpha():
            script = unicodedata.name(ch, "").split(" ", 1)[0]
            counts[script] = counts.get(script, 0) + 1
    if not counts:
        return default
    script = max(sorted(counts), key=lambda k: counts[k])
    for name, code in _SCRIPT_LANGUAGE:
        if script == name:
            return code
    words = tokenize(sample)
    votes = {lang: sum(1 for w in words if w in sw) for lang, sw in _LATIN_STOPWORDS.items()}
    best = max(votes.values())
    winners = [lang for lang, v in votes.items() if v == best]
    return winners[0] if best > 0 and len(winners) == 1 else default
