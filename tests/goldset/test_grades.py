"""Grades and requirement counts bounded where they enter (rulegauge.goldset.grades):
qrels relevance text, a gold set's graded refs, the requirements of one question."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulegauge.core.limits import MAX_ANY_OF_REQUIREMENTS, MAX_GRADE, MAX_REQUIREMENTS
from rulegauge.goldset import grades
from rulegauge.goldset.grades import grade_problem, relevance_problem, requirements_problem
from rulegauge.goldset.judgments import read_qrels_lines
from tests.goldset.test_parse import messages, write


@pytest.mark.parametrize("text", ["0", "1", "3", "10", "-2", "-10", "007"])
def test_relevance_in_range_is_accepted(text):
    assert relevance_problem(text) is None


@pytest.mark.parametrize(("text", "why"), [
    ("\u00b2", "must be an integer (ASCII digits), got '\u00b2'"),
    ("\u0661", "must be an integer (ASCII digits)"),  # ARABIC-INDIC ONE: int() would take it
    ("1_0", "must be an integer (ASCII digits)"),     # int() would take it as 10
    ("+1", "must be an integer (ASCII digits)"),
    ("1.0", "must be an integer (ASCII digits)"),
    ("11", "relevance 11 is outside -10..10"),
    ("-11", "relevance -11 is outside -10..10"),
    ("9" * 5000, "relevance 99999999999999999999... (5,000 characters) is outside -10..10"),
    ("1" + "0" * 400, "is outside -10..10"),
])
def test_relevance_out_of_range_or_not_ascii_is_named(text, why):
    assert why in str(relevance_problem(text))


def test_the_bounds_are_the_documented_ones():
    assert (MAX_GRADE, MAX_REQUIREMENTS, MAX_ANY_OF_REQUIREMENTS) == (10, 10_000, 62)
    assert grade_problem(MAX_GRADE) is None and grade_problem(1) is None
    assert "1..10, got 11" in str(grade_problem(11))
    assert "an integer of about 401 digits" in str(grade_problem(10**400))
    assert grade_problem(True) is not None and grade_problem(2.0) is not None


def test_requirement_counts():
    single = [("p",)] * MAX_ANY_OF_REQUIREMENTS
    assert requirements_problem([*single, ("p",)]) is None  # single pages: counted page by page
    assert requirements_problem(single) is None and requirements_problem([*single[:-1], ("a", "b")]) is None
    assert "63 requirements with an any-of list among them" in str(
        requirements_problem([*single, ("a", "b")]))
    assert "10,001 requirements, above the limit of 10,000" in str(
        requirements_problem([("p",)] * (MAX_REQUIREMENTS + 1)))


def _pages(n: int, any_of: bool = False) -> str:
    refs = [f"pr-rules#{i}" for i in range(1, n + 1)]
    if any_of:
        refs[-1] = f"[pr-rules#{n}, pr-rules#{n + 1}]"
    return "[" + ", ".join(refs) + "]"


def test_validate_accepts_many_single_page_requirements(tmp_path: Path) -> None:
    path = write(tmp_path, f"questions:\n  - {{id: q1, language: en, question: Many?, pages: {_pages(100)}}}\n")
    assert messages(path, check_pages=False) == []


def test_validate_names_the_question_over_the_any_of_limit(tmp_path: Path) -> None:
    path = write(tmp_path, f"questions:\n  - {{id: q1, language: en, question: Many?, pages: "
                           f"{_pages(63, any_of=True)}}}\n")
    found = messages(path, check_pages=False)
    assert len(found) == 1 and "question q1: 63 requirements with an any-of list among them: a question " \
        "with alternative pages holds at most 62" in found[0], found


def test_validate_names_the_question_over_the_requirement_limit(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(grades, "MAX_REQUIREMENTS", 50)
    path = write(tmp_path, f"questions:\n  - {{id: q1, language: en, question: Many?, pages: {_pages(51)}}}\n")
    found = messages(path, check_pages=False)
    assert len(found) == 1 and "question q1: 51 requirements, above the limit of 50" in found[0], found


def test_validate_bounds_grades(tmp_path: Path) -> None:
    path = write(tmp_path, "questions:\n  - {id: q1, language: en, question: G?, pages: "
                           "[{ref: pr-rules#1, grade: 1000000000000000000000000000000}]}\n")
    found = messages(path, check_pages=False)
    assert len(found) == 1 and "question q1: bad graded page ref" in found[0] and "1..10" in found[0], found


@pytest.mark.parametrize(("body", "message"), [
    (b"q1 0 rb#2 \xc2\xb2\n", "q.qrels:1: relevance must be an integer (ASCII digits)"),
    (b"q1 0 rb#2 " + b"9" * 5000 + b"\n", "q.qrels:1: relevance 9999"),
    (b"q1 0 rb#2 1\nq1 0 rb#3 \xff\n", "q.qrels:2: not valid UTF-8"),
])
def test_judgment_qrels_are_read_strictly(tmp_path: Path, body: bytes, message: str) -> None:
    from rulegauge.core.errors import ValidationError

    (tmp_path / "q.qrels").write_bytes(body)
    with pytest.raises(ValidationError, match=None) as err:
        read_qrels_lines(tmp_path / "q.qrels")
    assert message in str(err.value)


def test_judgment_qrels_take_a_bom(tmp_path: Path) -> None:
    (tmp_path / "q.qrels").write_bytes(b"\xef\xbb\xbfq1 0 rb#2 2\n")
    assert read_qrels_lines(tmp_path / "q.qrels") == [("q1", "rb#2", 2, 1)]
