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
    what: str = "glyph-index tokens"
    """What its matches are, in a warning: a PDF font's glyph names, or characters that
    plain text holds too (U+FFFD, controls, private use), worded so they fit either."""


_PDF = "PDF glyph ids or names (a font without a ToUnicode map)"

GLYPH_PATTERNS: tuple[GlyphPattern, ...] = (
    GlyphPattern("cid", r"\(cid:\d+\)", "pdfminer's unmapped glyph id, e.g. (cid:123)",
                 _PDF),
    GlyphPattern("slash_g", r"(?<![A-Za-z.:])/g\d+\b",
                 "glyph name /gN from a font without a ToUnicode map (not inside a URL path)",
                 _PDF),
    GlyphPattern("glyph", r"\bglyph\d+\b", "glyph name glyphN", _PDF),
    GlyphPattern("uni", r"(?<![A-Za-z.:])/uni[0-9A-Fa-f]{4,6}\b", "glyph name /uniXXXX",
                 _PDF),
    GlyphPattern("control", r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]",
                 "a stray control character (tab, newline, CR and form feed excepted), each one",
                 "stray control characters"),
    GlyphPattern("replacement", "\ufffd", "U+FFFD replacement character, each one",
                 "U+FFFD replacement characters (bytes a decoder or extractor could not map)"),
    GlyphPattern("private_use", r"[\ue000-\uf8ff]", "a private-use code point (symbol-font glyph)",
                 "private-use code points (symbol-font glyphs or custom characters)"),
)


_ALL = re.compile("|".join(f"(?:{p.regex})" for p in GLYPH_PATTERNS))


def glyph_tokens(text: str) -> list[str]:
    """Every glyph-index token in ``text``, in order."""
    return _ALL.findall(text)


_EACH = tuple((p, re.compile(p.regex)) for p in GLYPH_PATTERNS)


def glyph_summary(text: str) -> str | None:
    """``text``'s debris in words, by kind, most frequent first (ties in pattern order),
    each with an example: ``"3 U+FFFD replacement characters (...), e.g. U+FFFD"``;
    None when there is none. Kinds with the same wording are counted together."""
    counts: dict[str, list[str]] = {}
    for p, rx in _EACH:
        found = rx.findall(text)
        if found:
            counts.setdefault(p.what, []).extend(found)
    if not counts:
        return None
    order = sorted(counts.items(), key=lambda kv: -len(kv[1]))  # stable: pattern order on ties
    return "; ".join(f"{len(found)} {what}, e.g. {_shown(found[0])}" for what, found in order)


def _shown(token: str) -> str:
    """A token as printed: a single character by its code point (U+FFFD, U+0007, U+E001
    print as nothing or as a box), a glyph name as it is."""
    return f"U+{ord(token):04X}" if len(token) == 1 else token
