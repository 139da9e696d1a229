"""The per-config summary: declared aggregates, chosen metrics shown, ratio columns only when computed."""

import pandas as pd
import pytest

from rulegauge.metrics.ranking import DEFAULT_METRICS
from rulegauge.metrics.summary import summary_columns, summary_frame


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
                                                      "nDCG(judged_only=True)@10", "Judged@10",
                                                      "first_rel_rank"]
    assert summary_columns(["nDCG@20", "MAP@10", "recall@10", "top_score"]) == ["nDCG@20", "MAP@10", "recall@10"]


def test_aggregates_follow_the_registry_and_ratio_columns_need_the_ratio():
    df = summary_frame(_metrics(["first_rel_rank", "MAP@10"]), pd.DataFrame({"config_id": ["c"]}))
    assert list(df.columns) == ["config_id", "first_rel_rank", "MAP@10"]
    assert df.loc[0, "first_rel_rank"] == 3.0  # median of 1, 3, 9 (answerable only)
    assert df.loc[0, "MAP@10"] == pytest.approx(13 / 3)
    df = summary_frame(_metrics(["hit@1", "top_score_ratio"]), pd.DataFrame({"config_id": ["c"]}))
    assert df.loc[0, "top_score_ratio_answerable"] == pytest.approx(13 / 3)
    assert df.loc[0, "top_score_ratio_unanswerable"] == 0.5


def test_summary_means_medians_ratio_split_and_configs_order():
    rows = []
    for cid, base in (("c1", 0.0), ("c2", 1.0)):
        for qid, ans in (("q1", True), ("q2", True), ("q3", False)):
            v = base + {"q1": 1.0, "q2": 3.0, "q3": 10.0}[qid]
            rows += [(qid, cid, "hit@1", v, ans), (qid, cid, "first_rel_rank", v, ans),
                     (qid, cid, "top_score_ratio", v / 10, ans)]
    metrics = pd.DataFrame(rows, columns=["question_id", "config_id", "metric", "value", "answerable"])
    df = summary_frame(metrics, pd.DataFrame({"config_id": ["c2", "c1"]})).set_index("config_id")
    assert list(df.index) == ["c1", "c2"]  # config_sort_key order, not the table's
    assert df.loc["c1", "hit@1"] == pytest.approx((1 + 3) / 2)
    assert df.loc["c2", "first_rel_rank"] == pytest.approx((2 + 4) / 2)  # median of two
    assert df.loc["c1", "top_score_ratio_answerable"] == pytest.approx((0.1 + 0.3) / 2)
    assert df.loc["c2", "top_score_ratio_unanswerable"] == pytest.approx(1.1)
    assert "nDCG@10" not in df.columns  # no rows: no column, never a plausible 0


def test_arrow_and_pandas_tables_give_the_same_summary_to_the_bit():
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(7)
    rows = [(f"q{q}", f"c{c}", name, float(rng.random()), q % 3 != 0)
            for c in (3, 1, 2) for name in DEFAULT_METRICS for q in range(50)]
    df = pd.DataFrame(rows, columns=["question_id", "config_id", "metric", "value", "answerable"])
    configs = pd.DataFrame({"config_id": ["c1", "c2", "c3"]})
    a = summary_frame(pa.Table.from_pandas(df, preserve_index=False), configs)
    b = summary_frame(df, configs)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    # the mean sums a group's values in table order, exactly as a filter would
    sel = df[(df["config_id"] == "c2") & (df["metric"] == "hit@1") & df["answerable"]]["value"]
    assert a.set_index("config_id").loc["c2", "hit@1"] == float(sel.to_numpy().mean())


def test_printed_rows_are_ranked_keep_single_arm_configs_and_the_service_config():
    from rulegauge.metrics.summary import best_rows

    frame = pd.DataFrame({"config_id": ["arm-a", "g3", "g1", "g2", "g4", "g10"],
                          "hit@1": [0.9, 0.5, 0.7, 0.7, 0.2, 0.7], "first_rel_rank": [9, 1, 2, 3, 4, 5]})
    kinds = ["arm", "grid", "grid", "grid", "grid", "grid"]
    shown, by, best = best_rows(frame, kinds, 3, metric="hit@1")
    # ranked by hit@1, the tie g1 = g2 = g10 in numeric order (g10 after g2, not between g1 and g2)
    assert by == "hit@1" and list(shown["config_id"]) == ["g1", "g2", "arm-a"] and best == "arm-a"
    shown, by, _ = best_rows(frame, kinds, 4, metric="hit@1", service="g4")  # the service always shows
    assert list(shown["config_id"]) == ["g1", "g2", "g4", "arm-a"]
    shown, by, _ = best_rows(frame, kinds, 0, metric="hit@1", service="g4")  # every row, ranked
    assert list(shown["config_id"]) == ["g1", "g2", "g10", "g3", "g4", "arm-a"]
    shown, by, best = best_rows(frame, kinds, 2, metric="nDCG@10")  # not in the frame: its first metric
    assert by == "hit@1" and list(shown["config_id"]) == ["g1", "arm-a"]
    lower, by, best = best_rows(frame[["config_id", "first_rel_rank"]], kinds, 2, metric="first_rel_rank")
    assert by == "first_rel_rank" and list(lower["config_id"]) == ["g3", "arm-a"] and best == "g3"


def test_summary_columns_have_json_safe_names_and_a_legend():
    from rulegauge.metrics.summary import legend

    df = summary_frame(_metrics(["first_rel_rank", "top_score_ratio"]), pd.DataFrame({"config_id": ["c"]}))
    assert all(" " not in c for c in df.columns)
    text = legend(list(df.columns))
    assert "first_rel_rank is the median" in text and "top_score_ratio_unanswerable" in text
    assert legend(["config_id"]) == ""


@pytest.mark.parametrize("layout", ["blocks", "interleaved", "dictionary"])
def test_grouped_values_equal_a_filter_in_table_order(layout):
    # blocks: one run per (config, metric), as a run writes it (no sort); interleaved: runs
    # repeat (the sorting fallback); dictionary: Arrow dictionary columns, as read back
    import numpy as np
    import pyarrow as pa

    from rulegauge.metrics.summary import grouped_values

    rng = np.random.default_rng(3)
    rows = [(f"q{q}", f"c{c}", name, float(rng.random()), bool(rng.random() < 0.7))
            for c in (3, 1, 2) for name in ("hit@1", "MRR@10", "nDCG@10") for q in range(40)]
    df = pd.DataFrame(rows, columns=["question_id", "config_id", "metric", "value", "answerable"])
    if layout == "interleaved":
        df = df.iloc[rng.permutation(len(df))].reset_index(drop=True)
    table = pa.Table.from_pandas(df, preserve_index=False)
    if layout == "dictionary":
        table = table.set_column(1, "config_id", table.column("config_id").dictionary_encode())
    got = grouped_values(table, ["hit@1", "nDCG@10"])
    want = {(c, m, a): g["value"].to_numpy() for (c, m, a), g in df.groupby(["config_id", "metric", "answerable"])
            if m != "MRR@10"}
    assert set(got) == set(want)
    for key, values in want.items():
        np.testing.assert_array_equal(got[key], values, err_msg=str(key))  # same values, same order
    assert grouped_values(pa.Table.from_pandas(df, preserve_index=False), ["hit@1"]).keys() == {
        k for k in want if k[1] == "hit@1"}
