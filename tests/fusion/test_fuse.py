"""Weighted RRF: expected values written as formulas."""

import numpy as np
import pandas as pd
import pytest

from rulegauge.fusion.configs import FusionConfig
from rulegauge.fusion.fuse import FUSION_METHODS, RankMatrix, fuse, rrf
from rulegauge.fusion.method import config_ceiling


def cfg(arms, k=60.0, weights=None, depths=None, cid="c"):
    weights = weights or tuple(1.0 for _ in arms)
    depths = depths or tuple(100 for _ in arms)
    return FusionConfig(cid, cid, "grid", "rrf", k, tuple(arms), tuple(weights), tuple(depths))


def arm_ranks(rows):
    return pd.DataFrame(rows, columns=["question_id", "arm", "chunk_id", "rank"])


def test_rrf_formula_with_weights_and_depth():
    ranks = np.array([[1, 3, 0], [2, 0, 5], [0, 0, 0]], dtype=np.int32)
    s = rrf(ranks, 60.0, np.array([1.0, 0.5, 2.0]), np.array([100, 100, 4]))
    assert s[0] == pytest.approx(1 / (60 + 1) + 0.5 / (60 + 3), abs=1e-15)
    assert s[1] == pytest.approx(1 / (60 + 2), abs=1e-15)  # rank 5 beyond depth 4: no vote
    assert s[2] == 0.0


def test_ceiling_is_sum_of_weights_over_k_plus_one():
    assert config_ceiling(cfg(["a", "b", "c"])) == pytest.approx(3 / 61)
    assert round(config_ceiling(cfg(["a", "b", "c"])), 5) == 0.04918
    assert round(config_ceiling(cfg(["a", "b"])), 5) == 0.03279
    assert config_ceiling(cfg(["a", "b"], weights=(1.0, 0.5))) == pytest.approx(1 / 61 + 0.5 / 61)


def test_fuse_orders_by_score_then_chunk_id_with_deliberate_ties():
    df = arm_ranks([
        ("q1", "a", "x2", 1), ("q1", "b", "x1", 1),  # tie: 1/61 each -> x1 before x2
        ("q1", "a", "x3", 2), ("q1", "b", "x3", 2),  # 2/62 beats 1/61
        ("q2", "a", "y1", 1),
    ])
    m = RankMatrix.from_arm_ranks(df, ["q1", "q2", "q3"], ["a", "b"])
    f = fuse(m, cfg(["a", "b"]))
    got = list(zip(m.question_ids[f.question_index], m.chunk_ids[f.rows], f.fused_rank.tolist(), strict=True))
    assert got == [("q1", "x3", 1), ("q1", "x1", 2), ("q1", "x2", 3), ("q2", "y1", 1)]
    assert f.score[0] == pytest.approx(2 / (60 + 2))
    assert f.arms_voted.tolist() == [2, 1, 1, 1]


def test_config_subset_ignores_other_arms():
    df = arm_ranks([("q1", "a", "x1", 3), ("q1", "b", "x2", 1)])
    m = RankMatrix.from_arm_ranks(df, ["q1"], ["a", "b"])
    f = fuse(m, cfg(["a"]))
    assert m.chunk_ids[f.rows].tolist() == ["x1"]
    assert f.score.tolist() == [1 / (60 + 3)]


def test_registry_has_rrf():
    assert "rrf" in FUSION_METHODS.names()
