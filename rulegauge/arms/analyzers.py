"""Analyzers of the lexical arms: the token chain a scoring preset names.

``lucene-english`` follows the order of Lucene's ``EnglishAnalyzer`` (the analyzer of
Anserini's BM25 baselines): words, English possessive removal, lower case, stop words,
Porter stemming::

    text -> words (rulegauge.core.text: NFC, case-folded runs of letters and digits)
         -> a trailing 's / ’s dropped ("player's" -> "player"; EnglishPossessiveFilter)
         -> the 33 stop words of Lucene's ENGLISH_STOP_WORDS_SET removed
         -> the Porter stemmer (Snowball's ``porter`` algorithm; PorterStemFilter)

Where it differs from Lucene's StandardTokenizer (UAX #29 word breaks): a word with an
inner apostrophe other than a possessive is split there (``don't`` -> ``don``, ``t``),
and numbers with inner points or commas are split (``3.5`` -> ``3``, ``5``), as every
lexical arm of rulegauge splits them (:mod:`rulegauge.core.text`). The stop words are
compared before stemming, as Lucene's StopFilter runs before its stemmer. Stems are
memoised per analyzer (a corpus has far fewer distinct words than tokens; the pure-Python
stemmer is the slow step otherwise).

``stemmer`` may name another Snowball algorithm (``"english"``: Porter2, the stemmer
bm25s's documentation pairs with PyStemmer) or ``"none"``.

References: Apache Lucene, ``org.apache.lucene.analysis.en.EnglishAnalyzer`` (stop set:
``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``); M. F. Porter, "An algorithm for suffix
stripping", *Program* 14(3), 1980; Lin et al., "Anserini", SIGIR 2017.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rulegauge.core.errors import ConfigError
from rulegauge.core.text import Tokenizer, snowball

LUCENE_ENGLISH_STOP_WORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
))
"""Lucene's English stop set (33 words), written out here."""

STEMMER_CHOICES = ("porter", "english", "none")
_POSSESSIVE = re.compile(r"(?<=[^\W_])['’\uff07][sS](?![^\W_])")


@dataclass(frozen=True)
class Analyzer:
    """A token chain: words, optional possessive removal, stop words, a Snowball stemmer.

    ``stemmer``: a name in :data:`STEMMER_CHOICES`; ``stopwords`` compared with folded,
    unstemmed words. Calling it on a text gives its terms in text order (duplicates kept).
    """

    name: str
    stemmer: str = "porter"
    stopwords: frozenset[str] = LUCENE_ENGLISH_STOP_WORDS
    possessive: bool = True
    _stems: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.stemmer not in STEMMER_CHOICES:
            raise ConfigError(f"analyzer {self.name}: stemmer must be one of "
                              f"{', '.join(STEMMER_CHOICES)}, got {self.stemmer!r}")

    def __call__(self, text: str) -> list[str]:
        if self.possessive and ("'" in text or "’" in text or "\uff07" in text):
            text = _POSSESSIVE.sub("", text)
        words = Tokenizer(stopwords=self.stopwords)(text)
        if self.stemmer == "none":
            return words
        stems = self._stems
        new = [w for w in dict.fromkeys(words) if w not in stems]
        if new:
            stems.update(zip(new, snowball(self.stemmer).stemWords(new), strict=True))
        return [stems[w] for w in words]

    def describe(self) -> dict[str, object]:
        return {"analyzer": self.name, "stemmer": self.stemmer, "stopwords": len(self.stopwords),
                "possessive": self.possessive}


def lucene_english(stemmer: str = "porter") -> Analyzer:
    """Lucene's EnglishAnalyzer chain (module docstring), with ``stemmer`` as its stemmer."""
    return Analyzer("lucene-english", stemmer=stemmer)
