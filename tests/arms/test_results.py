"""Arm results: Hit records (frozen, equal by value, built in bulk by ``make_hits`` like the
constructor), and an ArmResult's two forms, records and columns, being one result."""

import dataclasses
import gc
import pickle

import numpy as np
import pytest

from rulegauge.arms.results import ArmResult, Hit, HitColumns, make_hits
from rulegauge.corpus.chunk_columns import ChunkColumns


def test_hit_is_a_frozen_value_record() -> None:
    h = Hit("c1", 1, 0.5)
    assert h == Hit("c1", 1, 0.5) and hash(h) == hash(Hit("c1", 1, 0.5)) and h != Hit("c1", 2, 0.5)
    assert (h.chunk_id, h.rank, h.score) == ("c1", 1, 0.5) and repr(h) == "Hit(chunk_id='c1', rank=1, score=0.5)"
    assert dataclasses.replace(h, rank=3) == Hit("c1", 3, 0.5)
    assert [f.name for f in dataclasses.fields(Hit)] == ["chunk_id", "rank", "score"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.rank = 2  # type: ignore[misc]


def test_make_hits_builds_in_order_and_restores_the_collector() -> None:
    assert make_hits(["a", "b"], [1, 2], [2.0, 1.0]) == [Hit("a", 1, 2.0), Hit("b", 2, 1.0)]
    assert gc.isenabled()
    gc.disable()
    try:
        make_hits(["a"], [1], [1.0])
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()
    with pytest.raises(ValueError, match="2 chunk ids, 1 ranks"):
        make_hits(["a", "b"], [1], [1.0, 2.0])
    assert gc.isenabled()
    [h] = make_hits(["a"], [1], [1.0])
    assert pickle.loads(pickle.dumps(h)) == h and h == Hit("a", 1, 1.0) and not hasattr(h, "__dict__")


def _columns(chunks: ChunkColumns, rows: list[int], scores: list[float]) -> HitColumns:
    return HitColumns(chunks, np.array(rows, dtype=np.int64), np.arange(1, len(rows) + 1, dtype=np.int32),
                      np.array(scores))


def test_columns_and_records_are_one_result(tiny_corpus) -> None:
    chunks = tiny_corpus.chunk_columns
    ids = [c.chunk_id for c in tiny_corpus.chunks]
    cols = _columns(chunks, [3, 0, 2], [2.5, 1.0, 1.0])
    records = (Hit(ids[3], 1, 2.5), Hit(ids[0], 2, 1.0), Hit(ids[2], 3, 1.0))
    a, b = ArmResult("q", "bm25", cols), ArmResult("q", "bm25", records)
    assert a.hits == records and a.n_hits == b.n_hits == 3 and cols.records() == records
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b) and a != ArmResult("q", "bm25", records[:2])
    assert repr(b) == f"ArmResult(question_id='q', arm='bm25', hits={records!r}, empty_reason=None)"
    back = b.columns(chunks)  # records -> columns by chunk id
    assert (back.rows.tolist(), back.ranks.tolist(), back.scores.tolist()) == ([3, 0, 2], [1, 2, 3], [2.5, 1.0, 1.0])
    assert back.rows.dtype == np.int64 and back.ranks.dtype == np.int32 and back.scores.dtype == np.float64
    assert a.columns(chunks) is cols
    renamed = dataclasses.replace(a, arm="bm25-b")  # what a run does with the config's arm name
    assert renamed.found is cols and "hits" not in renamed.__dict__ and renamed.hits == records
    assert pickle.loads(pickle.dumps(a)) == a
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.arm = "x"  # type: ignore[misc]


def test_columns_of_another_corpus_or_unknown_ids_fail(tiny_corpus) -> None:
    other = ChunkColumns.of(tiny_corpus.chunks[1:])
    with pytest.raises(ValueError, match="arm bm25, question q: hits index another corpus"):
        ArmResult("q", "bm25", _columns(other, [0], [1.0])).columns(tiny_corpus.chunk_columns)
    copy = ChunkColumns.of(tiny_corpus.chunks)  # equal ids (an unpickled result): accepted
    assert ArmResult("q", "bm25", _columns(copy, [0], [1.0])).columns(tiny_corpus.chunk_columns).rows.tolist() == [0]
    with pytest.raises(KeyError, match="nowhere"):
        ArmResult("q", "x", (Hit("nowhere", 1, 1.0),)).columns(tiny_corpus.chunk_columns)


def test_empty_results_count_without_records() -> None:
    assert ArmResult("q", "x").hits == () and ArmResult("q", "x", (), "why").n_hits == 0
    assert ArmResult("q", "x") == ArmResult("q", "x", ()) and ArmResult("q", "x") != ArmResult("q", "x", (), "why")
