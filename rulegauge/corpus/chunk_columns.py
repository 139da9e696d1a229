"""A corpus's chunks as aligned arrays, for tables built by corpus row (no lookup per chunk).

:class:`ChunkColumns` holds, in ``Corpus.chunks`` order, every chunk's id, document and
page; a *row* is a position in that order. Arms that return their hits as rows
(:class:`rulegauge.arms.results.HitColumns`) index these arrays, and
:func:`rulegauge.pipeline.arm_frame.arm_frame` gathers a whole arm's ``chunk_id``,
``doc_id`` and ``page`` columns with three gathers (Arrow ``take`` for the strings)
instead of a dictionary lookup per hit. Built once per corpus (``Corpus.chunk_columns``);
read-only.

Foreign hits (:mod:`rulegauge.corpus.foreign`: ids an arm was given that match no chunk)
get rows of their own, appended after the corpus's by :meth:`ChunkColumns.with_foreign`
(only for an arm that has some: the corpus's own columns are untouched): their id and
document are the reply id, their page 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

import numpy as np
import pyarrow as pa


class _ChunkLike(Protocol):
    @property
    def chunk_id(self) -> str: ...
    @property
    def doc_id(self) -> str: ...
    @property
    def page(self) -> int: ...


@dataclass(frozen=True, eq=False)
class ChunkColumns:
    """``ids`` / ``doc_ids`` (object arrays of str) and ``pages`` (int32), one entry per
    corpus row; ``row_of`` maps a chunk id to its row. ``corpus``: the corpus's own columns
    when these extend them with foreign rows (:meth:`with_foreign`), else None."""

    ids: np.ndarray
    doc_ids: np.ndarray
    pages: np.ndarray
    corpus: ChunkColumns | None = None

    @classmethod
    def of(cls, chunks: Sequence[_ChunkLike]) -> ChunkColumns:
        def column(values: list[str]) -> np.ndarray:
            out = np.empty(len(values), dtype=object)  # never a 2-D array of characters
            out[:] = values
            return out

        return cls(column([c.chunk_id for c in chunks]), column([c.doc_id for c in chunks]),
                   np.fromiter((c.page for c in chunks), dtype=np.int32, count=len(chunks)))

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_corpus(self) -> int:
        """Rows that are chunks of the corpus (the first ones); the rest are foreign hits."""
        return len(self) if self.corpus is None else len(self.corpus)

    @property
    def base(self) -> ChunkColumns:
        """The corpus's own columns (these, when they hold no foreign row)."""
        return self if self.corpus is None else self.corpus

    def with_foreign(self, reply_ids: Sequence[str]) -> ChunkColumns:
        """These columns with a row appended per foreign id of ``reply_ids`` (ids that are no
        chunk, in the order given, each once): id and document the reply id, page 0
        (:mod:`rulegauge.corpus.foreign`). ``self`` when there is none."""
        base = self.base
        known = base.row_of
        new = [i for i in dict.fromkeys(reply_ids) if i not in known]
        if not new:
            return base
        extra = np.empty(len(new), dtype=object)
        extra[:] = new
        return ChunkColumns(np.concatenate([base.ids, extra]), np.concatenate([base.doc_ids, extra]),
                            np.concatenate([base.pages, np.zeros(len(new), np.int32)]),  # corpus.foreign.FOREIGN_PAGE
                            base)

    @cached_property
    def row_of(self) -> dict[str, int]:
        """Chunk id -> corpus row."""
        return {c: i for i, c in enumerate(self.ids.tolist())}

    @cached_property
    def arrow_ids(self) -> pa.Array:
        """``ids`` as an Arrow string array (a gather by row is ``take``: no Python object per row)."""
        return pa.array(self.ids.tolist(), type=pa.string())

    @cached_property
    def arrow_doc_ids(self) -> pa.Array:
        """``doc_ids`` as an Arrow string array."""
        return pa.array(self.doc_ids.tolist(), type=pa.string())
