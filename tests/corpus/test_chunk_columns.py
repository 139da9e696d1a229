"""``Corpus.chunk_columns``: every chunk's id, document and page as arrays in corpus order."""

import numpy as np

from rulegauge.corpus.chunk_columns import ChunkColumns


def test_columns_follow_the_corpus_rows(tiny_corpus) -> None:
    cols = tiny_corpus.chunk_columns
    assert cols is tiny_corpus.chunk_columns and len(cols) == len(tiny_corpus.chunks)
    assert cols.ids.tolist() == [c.chunk_id for c in tiny_corpus.chunks]
    assert cols.doc_ids.tolist() == [c.doc_id for c in tiny_corpus.chunks]
    assert cols.pages.tolist() == [c.page for c in tiny_corpus.chunks] and cols.pages.dtype == np.int32
    assert cols.ids.dtype == object and cols.ids.ndim == 1
    assert all(cols.ids[cols.row_of[c.chunk_id]] == c.chunk_id for c in tiny_corpus.chunks)
    empty = ChunkColumns.of(())
    assert len(empty) == 0 and empty.ids.dtype == object and empty.row_of == {}
