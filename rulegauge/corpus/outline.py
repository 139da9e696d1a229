"""Heading paths from a PDF outline (bookmarks) or document markup, per page.

A PDF outline is a tree of bookmarks, each with a title and a target page. Its
nesting gives heading paths (``Races > Dwarf > Dwarf Traits``). This module turns
it into :class:`OutlineEntry` records and then, per physical page, into the value
stored in :attr:`rulegauge.corpus.records.Page.outline_headings`:

``(top, *starts)``
    ``top`` is the heading path in force at the top of the page (that of the
    last entry on an earlier page; ``()`` before the first entry) and ``starts``
    are the paths of the entries whose target is this page, in outline order.
    A document without an outline or markup headings has ``()`` on every page.

The Markdown and JSONL loaders fill the same field from ``#`` lines and the
``"heading"`` key (:func:`page_headings` over their own entries), so the chunker
reads headings one way whatever the source.

Inside a page the chunker needs positions: :func:`sections` locates each title
in the page text (:func:`locate`: case-insensitive, whitespace- and
dash-tolerant, whole words, preferring a line start after the previous hit). An
entry whose title is not found is taken to start where the entry before it
starts (the page top for the first one): PDF destinations point at or near the
heading, and the later, usually deeper, path is the more specific label. On the
SRD 5.1, 1,842 of 1,958 bookmark titles are located (the rest are misspelt in
the outline, e.g. "Lighning Bolt").

Reference: ISO 32000-1:2008, 12.3.3 "Document outline" and 12.4.2 "Page labels";
pypdf ``PdfReader.outline`` / ``get_destination_page_number``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rulegauge.core.text import normalise
from rulegauge.corpus.title_match import DASHES, QUOTES, PageView

Path_ = tuple[str, ...]


@dataclass(frozen=True)
class OutlineEntry:
    """One bookmark (or markup heading): ``level`` 0 is the top of the tree and
    ``path`` ends with ``title``; ``page`` is the 1-based physical target page."""

    title: str
    path: Path_
    page: int
    level: int


@dataclass(frozen=True)
class Boundary:
    """A heading path taking effect at character ``start`` of a page's text."""

    start: int
    path: Path_
    located: bool = True


def clean_title(title: str) -> str:
    """Normalised one-line title (outline titles may carry line breaks)."""
    return " ".join(normalise(str(title)).split())


def read_outline(reader: Any) -> list[OutlineEntry]:
    """Flatten a pypdf ``PdfReader``'s outline into entries in outline order.

    Entries whose destination does not resolve to a page of the document, and
    entries with an empty title, are skipped (their children keep the parent's
    title in their paths when it is non-empty).
    """
    n_pages = len(reader.pages)
    out: list[OutlineEntry] = []

    def walk(items: Sequence[Any], parents: Path_) -> None:
        last: Path_ = parents
        for item in items:
            if isinstance(item, list):
                walk(item, last)
                continue
            title = clean_title(getattr(item, "title", "") or "")
            try:
                index = reader.get_destination_page_number(item)
            except Exception:  # pypdf raises several types on broken destinations
                index = None
            path = (*parents, title) if title else parents
            last = path
            if title and index is not None and 0 <= index < n_pages:
                out.append(OutlineEntry(title, path, index + 1, len(path) - 1))

    walk(reader.outline, ())
    return out


def page_headings(entries: Sequence[OutlineEntry], n_pages: int) -> list[tuple[Path_, ...]]:
    """``Page.outline_headings`` for pages 1..n_pages (index i = page i+1).

    Entries are taken in (page, outline order); with no entries every page gets
    ``()`` (no outline), otherwise ``(top, *starts)`` as described in the module
    docstring. Entries beyond ``n_pages`` are ignored.
    """
    if not entries:
        return [() for _ in range(n_pages)]
    by_page: dict[int, list[Path_]] = {}
    for e in sorted(enumerate(entries), key=lambda ie: (ie[1].page, ie[0])):
        by_page.setdefault(e[1].page, []).append(e[1].path)
    out: list[tuple[Path_, ...]] = []
    current: Path_ = ()
    for page in range(1, n_pages + 1):
        starts = by_page.get(page, [])
        out.append((current, *starts))
        if starts:
            current = starts[-1]
    return out


def _variants(title: str) -> list[str]:
    """The title, then without what precedes its first colon (``Table: The Bard``
    -> ``The Bard``, ``Bag of Beans: Effects`` -> ``Effects``)."""
    out = [title]
    _, sep, rest = title.partition(":")
    if sep and rest.strip():
        out.append(rest.strip())
    return out


_SEGMENT_BREAK = re.compile(f"[{re.escape(DASHES + QUOTES)}]")


def _may_occur(lowered: str, title: str) -> bool:
    """False when ``title`` cannot occur in an ASCII text (``lowered``: the text,
    lower-cased): some ASCII run of a title word between dashes and apostrophes is
    missing from it. For ASCII text, case-insensitive matching of an ASCII character
    is equality of lower cases, so this never rules out a title the pattern would find;
    it spares compiling a pattern for a title that is not on the page."""
    for word in title.split():
        for seg in _SEGMENT_BREAK.split(word):
            if seg and seg.isascii() and seg.lower() not in lowered:
                return False
    return True


def _line_starts(text: str) -> list[tuple[int, int]]:
    """``(L, e)`` per line: its start ``L`` and the end ``e`` of its leading
    horizontal whitespace (where an ``at_line`` hit must begin)."""
    return [(m.start(), m.end()) for m in _LINE_START.finditer(text)]


_LINE_START = re.compile(r"(?m)^[^\S\n]*")


def locate(text: str, titles: Sequence[str]) -> list[int | None]:
    """Character offset of each title in ``text`` (``None`` when not found).

    Matching is case-insensitive, whole-word, tolerant of whitespace runs and
    dash/apostrophe variants. Each title is tried as given, then without the
    part before its first colon. Search order, first hit wins: a hit at
    a line start after the previous title's hit, a line-start hit anywhere, any
    hit after the previous title's hit, any hit anywhere. Outline order is
    usually, not always, reading order, hence the fallbacks.

    Implementation: every position where a title variant matches is listed once
    (:meth:`rulegauge.corpus.title_match.PageView.match_starts`: ``str.find`` on a
    canonical copy of an ASCII page, else one regular expression per variant); a
    "line-start hit from ``frm``" is the first line starting at or after ``frm``
    whose first non-blank character is such a position, exactly what a multiline
    ``^``, optional blanks, then the title, searched from ``frm``, finds (the title
    begins with a non-space character, so it can only start there).
    """
    out: list[int | None] = []
    cursor = 0
    lines: list[tuple[int, int]] | None = None
    lowered = text.lower() if text.isascii() else None
    view = PageView(text)
    for title in titles:
        hit: int | None = None
        for variant in _variants(title) if title.split() else []:
            if lowered is not None and not _may_occur(lowered, variant):
                continue
            starts = view.match_starts(variant)
            if not starts:
                continue
            if lines is None:
                lines = _line_starts(text)
            found = set(starts)
            at_line = [e for _, e in lines if e in found]
            at_line_from = next((e for ln, e in lines if ln >= cursor and e in found), None)
            for cand in (at_line_from, at_line[0] if at_line else None,
                         next((p for p in starts if p >= cursor), None), starts[0]):
                if cand is not None:
                    hit = cand
                    break
            if hit is not None:
                break
        out.append(hit)
        if hit is not None:
            cursor = max(cursor, hit + 1)
    return out


def sections(text: str, headings: Sequence[Path_]) -> list[Boundary]:
    """Boundaries of a page from its ``outline_headings`` ``(top, *starts)``.

    The first boundary is at 0 with the ``top`` path; each start is located by
    its last title (:func:`locate`); an unlocated start takes the offset of the
    entry before it in outline order (0 for the first). Boundaries are ordered
    by offset; at equal offsets the later entry in outline order wins. An empty
    ``headings`` gives ``[Boundary(0, ())]``.
    """
    if not headings:
        return [Boundary(0, ())]
    top, starts = headings[0], headings[1:]
    hits = locate(text, [p[-1] if p else "" for p in starts])
    placed: list[tuple[int, int, Path_, bool]] = [(0, 0, top, True)]
    prev = 0
    for i, (path, hit) in enumerate(zip(starts, hits, strict=True), start=1):
        pos = hit if hit is not None else prev
        placed.append((pos, i, path, hit is not None))
        prev = pos
    placed.sort(key=lambda x: (x[0], x[1]))
    bounds: list[Boundary] = []
    for pos, _, path, found in placed:
        if bounds and bounds[-1].start == pos:
            bounds[-1] = Boundary(pos, path, found)
        else:
            bounds.append(Boundary(pos, path, found))
    return bounds


def path_at(bounds: Sequence[Boundary], offset: int) -> Path_:
    """Heading path in force at ``offset`` (the last boundary starting at or before it)."""
    current: Path_ = bounds[0].path if bounds else ()
    for b in bounds:
        if b.start <= offset:
            current = b.path
        else:
            break
    return current
