"""Foreign hits: ids from outside that match no chunk of the run's corpus, kept at their ranks.

An arm that reads ids from outside (``http``, ``http-ranks``, ``external``; the engine arms'
safety net) may be given an id that is no chunk of the gold set's corpus: another game's
page from a service that searches the whole library, a page of a stale edition. Such a hit
is never dropped (the hits below it would move up and the metrics would not see it): it
keeps its rank as a *foreign hit*, non-relevant to every question (docs/arms.md, "Foreign
hits").

How a foreign hit is written, everywhere (``arm_ranks``, ``fused``, the scoring):

* its ``chunk_id`` is the id as the reply gave it (the *reply id*), so two different
  foreign ids are two hits, the same foreign id from two arms is one hit, and fused ties
  are ordered by it like any chunk id;
* it is a page of its own: ``doc_id`` is the reply id and ``page`` is :data:`FOREIGN_PAGE`
  (0). No page of a corpus is 0 (pages are 1-based), so the page ``<reply id>#0`` is never
  a real page, never relevant, and never merged with another hit's page; a tool that reads
  ``doc_id#page`` as the page (ir_measures over the fused rows) scores it as rulegauge does;
* the ``foreign`` column of ``arm_ranks`` and ``fused`` says so (runs written before it have
  no such column: :func:`foreign_flags` reads them as having no foreign hit).

A reply id kept as a foreign hit must be usable as an id (:func:`foreign_id_problem`):
non-empty, at most :data:`MAX_FOREIGN_ID` characters, no invisible or control characters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rulegauge.core.names import invisible_characters
from rulegauge.corpus.records import page_key

FOREIGN_PAGE = 0
"""The page number of every foreign hit (no corpus page is 0)."""
MAX_FOREIGN_ID = 256
"""Longest reply id kept as a foreign hit, in characters (ids are sorted as fixed-width
strings with the corpus's chunk ids: a long id widens every one of them)."""


def foreign_page_key(reply_id: str) -> str:
    """The page id of a foreign hit: ``<reply id>#0`` (module docstring)."""
    return page_key(reply_id, FOREIGN_PAGE)


def foreign_id_problem(reply_id: object) -> str | None:
    """Why ``reply_id`` cannot be kept as a foreign hit's id, or None."""
    if not isinstance(reply_id, str) or not reply_id.strip():
        return f"id {reply_id!r} is empty"
    if len(reply_id) > MAX_FOREIGN_ID:
        return f"id {reply_id[:40]!r}... is {len(reply_id)} characters long (at most {MAX_FOREIGN_ID})"
    bad = invisible_characters(reply_id)
    if bad:
        return f"id {reply_id!r} holds invisible or control characters ({', '.join(bad)})"
    return None


def foreign_flags(frame: Mapping[str, Any] | Any) -> np.ndarray:
    """The ``foreign`` column of an ``arm_ranks`` or ``fused`` frame as a bool array; all
    False for a frame of a run written before foreign hits were kept (no such column)."""
    columns = getattr(frame, "columns", frame)
    if "foreign" in columns:
        return np.asarray(frame["foreign"], dtype=bool)
    return np.zeros(len(frame), dtype=bool)
