"""Where a proposed answer sentence occurs in its page: exact or fuzzy, on word tokens.

A generator (rule-based or an LLM) says which sentence of a page answers its
question; the sentence must be *in the page*, or the proposal is dropped (and
counted). Both texts are cut into word tokens (``[^\\W_]+``, case-folded), so
whitespace, line breaks and punctuation never matter:

* **exact**: the answer's tokens occur contiguously in the page's tokens;
* **fuzzy**: otherwise, for every page position holding one of the answer's first
  three tokens, the window of ``ceil(1.2 n)`` page tokens from there (``n`` = the
  answer's token count) is compared with the answer by
  :class:`difflib.SequenceMatcher`; the window matching the most answer tokens in
  order wins (ties: the earliest). The answer is found when at least
  :data:`MIN_SHARE` (90%) of its tokens match.

An answer of fewer than :data:`MIN_TOKENS` tokens is never found (two words occur
anywhere). The match carries character offsets into the page's own text, so the
page's wording (not the generator's) is what a reviewer sees and what is kept.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from rulegauge.core.text import fold

MIN_SHARE = 0.9
MIN_TOKENS = 3
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Match:
    """``text[start:end]`` of the page is the answer; ``share`` of its tokens matched."""

    start: int
    end: int
    share: float
    exact: bool


def tokens(text: str) -> list[tuple[str, int, int]]:
    """(folded token, start, end) of every word of ``text``."""
    return [(fold(m.group()), m.start(), m.end()) for m in _WORD.finditer(text)]


def _span(text: str, page: list[tuple[str, int, int]], first: int, last: int) -> tuple[int, int]:
    """Offsets from token ``first`` to token ``last``, the sentence's closing mark kept."""
    start, end = page[first][1], page[last][2]
    while end < len(text) and text[end] in ".!?;:)\"'”»":
        end += 1
    return start, end


def locate(answer: str, text: str) -> Match | None:
    """Where ``answer`` occurs in ``text`` (module docstring), or None."""
    want = [t for t, _, _ in tokens(answer)]
    if len(want) < MIN_TOKENS:
        return None
    page = tokens(text)
    words = [t for t, _, _ in page]
    n = len(want)
    for i in range(len(words) - n + 1):
        if words[i:i + n] == want:
            return Match(*_span(text, page, i, i + n - 1), 1.0, True)
    width = math.ceil(1.2 * n)
    heads = set(want[:3])
    best: tuple[int, int, int] | None = None  # (matched, first, last)
    for i, w in enumerate(words):
        if w not in heads:
            continue
        window = words[i:i + width]
        blocks = [b for b in SequenceMatcher(None, want, window, autojunk=False)
                  .get_matching_blocks() if b.size]
        matched = sum(b.size for b in blocks)
        if blocks and (best is None or matched > best[0]):
            best = (matched, i + blocks[0].b, i + blocks[-1].b + blocks[-1].size - 1)
    if best is None or best[0] < MIN_SHARE * n:
        return None
    return Match(*_span(text, page, best[1], best[2]), best[0] / n, False)


def page_wording(text: str, match: Match) -> str:
    """The matched part of the page, whitespace collapsed (what a proposal keeps)."""
    return " ".join(text[match.start:match.end].split())
