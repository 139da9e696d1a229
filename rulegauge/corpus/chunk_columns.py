"""A corpus's chunks as aligned arrays, for tables built by corpus row (no lookup per chunk).

:class:`ChunkColumns` holds, in ``Corpus.chunks`` order, every chunk's id, document and
page; a *row* is a position in that order. Arms that return their hits as rows
(:class:`rulegauge.arms.results.HitColumns`) index these arrays, and
:func:`rulegauge.pipeline.arm_frame.arm_frame` gathers a whole arm's ``chunk_id``,
``doc_id`` and ``page`` columns with three gathers (Arrow ``take`` for the strings)
instead of a dictionary lookup per hit. Built once per corpus (``Corpus.chunk_columns``);
read-only.
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
    corpus row; ``row_of`` maps a chunk id to its row."""

    ids: np.ndarray
    doc_ids: np.ndarray
    pages: np.ndarray

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
