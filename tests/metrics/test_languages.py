"""Per-language metric table: means over answerable questions, counts, order, rendering."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest
from rich.console import Console

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.languages import language_table, print_language_table

QUESTIONS = pd.DataFrame({
    "question_id": ["q1", "q2", "q3", "q4", "q5"],
    "language": ["ru", "ru", "de", "en", "de"],
    "answerable": [True, True, True, True, False],
})
# (question, config, metric) -> value; q5 is unanswerable and must not count
VALUES = {
    ("q1", "rrf_k60_bm25+dense", "recall@5"): 1.0, ("q2", "rrf_k60_bm25+dense", "recall@5"): 0.5,
    ("q3", "rrf_k60_bm25+dense", "recall@5"): 0.0, ("q4", "rrf_k60_bm25+dense", "recall@5"): 1.0,
    ("q5", "rrf_k60_bm25+dense", "recall@5"): 0.0,
    ("q1", "arm-dense", "recall@5"): 1.0, ("q2", "arm-dense", "recall@5"): 1.0,
    ("q3", "arm-dense", "recall@5"): 0.5, ("q4", "arm-dense", "recall@5"): 0.0,
    ("q5", "arm-dense", "recall@5"): 0.0,
}
for (qid, cid, _), v in list(VALUES.items()):
    VALUES[(qid, cid, "hit@5")] = float(v > 0)
    VALUES[(qid, cid, "first_rel_rank")] = {"q1": 1.0, "q2": 4.0, "q3": 9.0, "q4": 2.0,
                                            "q5": math.inf}[qid]


def metrics() -> pd.DataFrame:
    rows = [{"question_id": q, "config_id": c, "metric": m, "value": v,
             "answerable": q != "q5"} for (q, c, m), v in VALUES.items()]
    return pd.DataFrame(rows)


def test_means_counts_and_order() -> None:
    t = language_table(metrics(), QUESTIONS)
    assert list(t.columns) == ["config_id", "language", "n", "recall@5", "hit@5"]
    assert list(zip(t["config_id"], t["language"], strict=True)) == [
        ("rrf_k60_bm25+dense", "de"), ("rrf_k60_bm25+dense", "en"), ("rrf_k60_bm25+dense", "ru"),
        ("arm-dense", "de"), ("arm-dense", "en"), ("arm-dense", "ru")]
    row = t.set_index(["config_id", "language"])
    assert row.loc[("rrf_k60_bm25+dense", "ru"), "recall@5"] == pytest.approx((1.0 + 0.5) / 2)
    assert row.loc[("rrf_k60_bm25+dense", "ru"), "n"] == 2
    assert row.loc[("rrf_k60_bm25+dense", "de"), "n"] == 1  # q5 (unanswerable) left out
    assert row.loc[("rrf_k60_bm25+dense", "de"), "hit@5"] == 0.0
    assert row.loc[("arm-dense", "de"), "recall@5"] == pytest.approx(0.5)


def test_median_family_and_missing_also_metric() -> None:
    t = language_table(metrics(), QUESTIONS, "first_rel_rank", also=("nDCG@10",))
    assert list(t.columns) == ["config_id", "language", "n", "first_rel_rank"]
    ru = t[(t["config_id"] == "arm-dense") & (t["language"] == "ru")]
    assert ru["first_rel_rank"].item() == pytest.approx((1.0 + 4.0) / 2)  # median of two


def test_a_language_with_only_unanswerable_questions_gets_no_row() -> None:
    q = QUESTIONS.assign(language=["ru", "ru", "de", "en", "fa"])
    assert "fa" not in set(language_table(metrics(), q)["language"])


def test_errors_name_the_choices() -> None:
    with pytest.raises(RulegaugeError, match="has: first_rel_rank, hit@5, recall@5"):
        language_table(metrics(), QUESTIONS, "recall@10")
    with pytest.raises(RulegaugeError, match="q5"):
        language_table(metrics(), QUESTIONS[QUESTIONS["question_id"] != "q5"])


def test_rendering() -> None:
    buf = io.StringIO()
    print_language_table(language_table(metrics(), QUESTIONS),
                         Console(file=buf, width=160, color_system=None))
    out = buf.getvalue()
    assert "ru (n=2)" in out and "de (n=1)" in out
    assert f"{(1.0 + 0.5) / 2:.3f}/{1.0:.3f}" in out
    assert "arm-dense" in out
