"""Where a heading title occurs in a page: every start of its tolerant, whole-word match.

Definition: a title matches at offset ``p`` of a page when the regular expression of
:func:`title_pattern` (case-insensitive; each run of whitespace between words as
``\\s+``; each dash of the title as a run of one or more of :data:`DASHES`; each quote as
one of :data:`QUOTES`; no word character just before or after) matches there.
:func:`match_starts` lists every such ``p`` in increasing order, overlapping ones included.

Why not only the regular expression: compiling one is ~0.1 ms, and a library of hundreds
of rulebooks has hundreds of thousands of headings, each a distinct pattern (the
compiled-pattern cache of :mod:`re` holds 512). For an ASCII page and a title of
ASCII characters, dashes and quotes whose dashes stand alone between two other
characters (the usual heading), :class:`PageView` finds the same offsets with
``str.find`` on a canonical copy of the page: lower case (ASCII case-insensitivity is
equality of lower cases), every whitespace run as one space, every dash run as one
``-``, every ASCII quote as ``'``. The runs are collapsed only where they are longer
than one character, and the offsets mapped back by the segments between them.

Edge cases: a title whose word begins or ends with a dash, has two dashes in a row, or
carries a non-ASCII letter, and every non-ASCII page, take the regular expression (a dash
run at a word's edge can end a match one character earlier than its collapsed copy).
The equality of both paths is tested on seeded texts (``tests/corpus/test_title_match.py``).

Reference: Python ``re`` syntax (``\\s``, ``\\w``, ``re.IGNORECASE``): for ASCII
characters ``\\s`` is ``str.isspace`` and ``\\w`` is ``str.isalnum`` or ``_``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

DASHES = "-‐‑‒–—−"
"""Characters a dash of a title matches (a run of them)."""
QUOTES = "'’‘`"
"""Characters a quote of a title matches (exactly one)."""

_ASCII_SPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "  # the ASCII characters re's \s matches
_CANON = str.maketrans({**dict.fromkeys(_ASCII_SPACE, " "), "`": "'"})
_TITLE_CANON = str.maketrans({**dict.fromkeys(DASHES, "-"), **dict.fromkeys(QUOTES, "'")})
_RUN = re.compile(r"\s{2,}|-{2,}")


def title_pattern(title: str) -> str:
    """The regular expression of a title (see the module docstring)."""
    parts = []
    for word in title.split():
        esc = "".join(
            f"[{re.escape(DASHES)}]+" if ch in DASHES
            else f"[{re.escape(QUOTES)}]" if ch in QUOTES
            else re.escape(ch)
            for ch in word
        )
        parts.append(esc)
    return r"(?<!\w)" + r"\s+".join(parts) + r"(?!\w)"


def _fast_title(title: str) -> str | None:
    """The canonical copy of ``title`` when :class:`PageView` may search it, else None."""
    words = title.split()
    for word in words:
        canon = word.translate(_TITLE_CANON)
        if not canon.isascii() or canon.startswith("-") or canon.endswith("-") or "--" in canon:
            return None
    return " ".join(w.translate(_TITLE_CANON) for w in words).lower()


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


@dataclass
class PageView:
    """One page's text, with its canonical copy built at the first search that needs it."""

    text: str
    _canon: str | None = field(default=None, init=False, repr=False)
    _segments: list[tuple[int, int]] = field(default_factory=list, init=False, repr=False)

    def _canonical(self) -> str:
        if self._canon is None:
            low = self.text.lower().translate(_CANON)
            pieces, at, pos = [], 0, 0
            self._segments = [(0, 0)]  # (canonical start, original start) of each verbatim segment
            for m in _RUN.finditer(low):
                pieces += [low[pos:m.start()], low[m.start()]]
                at += m.start() - pos + 1
                pos = m.end()
                self._segments.append((at, pos))
            pieces.append(low[pos:])
            self._canon = "".join(pieces)
        return self._canon

    def _original(self, p: int) -> int:
        """The original offset of canonical offset ``p`` (never inside a collapsed run:
        a match begins with a title character, neither whitespace nor a dash)."""
        canon_start, orig_start = self._segments[bisect_right(self._segments, (p, len(self.text))) - 1]
        return orig_start + p - canon_start

    def match_starts(self, title: str) -> list[int]:
        """Every offset where ``title`` matches (see the module docstring), ascending."""
        fast = _fast_title(title) if self.text.isascii() else None
        if fast is None or not fast:
            rx = re.compile(title_pattern(title), re.IGNORECASE)
            starts: list[int] = []
            m = rx.search(self.text)
            while m is not None:
                starts.append(m.start())
                m = rx.search(self.text, m.start() + 1)
            return starts
        canon = self._canonical()
        out: list[int] = []
        p = canon.find(fast)
        while p >= 0:
            end = p + len(fast)
            if (p == 0 or not _is_word(canon[p - 1])) and (end == len(canon) or not _is_word(canon[end])):
                out.append(self._original(p))
            p = canon.find(fast, p + 1)
        return out
