"""Judgments and gold sets as graded qrels, and back (rulegauge.interop.judgment_qrels)."""

from __future__ import annotations

from pathlib import Path

import ir_measures
import pytest

from rulegauge.core.errors import ValidationError
from rulegauge.goldset.judgments import Judgment
from rulegauge.goldset.labels import from_goldset, from_judgments
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import PageJudgment
from rulegauge.interop.judgment_qrels import judgments_from_qrels, write_label_qrels
from tests.helpers.common import REPO

SAMPLE = REPO / "goldsets" / "sample.yaml"


def test_export_writes_grades_zero_included_and_marks_llm_pairs(tmp_path: Path) -> None:
    js = [Judgment("bw-14", PageJudgment("bw-faq", 2, 0, "human", "ann")),
          Judgment("bw-14", PageJudgment("bw-faq", 2, 3, "llm", "m@p")),  # people win
          Judgment("bw-01", PageJudgment("bw-rules", 3, 2, "llm", "m@p"))]
    path, marks = write_label_qrels(from_judgments(js, "j"), tmp_path / "q.txt")
    assert path.read_text() == "bw-01 0 bw-rules#3 2\nbw-14 0 bw-faq#2 0\n"
    assert marks is not None and marks.read_text() == "bw-01 bw-rules#3\n"
    # ir_measures reads it as graded qrels, the 0 line as judged
    qrels = list(ir_measures.read_trec_qrels(str(path)))
    assert [(q.query_id, q.doc_id, q.relevance) for q in qrels] == [
        ("bw-01", "bw-rules#3", 2), ("bw-14", "bw-faq#2", 0)]


def test_gold_set_qrels_round_trip_through_import(tmp_path: Path) -> None:
    gs = load_goldset(SAMPLE)
    labels = from_goldset(gs)
    path, marks = write_label_qrels(labels, tmp_path / "gold.qrels")
    assert marks is None
    back = judgments_from_qrels(path, "gold", "human", goldset=gs)
    assert {j.pair: j.judgment.grade for j in back} == labels.grades
    assert all(j.goldset_sha256 == gs.sha256 for j in back)


def test_bad_qrels_lines_are_all_reported(tmp_path: Path) -> None:
    p = tmp_path / "bad.qrels"
    p.write_text("bw-01 0 bw-rules#3 4\nbw-01 0 bw-rules 1\nbw-99 0 bw-rules#2 1\n"
                 "bw-01 0 bw-rules#40 1\nbw-01 0 bw-rules#5 1\nbw-01 0 bw-rules#5 2\n")
    with pytest.raises(ValidationError) as err:
        judgments_from_qrels(p, "ann", "human", goldset=load_goldset(SAMPLE))
    found = [str(x) for x in err.value.problems]
    assert found == [f"{p}:1: relevance 4 outside 0-3",
                     f"{p}:2: docid 'bw-rules' is not a page id 'doc#page'",
                     f"{p}:6: question bw-01: bw-rules#5 listed twice (first at line 5)",
                     f"{p}:3: unknown question 'bw-99' (not in {SAMPLE.resolve()})",
                     f"{p}:4: question bw-01: page 40 out of range for bw-rules (1-12)"]
    with pytest.raises(ValidationError, match="kind must be one of human, llm"):
        judgments_from_qrels(p, "ann", "robot")
