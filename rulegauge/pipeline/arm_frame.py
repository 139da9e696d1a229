"""An arm's results as its part of the ``arm_ranks`` table.

:func:`arm_frame` turns one arm's :class:`~rulegauge.arms.results.ArmResult` list into rows
``question_id, arm, chunk_id, rank, score, doc_id, page, foreign`` (hits in result order, each
question's best first). A foreign hit (an id that matches no chunk, declared in
``ArmResult.foreign``; :mod:`rulegauge.corpus.foreign`) is a row of the columns the arm's hits
are read over (:meth:`~rulegauge.corpus.chunk_columns.ChunkColumns.with_foreign`: its reply id,
its own page 0, ``foreign`` true); an arm without one is read over the corpus's own columns.
Every result is read as columns
(:meth:`~rulegauge.arms.results.ArmResult.columns`: corpus rows, ranks, scores), and the
table is built in Arrow: a few concatenations, and gathers by corpus row
(:class:`~rulegauge.corpus.chunk_columns.ChunkColumns`; ``take`` for the strings), then one
conversion to pandas. No Python object per hit for the arms that return arrays (``bm25``),
one dictionary lookup per hit for those that return :class:`~rulegauge.arms.results.Hit`
records. dtypes: ``rank`` and ``page`` int32, ``score`` float64, ``foreign`` bool, the text
columns pandas' string dtype: the frame a row-by-row construction from the records gives
(``tests/pipeline/test_arm_frame.py`` compares the two).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from rulegauge.arms.results import ArmResult, foreign_columns
from rulegauge.corpus.chunk_columns import ChunkColumns
from rulegauge.corpus.records import Corpus

COLUMNS = ("question_id", "arm", "chunk_id", "rank", "score", "doc_id", "page", "foreign")


def arm_frame(results: Sequence[ArmResult], corpus: Corpus, chunks: ChunkColumns | None = None) -> pd.DataFrame:
    """The ``arm_ranks`` rows of ``results`` over ``corpus`` (module docstring), read over
    ``chunks`` (default: :func:`foreign_columns` of the results). A Hit's chunk id that is
    neither in the corpus nor declared foreign raises ``KeyError``."""
    chunks = chunks if chunks is not None else foreign_columns(results, corpus.chunk_columns)
    cols = [r.columns(chunks) for r in results]
    counts = np.fromiter((len(c) for c in cols), dtype=np.int64, count=len(cols))
    rows = np.concatenate([c.rows for c in cols]) if cols else np.zeros(0, dtype=np.int64)
    ranks = np.concatenate([c.ranks for c in cols]) if cols else np.zeros(0, dtype=np.int32)
    scores = np.concatenate([c.scores for c in cols]) if cols else np.zeros(0)
    result_of_row = pa.array(np.repeat(np.arange(len(cols), dtype=np.int64), counts))
    take = pa.array(rows)
    table = pa.table({
        "question_id": pa.array([r.question_id for r in results], type=pa.string()).take(result_of_row),
        "arm": pa.array([r.arm for r in results], type=pa.string()).take(result_of_row),
        "chunk_id": chunks.arrow_ids.take(take),
        "rank": pa.array(ranks.astype(np.int32, copy=False)),
        "score": pa.array(scores.astype(np.float64, copy=False)),
        "doc_id": chunks.arrow_doc_ids.take(take),
        "page": pa.array(chunks.pages[rows]),
        "foreign": pa.array(rows >= chunks.n_corpus, type=pa.bool_()),
    })
    frame: pd.DataFrame = table.to_pandas()
    return frame
