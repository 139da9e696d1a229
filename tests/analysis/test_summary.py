"""The per-config summary: declared aggregates, chosen metrics shown, ratio columns only when computed."""

import pandas as pd
import pytest

from harness.analysis.summary import summary_columns, summary_frame
from harness.metrics.ranking import DEFAULT_METRICS


def _metrics(names: list[str]) -> pd.DataFrame:
    rows = []
    for name in names:
        for qid, value, answerable in (("q1", 1.0, True), ("q2", 3.0, True), ("q3", 9.0, True),
                                       ("q4", 0.5, False)):
            rows.append({"question_id": qid, "config_id": "c", "metric": name, "value": value,
                         "answerable": answerable})
    return pd.DataFrame(rows)


def test_default_runs_show_the_summary_list_and_chosen_metrics_show_themselves():
    assert summary_columns(list(DEFAULT_METRICS)) == ["hit@1", "hit@5", "recall@5", "MRR@10", "nDCG@10",
                                                      "first_rel_rank"]
    assert summary_columns(["nDCG@20", "MAP@10", "recall@10", "top_score"]) == ["nDCG@20", "MAP@10", "recall@10"]


def test_aggregates_follow_the_registry_and_ratio_columns_need_the_ratio():
    df = summary_frame(_metrics(["first_rel_rank", "MAP@10"]), pd.DataFrame({"config_id": ["c"]}))
    assert list(df.columns) == ["config_id", "first_rel_rank", "MAP@10"]
    assert df.loc[0, "first_rel_rank"] == 3.0  # median of 1, 3, 9 (answerable only)
    assert df.loc[0, "MAP@10"] == pytest.approx(13 / 3)
    df = summary_frame(_metrics(["hit@1", "top_score_ratio"]), pd.DataFrame({"config_id": ["c"]}))
    assert df.loc[0, "ratio (ans)"] == pytest.approx(13 / 3) and df.loc[0, "ratio (unans)"] == 0.5
