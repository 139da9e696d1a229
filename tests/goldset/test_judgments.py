"""Judgments files (rulegauge.goldset.judgments): reading, checks against a gold set, appending."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rulegauge.core.errors import ValidationError
from rulegauge.goldset.judgments import (
    Judgment,
    append_judgment,
    check_judgments,
    load_judgments,
    read_judgments,
)
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import PageJudgment
from tests.helpers.common import REPO

SAMPLE = REPO / "goldsets" / "sample.yaml"


def row(**kw: object) -> str:
    base: dict[str, object] = {"question_id": "bw-01", "page": "bw-rules#3", "grade": 1,
                               "judge_kind": "human", "judge_id": "ann"}
    return json.dumps({**base, **kw})


def test_rows_read_in_order_with_their_lines(tmp_path: Path) -> None:
    p = tmp_path / "j.jsonl"
    p.write_text(row() + "\n\n" + row(page="bw-rules#4", grade=0, judge_kind="llm",
                                      judge_id="qwen@p1", seconds=2.5, note="n") + "\n")
    a, b = read_judgments(p)
    assert a == Judgment("bw-01", PageJudgment("bw-rules", 3, 1, "human", "ann"))
    assert a.where == f"{p}:1" and b.where == f"{p}:3"
    assert b.judgment == PageJudgment("bw-rules", 4, 0, "llm", "qwen@p1", "", "n")
    assert b.seconds == 2.5 and b.pair == ("bw-01", "bw-rules#4")


def test_every_bad_line_is_reported_with_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "j.jsonl"
    p.write_text("\n".join([row(), "{not json", row(grade=4), row(page="bw-rules"),
                            row(judge_kind="robot"), row(question_id=""), row(colour=1),
                            row(grade=2)]) + "\n")
    with pytest.raises(ValidationError) as err:
        read_judgments(p)
    found = [str(x) for x in err.value.problems]
    assert found[0].startswith(f"{p}:2: invalid JSON")
    assert any(m.startswith(f"{p}:3: grade must be an integer 0-3") for m in found)
    assert any(m.startswith(f"{p}:4: page must be a page id") for m in found)
    assert any(m.startswith(f"{p}:5: judge_kind must be one of human, llm") for m in found)
    assert any(m.startswith(f"{p}:6: question_id must be") for m in found)
    assert any(m.startswith(f"{p}:7: unknown key(s) colour") for m in found)
    assert found[-1] == f"{p}:8: question bw-01: bw-rules#3 judged twice by ann (first at {p}:1)"


def test_checked_against_the_gold_set(tmp_path: Path) -> None:
    gs = load_goldset(SAMPLE)
    p = tmp_path / "j.jsonl"
    p.write_text("\n".join([row(question_id="bw-99"), row(page="bw-rule#1"),
                            row(page="bw-rules#13"), row(page="bw-faq#1", goldset_sha256="ab" * 32),
                            row(page="bw-faq#2", goldset_sha256=gs.sha256)]) + "\n")
    found = [str(x) for x in check_judgments(read_judgments(p), gs)]
    assert found[0] == f"{p}:1: unknown question 'bw-99' (not in {gs.path})"
    assert found[1].startswith(f"{p}:2: question bw-01: unknown document 'bw-rule'")
    assert found[2] == f"{p}:3: question bw-01: page 13 out of range for bw-rules (1-12)"
    assert found[3].startswith(f"{p}:4: judged against another gold set")
    assert len(found) == 4


def test_one_judge_twice_across_files_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(row() + "\n")
    (tmp_path / "b.jsonl").write_text(row(grade=2) + "\n" + row(judge_id="bob") + "\n")
    with pytest.raises(ValidationError) as err:
        load_judgments([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], load_goldset(SAMPLE))
    assert [str(x) for x in err.value.problems] == [
        f"{tmp_path / 'b.jsonl'}:1: question bw-01: bw-rules#3 judged twice by ann "
        f"(first at {tmp_path / 'a.jsonl'}:1)"]


def test_append_writes_whole_lines_that_read_back(tmp_path: Path) -> None:
    p = tmp_path / "j.jsonl"
    made = [Judgment("bw-01", PageJudgment("bw-rules", n, n % 4, "human", "ann",
                                           "2026-12-01T11:00:00Z"), seconds=1.5)
            for n in range(1, 6)]
    for j in made:
        append_judgment(p, j)
    assert p.read_text().count("\n") == 5 and p.read_text().endswith("\n")
    assert read_judgments(p) == made
    assert read_judgments(tmp_path / "none.jsonl", missing_ok=True) == []
