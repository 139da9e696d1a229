"""Explicit judgments in a gold set (``judged:``): records, parsing, validation, writing."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import PageJudgment, PageRef, Question
from rulegauge.goldset.write import DraftQuestion, write_goldset
from tests.goldset.test_parse import messages, write


def question(*judged: PageJudgment, reqs: tuple[tuple[PageRef, ...], ...] = ()) -> Question:
    return Question("q1", "Q?", "en", reqs, judged=judged)


def test_judged_pages_are_requirement_pages_and_explicit_judgments() -> None:
    q = question(PageJudgment("r", 3, 0, "human", "ann"), PageJudgment("r", 4, 2, "llm", "m@p1"),
                 reqs=((PageRef("r", 1), PageRef("r", 2)),))
    assert q.judged_pages() == frozenset({"r#1", "r#2", "r#3", "r#4"})
    # r#3 judged non-relevant: judged, but not relevant; r#4 relevant with its grade
    assert q.relevant_pages == frozenset({"r#1", "r#2", "r#4"})
    assert q.page_grades == {"r#1": 1, "r#2": 1, "r#4": 2}
    assert q.graded and q.llm_only_pages == frozenset({"r#4"})
    assert question().judged_pages() == frozenset() and not question().graded


def test_people_outrank_models_and_several_judges_take_the_lower_median() -> None:
    q = question(PageJudgment("r", 1, 3, "llm", "m"), PageJudgment("r", 1, 0, "human", "ann"),
                 PageJudgment("r", 2, 1, "human", "ann"), PageJudgment("r", 2, 3, "human", "bob"),
                 PageJudgment("r", 2, 2, "human", "cy"))
    assert q.judged_grades == {"r#1": 0, "r#2": 2}
    two = question(PageJudgment("r", 1, 1, "human", "a"), PageJudgment("r", 1, 2, "human", "b"))
    assert two.judged_grades == {"r#1": 1}  # median_low of (1, 2)


def test_listed_page_judged_lower_keeps_its_listed_grade() -> None:
    q = question(PageJudgment("r", 1, 0, "human", "ann"), reqs=((PageRef("r", 1, 2),),))
    assert q.page_grades == {"r#1": 2} and q.relevant_pages == frozenset({"r#1"})


def test_judged_list_loads_in_file_order(tmp_path: Path) -> None:
    path = write(tmp_path, """questions:
  - id: q1
    language: en
    question: "Who starts?"
    pages: [pr-rules#1]
    judged:
      - {ref: pr-rules#2, grade: 0, kind: human, judge: ann, time: 2026-12-01T11:02:07Z,
         note: "  not it "}
      - {ref: pr-rules#2, grade: 2, kind: llm, judge: qwen@p1a2b}
      - {ref: pr-rules#1, grade: 3, kind: human, judge: ann}
""")
    q = load_goldset(path).questions[0]
    assert q.judged == (
        PageJudgment("pr-rules", 2, 0, "human", "ann", "2026-12-01T11:02:07+00:00", "not it"),
        PageJudgment("pr-rules", 2, 2, "llm", "qwen@p1a2b"),
        PageJudgment("pr-rules", 1, 3, "human", "ann"))
    assert q.judged_pages() == frozenset({"pr-rules#1", "pr-rules#2"})
    assert q.relevant_pages == frozenset({"pr-rules#1"})  # ann's 0 outranks the model's 2


@pytest.mark.parametrize(("entry", "fragment"), [
    ("{ref: pr-rules#2, grade: 4, kind: human, judge: ann}", "grade must be an integer 0-3"),
    ("{ref: pr-rules#2, grade: -1, kind: human, judge: ann}", "grade must be an integer 0-3"),
    ("{ref: pr-rules#2, grade: true, kind: human, judge: ann}", "grade must be an integer 0-3"),
    ("{ref: pr-rules#2, grade: 1, kind: robot, judge: ann}", "kind must be one of human, llm"),
    ("{ref: pr-rules#2, grade: 1, kind: human}", "judge must be a non-empty id"),
    ("{ref: pr-rules#2, grade: 1, kind: human, judge: ann, time: yesterday}", "ISO 8601"),
    ("{ref: pr-rules#2, grade: 1, kind: human, judge: ann, colour: red}", "unknown key(s) colour"),
    ("{ref: pr-rule#2, grade: 1, kind: human, judge: ann}", "unknown document 'pr-rule'"),
    ("{ref: pr-rules#9, grade: 1, kind: human, judge: ann}", "page 9 out of range for pr-rules"),
    ("{ref: pr-rules, grade: 1, kind: human, judge: ann}", "bad page ref 'pr-rules'"),
    ("just-a-string", "entry must be a mapping"),
])
def test_bad_judgments_name_file_line_and_question(tmp_path: Path, entry: str,
                                                   fragment: str) -> None:
    path = write(tmp_path, f"""questions:
  - id: q1
    language: en
    question: "Who starts?"
    pages: [pr-rules#1]
    judged:
      - {{ref: pr-rules#3, grade: 1, kind: human, judge: bob}}
      - {entry}
""")
    found = messages(path)
    assert any(m.startswith(f"{path}:12: question q1: ") and fragment in m
               for m in found), found


def test_one_judge_judging_a_page_twice_is_an_error_two_judges_are_not(tmp_path: Path) -> None:
    path = write(tmp_path, """questions:
  - id: q1
    language: en
    question: "Who starts?"
    pages: [pr-rules#1]
    judged:
      - {ref: pr-rules#2, grade: 1, kind: human, judge: ann}
      - {ref: pr-rules#2, grade: 1, kind: human, judge: bob}
      - {ref: pr-rules#2, grade: 2, kind: human, judge: ann}
    """)
    found = messages(path)
    assert found == [f"{path}:13: question q1: judged: pr-rules#2 judged twice by ann "
                     "(first at line 11); one judge judges a page once"]


def test_judged_must_be_a_list(tmp_path: Path) -> None:
    path = write(tmp_path, """questions:
  - {id: q1, language: en, question: "Q?", pages: [], judged: pr-rules#1}
""")
    assert any("question q1: 'judged' must be a list" in m for m in messages(path))


def test_write_emits_judged_and_it_loads_back(tmp_path: Path) -> None:
    src = load_goldset(write(tmp_path, "questions:\n  - {id: q1, language: en, question: Q?, "
                                       "pages: [pr-rules#1]}\n"))
    judged = (PageJudgment("pr-rules", 3, 0, "human", "ann", "2026-12-01T11:02:07+00:00", "no"),
              PageJudgment("pr-rules", 2, 2, "llm", "qwen@p1a2b"))
    out = write_goldset(tmp_path / "new.yaml", "t2", "", [
        {"id": d.doc_id, "path": d.path, "kind": d.kind, "game": d.game, "edition": d.edition,
         "language": d.language} for d in src.documents],
        [DraftQuestion("q1", "Q?", "en", (("pr-rules#1",),), judged=judged)])
    back = load_goldset(out).questions[0]
    assert back.judged == judged
    assert back.judged_pages() == frozenset({"pr-rules#1", "pr-rules#2", "pr-rules#3"})
