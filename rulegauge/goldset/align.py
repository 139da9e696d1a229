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

When no page shares a shingle (a translated edition), :mod:`rulegauge.goldset.editions`
asks a *page aligner* of :data:`ALIGNERS` by name (plug-in group ``rulegauge.aligners``;
rulegauge's own, ``embedding``, is :mod:`rulegauge.embedding.page_align`, a product): it
returns the same :class:`Alignment` (parts with their shares, kinds by the same rules,
:func:`assemble`) and a :class:`Locate` for the answering sentences.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from rulegauge.core import plugins
from rulegauge.core.registry import Registry, kind_check
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


def assemble(found: Sequence[tuple[tuple[tuple[int, Fraction], ...], Fraction]], new_pages: int) -> Alignment:
    """The alignment of old pages given, per old page in order, its parts (new page, share;
    best first, shares >= ``PART``) and its coverage: the backbone and each page's kind by
    the module docstring's rules (shared by every aligner)."""
    main = [(i, parts[0][0], parts[0][1]) for i, (parts, _) in enumerate(found, start=1) if parts]
    on_chain = set(chain := _backbone(main))
    out = []
    for i, (parts, coverage) in enumerate(found, start=1):
        whole = [j for j, c in parts if c >= WHOLE]
        if len(whole) > 1:
            kind = "duplicated"
        elif whole:
            kind = "kept" if (i, whole[0]) in on_chain else "moved"
        elif coverage < PART:
            kind = "removed"
        elif coverage >= WHOLE and len(parts) > 1:
            kind = "split"
        else:
            kind = "changed"
        out.append(PageAlignment(i, kind, tuple(parts), coverage))
    used = {j for p in out for j, _ in p.parts}
    return Alignment(len(found), new_pages, tuple(out),
                     tuple(j for j in range(1, new_pages + 1) if j not in used), chain)


def align(old: Sequence[str], new: Sequence[str]) -> Alignment:
    """Align the old edition's page texts with the new one's (module docstring)."""
    olds, news = [shingles(t) for t in old], [shingles(t) for t in new]
    every_new: Shingles = frozenset().union(*news) if news else frozenset()
    found = []
    for s in olds:
        ranked = sorted(((j, share(s, t)) for j, t in enumerate(news, start=1)),
                        key=lambda x: (-x[1], x[0]))
        found.append((tuple((j, c) for j, c in ranked if c >= PART), share(s, every_new)))
    return assemble(found, len(new))


def shares_no_text(alignment: Alignment) -> bool:
    """True when no old page holds even ``PART`` of its shingles anywhere in the new
    edition (every page ``removed``): another language, or rewritten whole."""
    return bool(alignment.pages) and all(p.kind == "removed" for p in alignment.pages)


class Locate(Protocol):
    """Where a sentence of the old edition is in the new one: the share of it found on new
    page ``page`` (``WHOLE`` or more: it is there), as :class:`rulegauge.goldset.relabel.Locator`."""

    def share(self, sentence: str, page: int) -> Fraction: ...


@dataclass(frozen=True)
class Realigned:
    """What a page aligner returns: the alignment, the locator of answering sentences and
    what the provenance records of the method (name, version, thresholds, model)."""

    alignment: Alignment
    locate: Locate
    method: Mapping[str, Any] = field(default_factory=dict)


class PageAligner(Protocol):
    """A page aligner reached by name: ``realign(old pages, new pages)``."""

    name: str
    description: str

    def realign(self, old: Sequence[str], new: Sequence[str]) -> Realigned: ...


ALIGNER_GROUP = "rulegauge.aligners"
ALIGNERS: Registry[PageAligner] = Registry("page aligner", group=ALIGNER_GROUP, door=plugins.DOOR,
                                           accepts=kind_check("a page aligner", methods=("realign",)))
"""Page aligners for editions that share no text, by name (``embedding``: multilingual
sentence embeddings, :mod:`rulegauge.embedding.page_align`)."""
