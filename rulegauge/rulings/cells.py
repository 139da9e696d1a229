"""Parsers for the values a ruling page prints: documents, pages, scores, arms, slots.

Each parser reads by shape first (numbers, ``#n``, trailing ``(... N)``) and by
English wording only where there is no shape to read, returning None when the
cell does not fit. Production arm names map to rulegauge's arm names through
:data:`ARM_ALIASES` (vector -> dense, full-text -> bm25, the doc-priority boost
arm -> boost); floors through :data:`FLOOR_ALIASES` to the names of
``rulegauge.answering.read.FLOORS``.
"""

from __future__ import annotations

import re

from rulegauge.core.registry import Registry
from rulegauge.rulings.records import DocCell

ARM_ALIASES: Registry[str] = Registry("production arm")
for _raw, _arm in (("vector", "dense"), ("dense", "dense"), ("full-text", "bm25"),
                   ("fulltext", "bm25"), ("bm25", "bm25"), ("doc-priority boost", "boost"),
                   ("boost", "boost")):
    ARM_ALIASES.add(_raw, _arm)

FLOOR_ALIASES: Registry[str] = Registry("production floor")
for _raw, _floor in (("base rulebook", "base_rulebook"), ("surviving errata corrections", "errata"),
                     ("errata", "errata"), ("one slot per book on a multi-book read", "per_book"),
                     ("one slot per book", "per_book")):
    FLOOR_ALIASES.add(_raw, _floor)

_DOC_TAIL = re.compile(r"^(?P<title>.*?)\s*\((?P<label>[^()]*?)\s*(?P<id>\d+)\)\s*$")
_KIND = re.compile(r"^(?P<kind>[A-Z][A-Z-]+)\s+(?P<rest>.+)$")
_INT = re.compile(r"^\D{0,8}?(\d+)$")
_RANK = re.compile(r"^#\s*(\d+)$")
_MARK = re.compile(r"^\[\s*(\d+)\s*\]$")
_CEILING = re.compile(r"(?P<arms>\d+)-arm ceiling (?P<ceiling>\d+\.\d+)")


def doc_cell(text: str) -> DocCell:
    """``RULEBOOK Game — Rulebook (corpus doc 1071)`` -> id ``1071``, kind ``rulebook``,
    title ``RULEBOOK Game — Rulebook``. A cell without the trailing number has no id."""
    t = text.strip()
    m = _DOC_TAIL.match(t)
    title, doc_id = (m["title"], m["id"]) if m else (t, None)
    k = _KIND.match(title)
    return DocCell(doc_id, k["kind"].lower() if k else None, title or None)


def integer(text: str) -> int | None:
    """The trailing integer of a short cell: ``p.5`` -> 5, ``S. 12`` -> 12, ``300`` -> 300."""
    m = _INT.match(text.strip())
    return int(m.group(1)) if m else None


def rank(text: str) -> int | None:
    """``#3`` -> 3."""
    m = _RANK.match(text.strip())
    return int(m.group(1)) if m else None


def marker(text: str) -> int | None:
    """``[2]`` -> 2."""
    m = _MARK.match(text.strip())
    return int(m.group(1)) if m else None


def score_cell(text: str) -> tuple[float, str | None, int | None, float | None] | None:
    """``0.048916 (healthy, below this ruling's 3-arm ceiling 0.04918 (...))`` ->
    (score, band ``healthy``, ceiling arms 3, ceiling 0.04918); None if no leading score."""
    t = text.strip()
    m = re.match(r"^(\d+(?:\.\d+)?(?:[eE]-?\d+)?)(.*)$", t, re.S)
    if not m:
        return None
    note = m.group(2).strip()
    if note.startswith("(") and note.endswith(")"):
        note = note[1:-1]
    band = (re.split(r"[,;(]", note, maxsplit=1)[0].strip() or None) if note else None
    c = _CEILING.search(note)
    return (float(m.group(1)), band, int(c["arms"]) if c else None,
            float(c["ceiling"]) if c else None)


def _phrase(text: str) -> str:
    t = " ".join(text.lower().split())
    t = re.sub(r"^the ", "", t)
    return re.sub(r" arm$", "", t)


def arms(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``vector + full-text + the doc-priority boost arm`` -> ((dense, bm25, boost), ());
    the second tuple lists the phrases that are not known arm names (kept as written)."""
    names, unknown = [], []
    for part in text.split("+"):
        p = _phrase(part)
        if not p:
            continue
        if p in ARM_ALIASES:
            names.append(ARM_ALIASES.get(p))
        else:
            names.append(p)
            unknown.append(p)
    return tuple(names), tuple(unknown)


def slot(text: str) -> str:
    """``the re-ranker chose it`` -> ``reranker``; a floor named in the text ->
    ``floor:<name>``; anything else is returned as written."""
    t = " ".join(text.lower().split())
    if "re-ranker" in t or "reranker" in t:
        return "reranker"
    if "floor" in t:
        for raw in sorted(FLOOR_ALIASES.names(), key=len, reverse=True):
            if raw in t:
                return f"floor:{FLOOR_ALIASES.get(raw)}"
    return text.strip()


def floors(text: str) -> dict[str, bool] | None:
    """``the base rulebook — armed · surviving errata corrections — not armed · ...``
    -> {base_rulebook: True, errata: False, ...}; unknown floor phrases keep their
    wording as the key. None when no ``name — armed|not armed`` item is found."""
    first = re.split(r"\.\s", text, maxsplit=1)[0]
    out: dict[str, bool] = {}
    for item in first.split(" · "):
        m = re.match(r"^(?P<name>.+?)\s+—\s+(?P<state>not armed|armed)\.?$", item.strip())
        if m:
            name = _phrase(m["name"])
            out[FLOOR_ALIASES.get(name) if name in FLOOR_ALIASES else name] = m["state"] == "armed"
    return out or None


def ms_pairs(text: str) -> dict[str, float]:
    """``search 187 ms · ask 5691 ms · total 5880 ms (...)`` -> {search: 187, ...}."""
    out: dict[str, float] = {}
    for m in re.finditer(r"([A-Za-z][A-Za-z -]*?)\s+(\d+(?:\.\d+)?)\s*ms\b", text):
        out.setdefault(" ".join(m.group(1).lower().split()), float(m.group(2)))
    return out


def numbers(text: str) -> list[float]:
    """Every number in ``text`` in order (``4.165``, ``840``)."""
    return [float(x) for x in re.findall(r"\d+(?:\.\d+)?", text)]
