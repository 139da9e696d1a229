"""Heading detection in plain text, for documents without outline or markup.

A line is a heading when it passes every *shape* test, has a heading *context*
and has one of the heading *kinds* below. Lines are those of normalised page
text (:func:`rulegauge.core.text.normalise`).

Shape
    3-80 characters, at most 12 words, at least 3 letters, letters at least
    half of its non-space characters, no final ``. , ; : ! ?`` and no sentence
    end inside (``Hitler. If``).
Context
    The page start, a blank line, a line ending in ``. ! ? : …`` or another
    heading comes before it, and the next line does not start with a
    lower-case letter (so the first line of a wrapped sentence, ``The
    Presidential Candidate and Chancellor`` / ``must ...``, is not taken).
Kinds
    ``numbered``: ``3.2 Voting``, ``1. Setup`` (a number path, then at most 8
    words starting with a capital or an uncased letter); ``caps``: every cased
    letter upper case, at least 3 of them (``LEGISLATIVE SESSION``); ``title``:
    first letter upper case, no comma, and every word of 4+ letters
    capitalised (``Hit Points``, ``Designation of the Head Digger``);
    ``isolated``: at most 6 words with a blank line (or page edge) on both sides
    and a capital or uncased first letter (sentence-case headings of Russian,
    caseless Persian).

Nesting comes from the heading *style*: the kind (numbered headings by depth;
``title`` and ``isolated`` count as one mixed-case kind, since one document
writes its game names either way) plus whether the heading has no body before
the next heading (``Accordion`` directly above ``Setup``). A heading whose
style is already on the stack replaces that level and closes deeper ones; a new
style opens a level below the current one (at most :data:`MAX_DEPTH` levels).
The stack carries over pages, so a page without headings inherits the last
path. This is the "style stack" of document converters; it is a heuristic and
can mislabel, which is why outlines and markup take precedence. Measured on the
AisleRiot manual: all 90 game names head their page's paths in each of en, de,
fr, es and ru.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rulegauge.core.text import letters_ratio
from rulegauge.corpus.outline import Boundary

MAX_DEPTH = 4
_NUMBERED = re.compile(r"^(\d{1,3}(?:\.\d{1,3})*)\.?\s+(\S.*)$")
_BAD_END = tuple(".,;:!?")
_GOOD_PREV_END = tuple(".!?:…")
_STYLE_CLASS = {"title": "mixed", "isolated": "mixed"}
_INNER_SENTENCE_END = re.compile(r"[.!?…]\s+\S")


def _first_letter(s: str) -> str | None:
    return next((ch for ch in s if ch.isalpha()), None)


def _capital_or_uncased(ch: str | None) -> bool:
    return ch is not None and (ch.isupper() or ch.lower() == ch.upper())


def heading_kind(line: str, *, blank_before: bool, blank_after: bool) -> str | None:
    """The kind of ``line`` as a heading (``numbered-N``, ``caps``, ``title``,
    ``isolated``), or ``None``; the context test is the caller's."""
    s = line.strip()
    words = s.split()
    letters, nonspace = letters_ratio(s)
    if not (3 <= len(s) <= 80 and len(words) <= 12 and letters >= 3
            and letters >= 0.5 * nonspace and not s.endswith(_BAD_END)):
        return None
    m = _NUMBERED.match(s)
    if _INNER_SENTENCE_END.search(m.group(2) if m else s):
        return None
    if m:
        rest = m.group(2)
        if len(rest.split()) <= 8 and _capital_or_uncased(_first_letter(rest)):
            return f"numbered-{m.group(1).count('.') + 1}"
        return None
    cased = [ch for ch in s if ch.isalpha() and ch.lower() != ch.upper()]
    if len(cased) >= 3 and all(ch.isupper() for ch in cased):
        return "caps"
    first = _first_letter(s)
    alpha_words = [re.sub(r"[^\w]", "", w) for w in words]
    if first is not None and first.isupper() and "," not in s and all(
        w[:1].isupper() or len(w) < 4 or not w[:1].isalpha() for w in alpha_words
    ):
        return "title"
    if blank_before and blank_after and len(words) <= 6 and _capital_or_uncased(first):
        return "isolated"
    return None


def find_headings(text: str) -> list[tuple[int, str, str]]:
    """(offset, kind, title) of each heading line of one page, in page order."""
    lines = text.split("\n")
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    out: list[tuple[int, str, str]] = []
    prev_heading = False
    for i, line in enumerate(lines):
        if not line.strip():
            prev_heading = False
            continue
        before = lines[i - 1] if i > 0 else ""
        after = lines[i + 1] if i + 1 < len(lines) else ""
        next_first = _first_letter(after[:1])
        context = ((not before.strip() or before.rstrip().endswith(_GOOD_PREV_END)
                    or prev_heading) and not (next_first is not None and next_first.islower()))
        kind = heading_kind(line, blank_before=not before.strip(), blank_after=not after.strip()) if context else None
        if kind is not None:
            out.append((offsets[i], kind, line.strip()))
        prev_heading = kind is not None
    return out


def detect_headings(texts: Sequence[str]) -> list[list[Boundary]]:
    """Boundaries of each page of one document (first at 0: the inherited path).

    See the module docstring for the rules; pages without any detected heading
    get ``[Boundary(0, path in force)]``.
    """
    found = [find_headings(t) for t in texts]
    stack: list[tuple[tuple[str, bool], str]] = []
    out: list[list[Boundary]] = []
    for text, heads in zip(texts, found, strict=True):
        bounds = [Boundary(0, tuple(t for _, t in stack))]
        for j, (offset, kind, title) in enumerate(heads):
            nxt = heads[j + 1][0] if j + 1 < len(heads) else None
            body = text[offset + len(title): nxt if nxt is not None else len(text)]
            style = (_STYLE_CLASS.get(kind, kind), nxt is not None and not body.strip())
            keys = [k for k, _ in stack]
            if style in keys:
                stack = stack[: keys.index(style)]
            elif len(stack) >= MAX_DEPTH:
                stack = stack[:-1]
            stack.append((style, title))
            path = tuple(t for _, t in stack)
            if offset == 0:
                bounds[0] = Boundary(0, path)
            else:
                bounds.append(Boundary(offset, path))
        out.append(bounds)
    return out
