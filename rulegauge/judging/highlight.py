"""The question's terms marked in a page's text, as HTML (``<mark>``), for the judging page.

A word of the page is marked when its stem (Snowball, in the question's language,
:class:`rulegauge.core.text.Tokenizer`) is the stem of a question word of at least three
letters (digits always count) that is no question stop word (the extractive
answerer's list: "how", "the", "and"...), so "lanterns" in the question marks
"lantern" and "Lanterns" on the page and "the" never marks anything. Everything else is
escaped (``html.escape``): page text is data, never markup.
"""

from __future__ import annotations

import html
import re

from rulegauge.answering.answerers.extractive import question_stopwords
from rulegauge.core.text import Tokenizer

_WORD = re.compile(r"[^\W_]+")
MIN_LETTERS = 3


def question_terms(question: str, language: str) -> frozenset[str]:
    """Stems of the question's words of at least :data:`MIN_LETTERS` letters (or digits)."""
    return frozenset(Tokenizer(stem_language=language, min_len=MIN_LETTERS,
                               stopwords=question_stopwords(language))(question))


def highlight(text: str, terms: frozenset[str], language: str) -> str:
    """``text`` as escaped HTML with every word whose stem is in ``terms`` in ``<mark>``."""
    stem = Tokenizer(stem_language=language)
    out, last = [], 0
    for m in _WORD.finditer(text):
        stems = stem(m.group())
        if stems and all(s in terms for s in stems):
            out += [html.escape(text[last:m.start()]), "<mark>", html.escape(m.group()),
                    "</mark>"]
            last = m.end()
    out.append(html.escape(text[last:]))
    return "".join(out)
