"""Hit records: frozen, equal by value, and built in bulk (``make_hits``) like the constructor."""

import dataclasses
import gc
import pickle

import pytest

from harness.arms.base import Hit, make_hits


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
