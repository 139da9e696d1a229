"""RRF's fused planes: the same floats as ``rrf_scores`` whatever the memo of arm terms holds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rulegauge.fusion.exact import rrf_scores
from rulegauge.fusion.kernel import planes_of
from rulegauge.fusion.matrix import RankMatrix
from rulegauge.fusion.method import FUSION_METHODS
from rulegauge.fusion.records import FusionConfig

ARMS = ("a", "b", "c")


def matrix(seed: int) -> RankMatrix:
    rng = np.random.default_rng(seed)
    rows = [(f"q{q}", arm, f"d{d:02d}", r) for q in range(6) for arm in ARMS
            for r, d in enumerate(rng.choice(40, int(rng.integers(1, 30)), replace=False), start=1)]
    ar = pd.DataFrame(rows, columns=["question_id", "arm", "chunk_id", "rank"])
    return RankMatrix.from_arm_ranks(ar, [f"q{q}" for q in range(6)], ARMS)


def rrf(k, arms, weights, depths):
    return FusionConfig("c", "c", "grid", "rrf", float(k), arms, weights, depths)


def test_fused_plane_equals_rrf_scores_bit_for_bit_across_shared_terms():
    m = matrix(2)
    planes, col = planes_of(m)
    method = FUSION_METHODS.get("rrf")
    configs = [rrf(k, arms, w, d) for k in (1.0, 2.5, 60.0)
               for arms, w, d in ((ARMS, (1.0, 1.0, 1.0), (100, 100, 100)), (("a", "b"), (1.0, 1.0), (100, 100)),
                                  (("c", "a"), (0.5, 1.0), (7, 100)), (("b",), (2.0,), (12,)))]
    for c in configs * 2:  # the second round reads every arm term from the memo
        plane = method.fuse(planes, c)
        want = rrf_scores(m.arm_columns(c.arms), c.k, c.weights, c.depths)
        np.testing.assert_array_equal(plane[m.question_index, col], want)
        assert plane.flags.writeable  # the caller's own array, never the memo's


def test_memo_terms_are_read_only_and_keyed_by_arm_weight_k_and_depth():
    planes, _ = planes_of(matrix(3))
    method = FUSION_METHODS.get("rrf")
    a = method.fuse(planes, rrf(60.0, ("a", "b"), (1.0, 1.0), (100, 100)))
    b = method.fuse(planes, rrf(60.0, ("a", "b"), (1.0, 1.0), (5, 100)))  # a cut at 5: another term
    assert not np.array_equal(a, b)

    def missing() -> np.ndarray:
        raise AssertionError("the term was not kept")

    top = min(100, planes.max_rank[0])
    kept = planes.memo(("rrf-term", 0, 1.0, 60.0, top), missing)  # arm a, weight 1, k 60, whole list
    assert not kept.flags.writeable
    np.testing.assert_array_equal(kept, np.where(planes.ranks[0] > 0, 1.0 / (60.0 + planes.ranks[0]), 0.0))
