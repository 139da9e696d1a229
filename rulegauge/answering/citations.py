"""Citation markers: parse ``[n]``, ``[n, m]``, ``[n-m]`` and map them to passages read.

Grammar
-------
A marker is ``[`` items ``]`` where items are comma-separated numbers or ranges
``a-b`` (hyphen, en dash or em dash; spaces allowed), e.g. ``[1]``, ``[1, 3]``,
``[2-4]``, ``[2–4, 7]``. A range expands to every number from ``min(a, b)`` to
``max(a, b)``; ranges wider than :data:`MAX_RANGE` numbers expand to their two
endpoints only (a typo like ``[1-1000]`` must not fabricate a thousand
citations). Adjacent markers (``[3][2]``) are separate markers.

Not markers (Markdown): a link text ``[1](url)``, a reference link ``[text][1]``
(the ``[1]`` after a ``]`` that does not close a marker), an image ``![1](...)``
and a reference definition ``[1]: url`` at the start of a line.

Mapping: number ``n`` refers to the passage read at position ``n`` (1-based,
``rulegauge.answering.read.ReadRow.read_at``). A number with no such passage is
*dangling* (this includes ``[0]``). A citation is *relevant* when its page
``doc#page`` is one of the question's relevant pages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rulegauge.corpus.records import page_key

MAX_RANGE = 50

_NUM = r"\d{1,4}"
_ITEM = rf"{_NUM}(?:\s*[-–—]\s*{_NUM})?"
_MARKER = re.compile(rf"(?<!!)\[\s*({_ITEM}(?:\s*,\s*{_ITEM})*)\s*\](?!\()")
_ITEM_RE = re.compile(rf"({_NUM})(?:\s*[-–—]\s*({_NUM}))?")
_LINK_DEF = re.compile(r":")


@dataclass(frozen=True)
class Marker:
    """One marker occurrence: its text, character span in the answer and the
    numbers it refers to (ranges expanded, duplicates removed, ascending)."""

    text: str
    start: int
    end: int
    numbers: tuple[int, ...]


@dataclass(frozen=True)
class Citation:
    """One number of one marker mapped to a passage read (``None`` fields: dangling)."""

    marker: str
    position: int
    n: int
    chunk_id: str | None
    doc_id: str | None
    page: int | None
    dangling: bool
    relevant: bool

    @property
    def page_id(self) -> str | None:
        if self.doc_id is None or self.page is None:
            return None
        return page_key(self.doc_id, self.page)


@dataclass(frozen=True)
class CitedPassage:
    """The minimum :func:`resolve` needs of a passage read."""

    read_at: int
    chunk_id: str
    doc_id: str
    page: int


def _expand(item: re.Match[str]) -> list[int]:
    a = int(item.group(1))
    if item.group(2) is None:
        return [a]
    b = int(item.group(2))
    lo, hi = min(a, b), max(a, b)
    return list(range(lo, hi + 1)) if hi - lo + 1 <= MAX_RANGE else [lo, hi]


def parse_markers(text: str) -> tuple[Marker, ...]:
    """Every citation marker in ``text`` in order of appearance (see module docstring).

    >>> [m.numbers for m in parse_markers("A [1]. B [2, 4-5]. See [x](http://y) [3](z).")]
    [(1,), (2, 4, 5)]
    """
    out: list[Marker] = []
    for m in _MARKER.finditer(text):
        line_start = m.start() == 0 or text[m.start() - 1] == "\n"
        if line_start and _LINK_DEF.match(text, m.end()):
            continue
        after_bracket = m.start() > 0 and text[m.start() - 1] == "]"
        if after_bracket and not (out and out[-1].end == m.start()):
            continue  # [text][1]: a reference link, unless the "]" closes a marker
        numbers = sorted({n for it in _ITEM_RE.finditer(m.group(1)) for n in _expand(it)})
        out.append(Marker(m.group(0), m.start(), m.end(), tuple(numbers)))
    return tuple(out)


def resolve(markers: Iterable[Marker], passages: Sequence[CitedPassage],
            relevant_pages: Iterable[str]) -> tuple[Citation, ...]:
    """Map every number of every marker to the passage read at that position."""
    by_n = {p.read_at: p for p in passages}
    relevant = frozenset(relevant_pages)
    out = []
    for mk in markers:
        for n in mk.numbers:
            p = by_n.get(n)
            if p is None:
                out.append(Citation(mk.text, mk.start, n, None, None, None, True, False))
            else:
                out.append(Citation(mk.text, mk.start, n, p.chunk_id, p.doc_id, p.page, False,
                                    page_key(p.doc_id, p.page) in relevant))
    return tuple(out)


@dataclass(frozen=True)
class CitationStats:
    """Per-answer citation figures; conventions in :func:`citation_stats`."""

    cited_pages: frozenset[str]
    precision: float
    recall: float
    dangling: int
    resolved: int


def citation_stats(citations: Sequence[Citation],
                   requirements: Sequence[Sequence[str]]) -> CitationStats:
    """Citation precision and recall of one answer.

    * precision = relevant distinct cited pages / distinct cited pages; 0.0 when
      nothing resolvable is cited.
    * recall = requirements with at least one cited page / requirements; 0.0 for a
      question with no requirement (unanswerable; such questions are excluded
      from recall means by the metric's scope).
    * dangling = distinct numbers cited that name no passage read.
    """
    pages = frozenset(c.page_id for c in citations if c.page_id is not None)
    relevant = frozenset(p for req in requirements for p in req)
    precision = len(pages & relevant) / len(pages) if pages else 0.0
    recall = (sum(1 for req in requirements if pages.intersection(req)) / len(requirements)
              if requirements else 0.0)
    dangling = len({c.n for c in citations if c.dangling})
    resolved = sum(1 for c in citations if not c.dangling)
    return CitationStats(pages, precision, recall, dangling, resolved)
