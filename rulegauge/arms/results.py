"""Arm results: one question's hits, as :class:`Hit` records or as arrays.

An arm returns one :class:`ArmResult` per question. Its hits are either a tuple of
:class:`Hit` records (most arms) or a :class:`HitColumns` (corpus rows, ranks and scores as
numpy arrays: the ``bm25`` arm, which ranks in numpy and would otherwise spend a third of
its time per question building 100 records, ``benchmarks/bench_bm25.py``). Readers that
want records read :attr:`ArmResult.hits` (built once, on first read); the ``arm_ranks``
table is built from :meth:`ArmResult.columns` (:mod:`rulegauge.pipeline.arm_frame`) without a
Python object per hit. Both forms of one list of hits are equal results.
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat

import numpy as np

from rulegauge.corpus.chunk_columns import ChunkColumns


@dataclass(frozen=True, slots=True)
class Hit:
    chunk_id: str
    rank: int
    score: float


@dataclass(frozen=True, eq=False)
class HitColumns:
    """One question's hits as arrays, best first: ``rows`` (int64) index ``chunks`` (the
    corpus's :class:`~rulegauge.corpus.chunk_columns.ChunkColumns`, shared by every result of
    a search), ``ranks`` (int32) and ``scores`` (float64) are aligned with them. What the
    arms that rank in numpy return (``bm25``): no Python object per hit."""

    chunks: ChunkColumns
    rows: np.ndarray
    ranks: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)

    def records(self) -> tuple[Hit, ...]:
        """The same hits as :class:`Hit` records."""
        return tuple(make_hits(self.chunks.ids[self.rows].tolist(), self.ranks.tolist(), self.scores.tolist()))


@dataclass(frozen=True, eq=False, repr=False)
class ArmResult:
    """An arm's hits for one question: ``found`` is a tuple of :class:`Hit` records or a
    :class:`HitColumns`; :attr:`hits` is always the records (built from columns on first
    read), :meth:`columns` always the arrays. ``empty_reason``: why there are no hits,
    when the arm knows. ``foreign``: the ids of hits that match no chunk of the corpus,
    kept at their ranks as non-relevant hits (:mod:`rulegauge.corpus.foreign`; only an arm
    that reads ids from outside has any). Equality, hash and repr are those of
    ``(question_id, arm, hits, empty_reason, foreign)``, whichever form ``found`` has."""

    question_id: str
    arm: str
    found: tuple[Hit, ...] | HitColumns = ()
    empty_reason: str | None = None
    foreign: frozenset[str] = frozenset()

    @cached_property
    def hits(self) -> tuple[Hit, ...]:
        return self.found.records() if isinstance(self.found, HitColumns) else tuple(self.found)

    @property
    def n_hits(self) -> int:
        """The number of hits (without building records)."""
        return len(self.found)

    def columns(self, chunks: ChunkColumns) -> HitColumns:
        """The hits as arrays over ``chunks`` (the corpus searched, or its columns with foreign
        rows appended: :meth:`ChunkColumns.with_foreign`). Columns over other chunk arrays (a
        copy, an unpickled result) must hold the same ids; a Hit's chunk id that is not in
        ``chunks`` raises ``KeyError``."""
        f = self.found
        if isinstance(f, HitColumns):
            if f.chunks is not chunks and f.chunks is not chunks.corpus \
                    and not np.array_equal(f.chunks.ids, chunks.base.ids):
                raise ValueError(f"arm {self.arm}, question {self.question_id}: hits index another corpus")
            return f
        row_of = chunks.row_of
        return HitColumns(chunks, np.fromiter((row_of[h.chunk_id] for h in f), np.int64, len(f)),
                          np.fromiter((h.rank for h in f), np.int32, len(f)),
                          np.fromiter((h.score for h in f), np.float64, len(f)))

    def _key(self) -> tuple[str, str, tuple[Hit, ...], str | None, frozenset[str]]:
        return (self.question_id, self.arm, self.hits, self.empty_reason, self.foreign)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArmResult) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"ArmResult(question_id={self.question_id!r}, arm={self.arm!r}, hits={self.hits!r}, "
                f"empty_reason={self.empty_reason!r}"
                + (f", foreign={sorted(self.foreign)!r})" if self.foreign else ")"))


def make_hits(chunk_ids: Sequence[str], ranks: Sequence[int], scores: Sequence[float]) -> list[Hit]:
    """``Hit(chunk_ids[i], ranks[i], scores[i])`` for every i (equal lengths), built in bulk.

    Arms return ~100 Hits per question, and their construction was a fifth of the bm25
    arm's time (``benchmarks/bench_bm25.py``). Here every step is one C-level ``map``:
    the instances are allocated, then each field is written through its slot descriptor
    (what the frozen dataclass's ``__init__`` does one ``object.__setattr__`` at a time), in
    about half the time; and the cyclic garbage collector is paused meanwhile, as 100k new
    tracked objects otherwise set off full collections of everything alive (the corpus
    included). Hits hold no reference cycles.
    """
    n = len(chunk_ids)
    if len(ranks) != n or len(scores) != n:
        raise ValueError(f"make_hits: {n} chunk ids, {len(ranks)} ranks, {len(scores)} scores")
    paused = gc.isenabled()
    gc.disable()
    try:
        hits: list[Hit] = list(map(object.__new__, repeat(Hit, n)))
        for name, column in (("chunk_id", chunk_ids), ("rank", ranks), ("score", scores)):
            deque(map(Hit.__dict__[name].__set__, hits, column), maxlen=0)  # the slot descriptor
        return hits
    finally:
        if paused:
            gc.enable()


def foreign_columns(results: object, chunks: ChunkColumns) -> ChunkColumns:
    """``chunks`` with a row for every id the ``results`` declare foreign (``ArmResult.foreign``;
    ``chunks`` itself when none does). Anything that is not a result, or not a set of ids, is
    skipped here: the arm contract names it (:mod:`rulegauge.arms.contract`)."""
    ids: set[str] = set()
    if not isinstance(results, (list, tuple)):  # not a list of results: the contract names it
        return chunks
    for r in results:
        declared = getattr(r, "foreign", None) if isinstance(r, ArmResult) else None
        if isinstance(declared, frozenset):
            ids.update(i for i in declared if isinstance(i, str))
    return chunks.with_foreign(sorted(ids)) if ids else chunks
