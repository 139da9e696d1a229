"""An arm's results as its part of the ``arm_ranks`` table.

:func:`arm_frame` turns one arm's :class:`~harness.arms.base.ArmResult` list into rows
``question_id, arm, chunk_id, rank, score, doc_id, page`` (hits in result order, each
question's best first). Every result is read as columns
(:meth:`~harness.arms.base.ArmResult.columns`: corpus rows, ranks, scores), so the table
is a few concatenations and three gathers by corpus row
(:class:`~harness.corpus.chunk_columns.ChunkColumns`), with no Python object per hit for
the arms that return arrays (``bm25``) and one dictionary lookup per hit for those that
return :class:`~harness.arms.base.Hit` records. dtypes: ``rank`` and ``page`` int32,
``score`` float64, the text columns pandas' string dtype (as a frame built from the
records row by row has them).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.arms.results import ArmResult
from harness.corpus.records import Corpus

COLUMNS = ("question_id", "arm", "chunk_id", "rank", "score", "doc_id", "page")


def _text(values: np.ndarray) -> pd.Series:
    return pd.Series(values, dtype="str")


def arm_frame(results: Sequence[ArmResult], corpus: Corpus) -> pd.DataFrame:
    """The ``arm_ranks`` rows of ``results`` over ``corpus`` (module docstring). A Hit's
    chunk id that is not in the corpus raises ``KeyError``."""
    chunks = corpus.chunk_columns
    cols = [r.columns(chunks) for r in results]
    counts = np.fromiter((len(c) for c in cols), dtype=np.int64, count=len(cols))
    rows = np.concatenate([c.rows for c in cols]) if cols else np.zeros(0, dtype=np.int64)
    ranks = np.concatenate([c.ranks for c in cols]) if cols else np.zeros(0, dtype=np.int32)
    scores = np.concatenate([c.scores for c in cols]) if cols else np.zeros(0)

    def repeated(values: list[str]) -> pd.Series:
        labels = np.empty(len(values), dtype=object)
        labels[:] = values
        return _text(np.repeat(labels, counts))

    return pd.DataFrame({
        "question_id": repeated([r.question_id for r in results]),
        "arm": repeated([r.arm for r in results]),
        "chunk_id": _text(chunks.ids[rows]),
        "rank": ranks.astype(np.int32, copy=False),
        "score": scores.astype(np.float64, copy=False),
        "doc_id": _text(chunks.doc_ids[rows]),
        "page": chunks.pages[rows].astype(np.int32, copy=False),
    }, columns=list(COLUMNS))
