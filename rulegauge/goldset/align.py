"""Page alignment of two editions of one document: which new pages hold each old page's text.

Each page becomes a set of word *shingles* (w-shingles, Broder 1997: every run of
``SHINGLE`` = 5 consecutive tokens of :func:`rulegauge.core.text.tokenize`, within the
page; a page of fewer tokens is one shingle of all of them), its outline headings
prepended to its text. For old page ``i`` and new page ``j`` the *containment*
``c(i, j) = |S_i ∩ T_j| / |S_i|`` is the share of the old page's shingles found on the
new page (Broder's resemblance and containment, "On the resemblance and containment of
documents", SEQUENCES 1997). An old page's *parts* are the new pages holding at least
``PART`` (0.1) of it; its *coverage* the share of its shingles found on any new page.

This mapping is order-free, so inserted, removed, split (several parts), merged (one
new page part of several old pages) and reordered pages all fall out of it. On top, a
monotone alignment gives the edition's in-order backbone: the heaviest chain of (old
page, main part) pairs increasing on both sides (a weighted longest increasing
subsequence, dynamic programming, ties to the lower new page). An old page off the
backbone is reported ``moved``; the backbone never overrides containment.

Kinds of an old page: ``kept`` (one part holds at least ``WHOLE`` = 0.8 of it, in
order), ``moved`` (the same, off the backbone), ``split`` (no part holds ``WHOLE`` but
the parts together do), ``duplicated`` (two or more new pages each hold ``WHOLE`` of it:
ambiguous), ``changed`` (coverage below ``WHOLE``: rewritten), ``removed`` (coverage
below ``PART``). New pages that hold no old page's part are ``inserted``. Everything
is exact set arithmetic on the texts, so the alignment is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from rulegauge.core.text import tokenize

METHOD = "shingle-containment"
METHOD_VERSION = 1
SHINGLE = 5
PART = Fraction(1, 10)
WHOLE = Fraction(4, 5)

Shingles = frozenset[tuple[str, ...]]


def shingles(text: str, size: int = SHINGLE) -> Shingles:
    """Every run of ``size`` consecutive tokens of ``text``; fewer tokens: one shingle of
    all of them; no token: the empty set."""
    toks = tokenize(text)
    if not toks:
        return frozenset()
    if len(toks) < size:
        return frozenset({tuple(toks)})
    return frozenset(tuple(toks[i:i + size]) for i in range(len(toks) - size + 1))


def share(part: Shingles, whole: Shingles) -> Fraction:
    """``|part ∩ whole| / |part|``: how much of ``part`` ``whole`` holds (0 for an empty part)."""
    return Fraction(len(part & whole), len(part)) if part else Fraction(0)


@dataclass(frozen=True)
class PageAlignment:
    """Where one old page's text went: its parts (new page, containment), best first."""

    old_page: int
    kind: str
    parts: tuple[tuple[int, Fraction], ...]
    coverage: Fraction

    @property
    def whole(self) -> tuple[int, ...]:
        """New pages each holding at least ``WHOLE`` of this page."""
        return tuple(p for p, c in self.parts if c >= WHOLE)


@dataclass(frozen=True)
class Alignment:
    old_pages: int
    new_pages: int
    pages: tuple[PageAlignment, ...]
    inserted: tuple[int, ...]
    backbone: tuple[tuple[int, int], ...]
    """The monotone chain: (old page, new page) pairs, increasing on both sides."""

    def of(self, old_page: int) -> PageAlignment:
        return self.pages[old_page - 1]


def _backbone(main: Sequence[tuple[int, int, Fraction]]) -> tuple[tuple[int, int], ...]:
    """Heaviest chain of (old, new, weight) increasing in old and non-decreasing in new
    (several old pages may merge into one new page); O(n^2), pages are few."""
    best: list[tuple[Fraction, tuple[tuple[int, int], ...]]] = []
    for k, (o, n, w) in enumerate(main):
        pick: tuple[Fraction, tuple[tuple[int, int], ...]] = (w, ((o, n),))
        for m in range(k):
            po, pn, _ = main[m]
            if po < o and pn <= n:
                cand = (best[m][0] + w, (*best[m][1], (o, n)))
                if cand[0] > pick[0]:
                    pick = cand
        best.append(pick)
    return max(best, key=lambda b: b[0])[1] if best else ()


def align(old: Sequence[str], new: Sequence[str]) -> Alignment:
    """Align the old edition's page texts with the new one's (module docstring)."""
    olds, news = [shingles(t) for t in old], [shingles(t) for t in new]
    every_new: Shingles = frozenset().union(*news) if news else frozenset()
    rough: list[tuple[tuple[tuple[int, Fraction], ...], Fraction]] = []
    main: list[tuple[int, int, Fraction]] = []
    for i, s in enumerate(olds, start=1):
        ranked = sorted(((j, share(s, t)) for j, t in enumerate(news, start=1)),
                        key=lambda x: (-x[1], x[0]))
        parts = tuple((j, c) for j, c in ranked if c >= PART)
        rough.append((parts, share(s, every_new)))
        if parts:
            main.append((i, parts[0][0], parts[0][1]))
    chain = _backbone(main)
    on_chain = set(chain)
    out = []
    for i, (found, coverage) in enumerate(rough, start=1):
        whole = [j for j, c in found if c >= WHOLE]
        if len(whole) > 1:
            kind = "duplicated"
        elif whole:
            kind = "kept" if (i, whole[0]) in on_chain else "moved"
        elif coverage < PART:
            kind = "removed"
        elif coverage >= WHOLE and len(found) > 1:
            kind = "split"
        else:
            kind = "changed"
        out.append(PageAlignment(i, kind, found, coverage))
    used = {j for p in out for j, _ in p.parts}
    return Alignment(len(old), len(new), tuple(out),
                     tuple(j for j in range(1, len(new) + 1) if j not in used), chain)
