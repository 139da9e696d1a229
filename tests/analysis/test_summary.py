"""Per-config summary: means over answerable questions, median for first_rel_rank."""

import math

import pandas as pd
import pytest

from harness.analysis.summary import summary_frame


def test_summary_means_medians_and_ratio_split():
    rows = []
    for cid, base in (("c1", 0.0), ("c2", 1.0)):
        for qid, ans in (("q1", True), ("q2", True), ("q3", False)):
            v = base + {"q1": 1.0, "q2": 3.0, "q3": 10.0}[qid]
            rows += [(qid, cid, "hit@1", v, ans), (qid, cid, "first_rel_rank", v, ans),
                     (qid, cid, "top_score_ratio", v / 10, ans)]
    metrics = pd.DataFrame(rows, columns=["question_id", "config_id", "metric", "value", "answerable"])
    configs = pd.DataFrame({"config_id": ["c2", "c1"]})
    df = summary_frame(metrics, configs).set_index("config_id")
    assert list(df.index) == ["c2", "c1"]  # configs table order
    assert df.loc["c1", "hit@1"] == pytest.approx((1 + 3) / 2)
    assert df.loc["c2", "first_rel_rank"] == pytest.approx((2 + 4) / 2)  # median of two
    assert df.loc["c1", "ratio (ans)"] == pytest.approx((0.1 + 0.3) / 2)
    assert df.loc["c2", "ratio (unans)"] == pytest.approx(1.1)
    assert "nDCG@10" not in df.columns  # no rows: no column, never a plausible 0


def test_summary_without_unanswerable_questions_gives_nan_ratio():
    metrics = pd.DataFrame([("q1", "c", "top_score_ratio", 0.5, True)],
                           columns=["question_id", "config_id", "metric", "value", "answerable"])
    df = summary_frame(metrics, pd.DataFrame({"config_id": ["c"]}))
    assert math.isnan(df.loc[0, "ratio (unans)"]) and df.loc[0, "ratio (ans)"] == 0.5
