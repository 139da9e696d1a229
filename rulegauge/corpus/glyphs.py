"""Glyph-index tokens: PDF text-extraction debris, counted the same way everywhere.

A font without a ToUnicode map makes extractors emit glyph ids instead of text:
pdfminer's ``(cid:N)``, glyph names ``/gN``, ``glyphN``, ``/uniXXXX``, plus stray
control characters, U+FFFD and private-use code points. The answer fence
(:mod:`rulegauge.answering.fence`) and the ingest report (:mod:`rulegauge.corpus.ingest`) both
count matches of :data:`GLYPH_PATTERNS`; every match is one token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class GlyphPattern:
    """A named regular expression whose every match is one glyph-index token."""

    name: str
    regex: str
    doc: str


GLYPH_PATTERNS: tuple[GlyphPattern, ...] = (
    GlyphPattern("cid", r"\(cid:\d+\)", "pdfminer's unmapped glyph id, e.g. (cid:123)"),
    GlyphPattern("slash_g", r"(?<![A-Za-z.:])/g\d+\b",
                 "glyph name /gN from a font without a ToUnicode map (not inside a URL path)"),
    GlyphPattern("glyph", r"\bglyph\d+\b", "glyph name glyphN"),
    GlyphPattern("uni", r"(?<![A-Za-z.:])/uni[0-9A-Fa-f]{4,6}\b", "glyph name /uniXXXX"),
    GlyphPattern("control", r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]",
                 "a stray control character (tab, newline, CR and form feed excepted), each one"),
    GlyphPattern("replacement", "\ufffd", "U+FFFD replacement character, each one"),
    GlyphPattern("private_use", r"[\ue000-\uf8ff]", "a private-use code point (symbol-font glyph)"),
)


_ALL = re.compile("|".join(f"(?:{p.regex})" for p in GLYPH_PATTERNS))


def glyph_tokens(text: str) -> list[str]:
    """Every glyph-index token in ``text``, in order."""
    return _ALL.findall(text)
