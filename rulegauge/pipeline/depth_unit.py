"""Arm depth in the unit the metrics count: chunks, or pages (an imported collection's documents).

Every ranking metric counts pages (:mod:`rulegauge.metrics.page_lists`: a page ranks at
its best chunk), so an arm list of 100 chunks may hold only 56 pages, and R@100 then
counts 56. The run's ``depth_unit`` (``rulegauge run --depth-unit``) says what an arm's
depth counts:

``chunk`` (default)
    An arm returns its top ``depth`` chunks, as it always has.
``page``
    An arm is asked for :func:`chunk_depth` chunks: the sum of the ``depth`` largest
    per-page chunk counts of the corpus (at most every chunk), the fewest that certainly
    hold ``depth`` distinct pages whatever the arm ranks. Its list is then cut to the
    best chunk of each page, in the arm's order, ranks renumbered 1, 2, ... and kept to
    ``depth`` pages (:func:`best_per_page`). So depth 100 is 100 pages, a config's depth
    for an arm counts pages, and R@100 over a collection imported with one page per
    document (``goldset import-beir``, ``import-trec``) counts 100 documents, as the field
    counts them. Scores are the arm's own for the chunk kept.

The short-list check (:func:`short_lists`) says, for each arm, which questions hold fewer
distinct pages than the largest metric cutoff because the arm stopped at its depth (it
returned every hit it was asked for, in a corpus with more chunks): pages beyond the depth
never entered the run, so the metric counts fewer. A list that is short because the arm
found nothing more (no shared term), or a corpus with fewer pages than the cutoff, is not
short: more depth would not add a page. ``rulegauge run`` prints it as a warning naming
the arm, the count and the first question ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rulegauge.arms.results import ArmResult, HitColumns
from rulegauge.core.errors import ConfigError
from rulegauge.corpus.chunk_columns import ChunkColumns

DEPTH_UNITS = ("chunk", "page")
SHOWN_IDS = 5
"""Question ids a short-list warning names (the count covers them all)."""


@dataclass(frozen=True)
class DepthPlan:
    """How a run's arms are searched: the depth ``unit`` and the largest metric ``cutoff``
    of the run (None when no metric has one), which the short-list check compares with."""

    unit: str = "chunk"
    cutoff: int | None = None

    def __post_init__(self) -> None:
        check_unit(self.unit)


def check_unit(unit: str) -> str:
    """``unit`` if it is a depth unit, else a :class:`ConfigError` naming the choices."""
    if unit not in DEPTH_UNITS:
        raise ConfigError(f"unknown depth unit {unit!r}; choose one of: {', '.join(DEPTH_UNITS)}")
    return unit


DEFAULT_PLAN = DepthPlan()
"""Depth in chunks, no cutoff to check against."""


def page_codes(chunks: ChunkColumns) -> np.ndarray:
    """Each corpus row's page as a code 0..P-1 (equal codes: the same ``doc#page``)."""
    if not len(chunks):
        return np.zeros(0, dtype=np.int64)
    _, doc = np.unique(chunks.doc_ids.astype(str), return_inverse=True)
    key = doc.astype(np.int64) * (int(chunks.pages.max()) + 1) + chunks.pages.astype(np.int64)
    _, codes = np.unique(key, return_inverse=True)
    return np.asarray(codes, dtype=np.int64)


def chunk_depth(codes: np.ndarray, pages: int) -> int:
    """Chunks to ask an arm for so that its list holds ``pages`` distinct pages: the sum of
    the ``pages`` largest per-page chunk counts (``codes``: :func:`page_codes`)."""
    counts = np.sort(np.bincount(codes))[::-1] if len(codes) else np.zeros(0, dtype=np.int64)
    return max(1, int(counts[:pages].sum()))


def best_per_page(result: ArmResult, chunks: ChunkColumns, codes: np.ndarray, pages: int) -> ArmResult:
    """``result`` cut to the best chunk of each page, in its order, ranks 1..n, n <= ``pages``."""
    if not result.n_hits:
        return result
    cols = result.columns(chunks)
    _, first = np.unique(codes[cols.rows], return_index=True)
    keep = np.sort(first)[:pages]
    return replace(result, found=HitColumns(chunks, cols.rows[keep],
                                            np.arange(1, len(keep) + 1, dtype=np.int32), cols.scores[keep]))


def short_lists(results: Sequence[ArmResult], chunks: ChunkColumns, codes: np.ndarray,
                cutoff: int | None, asked: int) -> dict[str, Any] | None:
    """The manifest's ``short_lists`` of one arm, or None when no list is short (module
    docstring): ``{"cutoff", "target", "questions", "of", "fewest", "ids"}``, ``target``
    being the cutoff or the corpus's page count when smaller, ``ids`` the first
    :data:`SHOWN_IDS` short questions in gold-set order. ``asked``: the chunks the arm was
    asked for."""
    n = chunks.n_corpus  # rows beyond it are foreign hits (corpus/foreign): each a page of its own
    if cutoff is None or asked >= n:
        return None
    pages = (int(codes.max()) + 1 if n == len(codes) else len(np.unique(codes[:n]))) if n else 0
    target = min(cutoff, pages)
    short: list[tuple[str, int]] = []
    for r in results:
        if r.n_hits >= asked:
            units = len(np.unique(codes[r.columns(chunks).rows]))
            if units < target:
                short.append((r.question_id, units))
    if not short:
        return None
    return {"cutoff": cutoff, "target": target, "questions": len(short), "of": len(results),
            "fewest": min(n for _, n in short), "ids": [q for q, _ in short[:SHOWN_IDS]]}


def short_warning(arm: str, info: dict[str, Any]) -> str | None:
    """The warning ``rulegauge run`` prints for an arm's manifest entry (its ``short_lists``)."""
    s = info.get("short_lists")
    if not s:
        return None
    unit = info.get("depth_unit", "chunk")
    more = ", ..." if s["questions"] > len(s["ids"]) else ""
    hint = ("raise the arm's depth" if unit == "page" else
            "run with --depth-unit page (depth counted in pages) or raise the arm's depth")
    return (f"arm {arm}: {s['questions']} of {s['of']} questions hold fewer than {s['target']} distinct "
            f"pages in its list (as few as {s['fewest']}; depth {info.get('depth')} {unit}s), so metrics "
            f"at cutoff {s['cutoff']} count fewer pages for them: {', '.join(s['ids'])}{more}; {hint}")
