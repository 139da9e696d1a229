"""Reading an ``http`` arm's reply: the ranked list, each hit's id, score and per-arm ranks.

* The body must be JSON (a reply that is HTML or text is an error quoting its start);
  ``results`` is a dotted path to the ranked list (``"hits"``, ``"data.results"``;
  a number picks a list element). A missing path names the keys that are there.
* Each hit is an object: ``chunk`` names its chunk-id field, or ``doc`` and ``page``
  its document and page fields (the page's first chunk stands for it, as in the
  ``external`` arm); ``score`` (optional) a number; ``arm_ranks`` (optional) an object
  of arm name -> rank (a positive integer, or null / absent: not ranked by that arm).
  Field names are dotted paths inside the hit.
* The list order is the ranking (a service's order is its answer); an id that comes
  again later in the list is left out. An id that matches no chunk of the corpus is
  matched to None; the arm's ``on_unmatched`` rule says what becomes of it
  (:mod:`rulegauge.arms.foreign`: by default it keeps its rank as a foreign hit).

Two steps: :func:`extract` reads what a replay needs out of a reply (each hit's id,
score and per-arm ranks: :func:`kept_hits`, the journal's ``hits``, never the body) with
every secret the request carried removed from the ids; :func:`match` matches those ids
to the corpus. :func:`read_hits` is both.

Reference: the ``external`` arm's matching (:mod:`rulegauge.arms.external`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rulegauge.arms.foreign import Listed, apply_rule
from rulegauge.core.httpcall import parse_json
from rulegauge.core.redact import Secrets
from rulegauge.corpus.records import Corpus, page_key


class ReplyError(Exception):
    """A reply that is not the ranked list the arm's settings describe."""


@dataclass(frozen=True)
class ReplyShape:
    """Where the ranked list and each hit's fields are (the arm's settings)."""

    results: str
    chunk: str | None
    doc: str | None
    page: str | None
    score: str | None
    arm_ranks: str | None


@dataclass(frozen=True)
class ReplyHit:
    """One hit as the reply gives it, and the chunk it matched (None: unmatched)."""

    reply_id: str
    chunk_id: str | None
    score: float | None
    arm_ranks: Mapping[str, int | None]


def parse_body(body: bytes, content_type: str, secrets: Secrets | None = None) -> Any:
    """The JSON value of a reply body; :class:`ReplyError` quoting its start (``secrets``
    and credential patterns removed before the cut) when it is not JSON."""
    try:
        return parse_json(body)
    except ValueError as exc:
        start = (secrets or Secrets()).excerpt(body, 120)
        kind = (content_type or "no content type").split(";")[0]
        raise ReplyError(f"reply is not JSON ({kind}; {exc}): {start!r}") from None


def dig(value: Any, path: str, what: str) -> Any:
    """The value at a dotted ``path`` (module docstring); :class:`ReplyError` if missing."""
    at = value
    for i, part in enumerate(path.split(".")):
        if isinstance(at, Mapping) and part in at:
            at = at[part]
        elif isinstance(at, list) and part.isdigit() and int(part) < len(at):
            at = at[int(part)]
        else:
            so_far = ".".join(path.split(".")[:i]) or "the reply"
            there = (", ".join(sorted(map(str, at))[:20]) if isinstance(at, Mapping)
                     else type(at).__name__)
            raise ReplyError(f"{what} {path!r} not found: {so_far} has no {part!r} "
                             f"(it has: {there or 'nothing'})")
    return at


def first_chunks(corpus: Corpus) -> dict[str, str]:
    """Page id (``doc#page``) -> the page's first chunk (lowest chunk id)."""
    out: dict[str, str] = {}
    for c in corpus.chunks:  # chunks are in id order: the first seen is the lowest id
        out.setdefault(page_key(c.doc_id, c.page), c.chunk_id)
    return out


def _rank(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ReplyError(f"{where}: a rank must be a positive integer or null, got {value!r}")
    return value


def fields_of(shape: ReplyShape) -> dict[str, str]:
    """The reply fields a journal's ``hits`` were read with (a record read with other
    fields is not reused)."""
    return {k: v for k, v in (("results", shape.results), ("chunk", shape.chunk),
                              ("doc", shape.doc), ("page", shape.page), ("score", shape.score),
                              ("arm_ranks", shape.arm_ranks)) if v is not None}


def extract(reply: Any, shape: ReplyShape, secrets: Secrets | None = None) -> list[dict[str, Any]]:
    """Every hit of ``reply`` in list order as ``{"id", "score", "ranks"}`` (the id a chunk
    id, or ``doc#page`` when the arm reads ``doc`` and ``page``), checked as the module
    docstring says; the known ``secrets`` removed from ids and arm names (an endpoint may
    echo a header as an id). :class:`ReplyError` naming the first bad hit."""
    clean = secrets or Secrets()
    listed = dig(reply, shape.results, "results path")
    if not isinstance(listed, list):
        raise ReplyError(f"results path {shape.results!r} is {type(listed).__name__}, not a list")
    out = []
    for n, hit in enumerate(listed, start=1):
        where = f"{shape.results}[{n - 1}]"
        if not isinstance(hit, Mapping):
            raise ReplyError(f"{where} is {type(hit).__name__}, not an object")
        if shape.chunk is not None:
            rid = str(dig(hit, shape.chunk, f"{where}: chunk field"))
        else:
            doc = str(dig(hit, shape.doc or "", f"{where}: doc field"))
            page = dig(hit, shape.page or "", f"{where}: page field")
            try:
                rid = page_key(doc, page)
            except (TypeError, ValueError):
                raise ReplyError(f"{where}: page must be a page number, got {page!r}") from None
        score = None
        if shape.score is not None:
            raw = dig(hit, shape.score, f"{where}: score field")
            if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
                raise ReplyError(f"{where}: score must be a finite number, got {raw!r}")
            score = float(raw)
        ranks: dict[str, int | None] = {}
        if shape.arm_ranks is not None:
            given = dig(hit, shape.arm_ranks, f"{where}: arm_ranks field")
            if not isinstance(given, Mapping):
                raise ReplyError(f"{where}: arm_ranks must be an object of arm -> rank")
            ranks = {clean.scrub(str(a)): _rank(r, f"{where}.{shape.arm_ranks}.{a}")
                     for a, r in given.items()}
        out.append({"id": clean.scrub(rid), "score": score, "ranks": ranks})
    return out


def match(kept: Sequence[Mapping[str, Any]], shape: ReplyShape, chunk_ids: Mapping[str, Any],
          pages: Mapping[str, str]) -> list[ReplyHit]:
    """The hits :func:`extract` kept, each matched to its chunk (None: unmatched)."""
    out = []
    for h in kept:
        rid = str(h["id"])
        cid = (rid if rid in chunk_ids else None) if shape.chunk is not None else pages.get(rid)
        score = h.get("score")
        ranks = h.get("ranks") or {}
        out.append(ReplyHit(rid, cid, None if score is None else float(score),
                            {str(a): None if r is None else int(r) for a, r in ranks.items()}))
    return out


def read_hits(reply: Any, shape: ReplyShape, chunk_ids: Mapping[str, Any],
              pages: Mapping[str, str]) -> list[ReplyHit]:
    """Every hit of ``reply`` in list order (module docstring): :func:`extract`, :func:`match`."""
    return match(extract(reply, shape), shape, chunk_ids, pages)


def listed(hits: Sequence[ReplyHit], depth: int, rule: str) -> Listed:
    """The hits in list order under the ``on_unmatched`` ``rule``
    (:func:`rulegauge.arms.foreign.apply_rule`): a matched hit under its chunk id, an unmatched
    one under its reply id; the first occurrence of each, ranks 1..n, at most ``depth``;
    without a score, ``1/rank``."""
    return apply_rule(((h.chunk_id if h.chunk_id is not None else h.reply_id, h.chunk_id is None, h.score)
                       for h in hits), depth, rule)
