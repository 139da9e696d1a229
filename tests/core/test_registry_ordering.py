import numpy as np
import pytest

from rulegauge.core.errors import RegistryError
from rulegauge.core.ordering import grouped_order, id_ranks, order, ranks_from_order
from rulegauge.core.registry import Registry


def test_registry_duplicate_and_unknown_name_list_choices():
    reg: Registry[int] = Registry("widget")
    reg.add("a", 1)
    reg.add("b", 2)
    with pytest.raises(RegistryError, match="duplicate widget name 'a'"):
        reg.add("a", 3)
    with pytest.raises(RegistryError, match="choose one of: a, b"):
        reg.get("zzz")
    assert reg.names() == ["a", "b"]


def test_order_breaks_ties_by_id_ascending():
    scores = [0.5, 0.9, 0.5, 0.9, float("nan")]
    ids = ["d", "c", "a", "b", "e"]
    assert [ids[i] for i in order(scores, ids)] == ["b", "c", "a", "d", "e"]


def test_order_rejects_mismatched_lengths():
    with pytest.raises(ValueError):
        order([1.0], ["a", "b"])


def test_grouped_order_matches_per_group_order():
    rng = np.random.default_rng(7)
    groups = rng.integers(0, 5, 200)
    scores = rng.integers(0, 4, 200).astype(float)  # many deliberate ties
    ids = np.array([f"c{i:03d}" for i in rng.permutation(200)])
    idx = grouped_order(groups, scores, id_ranks(ids))
    for g in range(5):
        mine = [i for i in idx if groups[i] == g]
        sel = np.flatnonzero(groups == g)
        ref = sel[order(scores[sel], ids[sel])]
        assert mine == ref.tolist()


def test_ranks_from_order():
    assert ranks_from_order(3, np.array([2, 0, 1])).tolist() == [2, 3, 1]
