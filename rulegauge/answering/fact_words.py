"""Word lists of the fact matcher: negations, number words and function words per language.

Folded (:func:`rulegauge.core.text.fold`), unstemmed forms, compared with the folded tokens
of an answer sentence before stemming. The languages are the sample's and the shared gold
sets': en, de, es, fr, ru, fa. A language without a list falls back to the English one,
since gold sets mix English phrasings into every language's facts.

* :data:`NEGATIONS`: a token that negates what follows or surrounds it ("not", "never",
  "cannot"; the ``t`` of "can't", "don't" is the token the tokenizer leaves after the
  apostrophe). Persian negates verbs with a prefix (نمی‌, نـ): :func:`is_negation` also
  takes the common negated verb stems (نمی, نیست, ندار, نکن, ...).
* :data:`NUMBER_WORDS`: spelled-out numbers one to twelve (and "zero"): in a phrasing they
  are like digits, never content on their own.
* :data:`FUNCTION_WORDS`: articles, prepositions, auxiliaries; skipped in a phrasing (they
  need not appear in the answer) and never content on their own.

Reference: the negation cues follow the NegEx trigger idea (Chapman et al., "A simple
algorithm for identifying negated findings and diseases in discharge summaries", Journal
of Biomedical Informatics 34, 2001), reduced to single-token cues.
"""

from __future__ import annotations

NEGATIONS: dict[str, frozenset[str]] = {
    "en": frozenset(("not", "no", "never", "cannot", "nor", "neither", "none", "nobody",
                     "nothing", "t", "without", "nowhere")),
    "de": frozenset(("nicht", "kein", "keine", "keinen", "keinem", "keiner", "keines", "nie",
                     "niemals", "nichts", "ohne", "weder")),
    "es": frozenset(("no", "nunca", "jamás", "ni", "ningún", "ninguna", "ninguno", "nada",
                     "sin", "tampoco")),
    "fr": frozenset(("ne", "pas", "jamais", "aucun", "aucune", "rien", "sans", "ni", "n")),
    "ru": frozenset(("не", "нет", "ни", "никогда", "нельзя", "без", "ничего", "никто")),
    "fa": frozenset(("نه", "نیست", "نیستند", "هرگز", "بدون", "هیچ", "نمی")),
}

NUMBER_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                     "nine", "ten", "eleven", "twelve", "once", "twice")),
    "de": frozenset(("null", "eins", "ein", "eine", "zwei", "drei", "vier", "fünf", "sechs",
                     "sieben", "acht", "neun", "zehn", "elf", "zwölf")),
    "es": frozenset(("cero", "uno", "una", "dos", "tres", "cuatro", "cinco", "seis", "siete",
                     "ocho", "nueve", "diez", "once", "doce")),
    "fr": frozenset(("zéro", "un", "une", "deux", "trois", "quatre", "cinq", "six", "sept",
                     "huit", "neuf", "dix", "onze", "douze")),
    "ru": frozenset(("ноль", "один", "одна", "одно", "два", "две", "три", "четыре", "пять",
                     "шесть", "семь", "восемь", "девять", "десять", "одиннадцать", "двенадцать")),
    # "نه" (nine) is left out: it is also the Persian "no"
    "fa": frozenset(("صفر", "یک", "دو", "سه", "چهار", "پنج", "شش", "هفت", "هشت", "ده")),
}

FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(("a", "an", "the", "of", "to", "in", "on", "at", "for", "by", "with", "and",
                     "or", "is", "are", "be", "it", "its", "your", "you", "their", "each",
                     "per", "that", "this", "as", "from", "into", "if", "do", "does", "get")),
    "de": frozenset(("der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "und",
                     "oder", "ist", "sind", "zu", "im", "in", "am", "an", "auf", "mit", "von",
                     "für", "es", "man", "sie", "du", "ihr", "je")),
    "es": frozenset(("el", "la", "los", "las", "un", "una", "y", "o", "de", "del", "en", "a",
                     "al", "por", "para", "con", "es", "se", "su", "sus", "que", "lo")),
    "fr": frozenset(("le", "la", "les", "un", "une", "et", "ou", "de", "du", "des", "en", "à",
                     "au", "aux", "par", "pour", "avec", "est", "se", "sa", "son", "ses", "que")),
    "ru": frozenset(("в", "во", "на", "и", "или", "с", "со", "к", "по", "за", "из", "у", "о",
                     "от", "для", "это", "его", "её", "их", "свой", "своей", "своего", "а")),
    # the bare affixes a ZWNJ splits off (ها, ی, ...) are function words here
    "fa": frozenset(("و", "در", "به", "از", "با", "که", "را", "این", "آن", "یا", "برای", "تا",
                     "ها", "های", "ی", "ای", "تر", "ترین", "می")),
}


COMPARATIVES: frozenset[str] = frozenset((
    "more", "less", "fewer", "later", "earlier", "longer",
    "más", "menos", "plus", "moins", "больше", "более", "меньше", "менее", "позже", "بیشتر", "کمتر"))
"""A negation cue directly before one of these bounds a number instead of negating: "no
more than 5 cards", "не больше 5 карт" state the limit."""

VERB_FINAL: frozenset[str] = frozenset(("fa",))
"""Languages whose negation usually follows the phrase (on the sentence-final verb):
the negation window is searched after an occurrence too."""

_PERSIAN_NEGATED_VERBS = ("نمی", "نیست", "ندار", "نکن", "نشو", "نشد", "نباید", "نتوان", "نخواه")


def _lookup(table: dict[str, frozenset[str]], language: str) -> frozenset[str]:
    return table.get(language, frozenset()) | table["en"]


def negations(language: str) -> frozenset[str]:
    """Negation cues of ``language`` plus the English ones (folded forms)."""
    return _lookup(NEGATIONS, language)


def number_words(language: str) -> frozenset[str]:
    """Spelled-out numbers of ``language`` plus the English ones."""
    return _lookup(NUMBER_WORDS, language)


def function_words(language: str) -> frozenset[str]:
    """Function words of ``language`` plus the English ones."""
    return _lookup(FUNCTION_WORDS, language)


def is_negation(token: str, language: str) -> bool:
    """Whether the folded token ``token`` negates (Persian verb prefixes included)."""
    if token in negations(language):
        return True
    return language == "fa" and token.startswith(_PERSIAN_NEGATED_VERBS)
