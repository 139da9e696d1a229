"""rulegauge goldset merge (rulegauge.goldset.merge) and label sets (rulegauge.goldset.labels)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import ValidationError
from rulegauge.goldset.judgments import Judgment, write_judgments
from rulegauge.goldset.labels import from_goldset, from_judgments, load_labels, overlay
from rulegauge.goldset.merge import merge_judgments
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import PageJudgment
from tests.helpers.judging import sample_copy


def judgments(path: Path, sha: str = "") -> Path:
    return write_judgments(path, [
        Judgment("bw-14", PageJudgment("bw-faq", 2, 0, "human", "ann", "2026-12-01T11:00:00Z",
                                       "the wrong FAQ rule"), 4.0, sha),
        Judgment("bw-14", PageJudgment("bw-faq", 2, 0, "human", "bob"), None, sha),
        Judgment("bw-14", PageJudgment("bw-rules", 12, 1, "llm", "qwen@judge-v1:3f9c")),
        Judgment("bw-14", PageJudgment("bw-rules", 5, 0, "human", "bob")),
        Judgment("bw-01", PageJudgment("bw-rules", 3, 2, "human", "ann"))])


def test_merge_writes_judged_lists_and_provenance(tmp_path: Path) -> None:
    gold = sample_copy(tmp_path)
    before = load_goldset(gold)
    jf = judgments(tmp_path / "j.jsonl", before.sha256)
    out = tmp_path / "goldsets" / "sample-v2.yaml"
    r = merge_judgments(gold, [jf], out)
    assert (r.added, r.already_present) == (5, 0)
    assert r.grades == ((0, 3), (1, 1), (2, 1))
    assert r.judges == (("ann", "human", 2), ("bob", "human", 2), ("qwen@judge-v1:3f9c", "llm", 1))
    assert r.listed_judged_zero == ("bw-14: bw-rules#5 by bob",)  # a possible gold-set error
    new = load_goldset(out)  # beside the source: no --allow-outside needed
    q = new.question_by_id["bw-14"]
    assert q.judged_pages() == before.question_by_id["bw-14"].judged_pages() | {
        "bw-faq#2", "bw-rules#12"}
    assert q.judged_grades["bw-faq#2"] == 0 and "bw-faq#2" not in q.relevant_pages
    assert q.llm_only_pages == frozenset({"bw-rules#12"}) and "bw-rules#12" in q.relevant_pages
    assert "bw-rules#5" in q.relevant_pages  # listed pages stay relevant
    assert new.question_by_id["bw-01"].page_grades["bw-rules#3"] == 2
    prov = new.extra["provenance"]
    assert prov["source"] == {"path": "sample.yaml", "goldset": "sample", "sha256": before.sha256}
    assert prov["judgments"] == [{"path": str(jf), "sha256": file_sha256(jf), "rows": 5}]
    assert {j["id"] for j in prov["judges"]} == {"ann", "bob", "qwen@judge-v1:3f9c"}
    # questions without judgments are unchanged
    assert new.question_by_id["bw-02"] == before.question_by_id["bw-02"]


def test_merging_twice_adds_nothing_and_chains_provenance(tmp_path: Path) -> None:
    gold = sample_copy(tmp_path)
    jf = judgments(tmp_path / "j.jsonl")
    v2 = merge_judgments(gold, [jf], tmp_path / "goldsets" / "v2.yaml").path
    r = merge_judgments(v2, [jf], tmp_path / "goldsets" / "v3.yaml")
    assert (r.added, r.already_present) == (0, 5)
    v3 = load_goldset(r.path)
    assert v3.extra["provenance"]["previous"]["source"]["sha256"] == load_goldset(gold).sha256
    assert [q.judged for q in v3.questions] == [q.judged for q in load_goldset(v2).questions]


def test_a_conflicting_grade_and_a_foreign_gold_set_are_refused(tmp_path: Path) -> None:
    gold = sample_copy(tmp_path)
    v2 = merge_judgments(gold, [judgments(tmp_path / "j.jsonl")],
                         tmp_path / "goldsets" / "v2.yaml").path
    bad = tmp_path / "bad.jsonl"
    write_judgments(bad, [Judgment("bw-01", PageJudgment("bw-rules", 3, 3, "human", "ann")),
                          Judgment("bw-02", PageJudgment("bw-rules", 3, 3, "human", "ann"),
                                   goldset_sha256="0" * 64)])
    out = tmp_path / "goldsets" / "v3.yaml"
    with pytest.raises(ValidationError) as err:
        merge_judgments(v2, [bad], out)
    found = [str(p) for p in err.value.problems]
    # every problem at once, in line order (house rule 12): line 1's conflict, line 2's hash
    assert found[0].startswith(f"{bad}:1: question bw-01: ann graded bw-rules#3 3 here")
    assert found[1].startswith(f"{bad}:2: judged against another gold set")
    assert len(found) == 2
    write_judgments(bad, [Judgment("bw-01", PageJudgment("bw-rules", 3, 3, "human", "ann"))])
    with pytest.raises(ValidationError) as err:
        merge_judgments(v2, [bad], out)
    assert str(err.value.problems[0]) == (f"{bad}:1: question bw-01: ann graded bw-rules#3 3 here "
                                          f"but 2 in {v2.resolve()}; one judge judges a page once")
    assert not out.exists()


def test_merge_into_another_folder_rewrites_document_paths(tmp_path: Path) -> None:
    gold = sample_copy(tmp_path)
    out = tmp_path / "elsewhere" / "v2.yaml"
    merge_judgments(gold, [judgments(tmp_path / "j.jsonl")], out)
    raw = yaml.safe_load(out.read_text())
    assert raw["documents"][0]["path"] == "../goldsets/sample/brackwater-rulebook.txt"
    assert load_goldset(out, allow_outside=True).documents == load_goldset(gold).documents


def test_label_sets_from_gold_sets_and_judgments(tmp_path: Path) -> None:
    gold = sample_copy(tmp_path)
    jf = judgments(tmp_path / "j.jsonl")
    gs = load_goldset(gold)
    g = from_goldset(gs)
    assert g.grades[("bw-14", "bw-rules#5")] == 1 and ("bw-14", "bw-faq#2") not in g.grades
    j = load_labels(jf)
    assert j.kind == "judgments" and j.questions == frozenset({"bw-01", "bw-14"})
    assert j.grades == {("bw-01", "bw-rules#3"): 2, ("bw-14", "bw-faq#2"): 0,
                        ("bw-14", "bw-rules#12"): 1, ("bw-14", "bw-rules#5"): 0}
    assert j.llm == frozenset({("bw-14", "bw-rules#12")})
    assert from_judgments([], "x", "ann").grades == {}
    both = overlay(g, j)
    assert both.grades[("bw-14", "bw-rules#5")] == 0 and both.questions == g.questions
    merged = load_labels(merge_judgments(gold, [jf], tmp_path / "goldsets" / "v2.yaml").path)
    assert merged.grades[("bw-14", "bw-faq#2")] == 0  # judged non-relevant, now labelled
    assert merged.llm == frozenset({("bw-14", "bw-rules#12")})
    assert json.loads(jf.read_text().splitlines()[0])["note"] == "the wrong FAQ rule"


def test_merge_takes_a_graded_qrels_file_with_the_judge_from_the_flag(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rulegauge.cli import app

    gold = sample_copy(tmp_path)
    qrels = tmp_path / "ann.qrels"  # what `rulegauge judges export`, ranx and trec_eval exchange
    qrels.write_text("bw-14 0 bw-faq#2 0\nbw-01 0 bw-rules#3 2\n", encoding="utf-8")
    out = tmp_path / "goldsets" / "sample-v2.yaml"
    r = merge_judgments(gold, [qrels], out)  # judge id: the file's stem
    assert (r.added, r.grades, r.judges) == (2, ((0, 1), (2, 1)), (("ann", "human", 2),))
    merged = load_goldset(out)
    judged = {(j.key, j.grade, j.judge_id) for j in merged.question_by_id["bw-01"].judged}
    assert ("bw-rules#3", 2, "ann") in judged
    res = CliRunner().invoke(app, ["goldset", "merge", str(gold), str(qrels), "--judge", "qwen-judge",
                                   "--kind", "llm", "-o", str(tmp_path / "goldsets" / "v3.yaml")])
    assert res.exit_code == 0, res.output
    assert "2 judgments added" in res.output and "qwen-judge (llm) 2" in res.output
    bad = tmp_path / "bad.qrels"
    bad.write_text("bw-01 0 bw-rules#3 2\nbw-01 0 rules-3 1\nbw-02 0 bw-rules#4 7\nnope 0 bw-rules#1 1\n",
                   encoding="utf-8")
    res = CliRunner().invoke(app, ["goldset", "merge", str(gold), str(bad), "-o", str(tmp_path / "x.yaml")])
    assert res.exit_code == 2 and "Traceback" not in res.output
    for fragment in (f"{bad}:2", "is not a page id", f"{bad}:3", "relevance 7 outside 0-3"):
        assert fragment in res.output, fragment
    assert not (tmp_path / "x.yaml").exists()


def test_every_problem_of_every_line_at_once_in_line_order(tmp_path: Path) -> None:
    # issue 33 (9): bad lines, unknown questions and pages out of range reported together
    gold = sample_copy(tmp_path)
    bad = tmp_path / "bad.jsonl"
    row = '{{"question_id": "{q}", "page": "{p}", "grade": {g}, "judge_kind": "human", "judge_id": "ann"}}\n'
    bad.write_text(row.format(q="bw-01", p="bw-rules#3", g=7) + "[1]\n"
                   + row.format(q="zz-99", p="bw-rules#3", g=1)
                   + row.format(q="bw-01", p="bw-rules#999", g=1), encoding="utf-8")
    with pytest.raises(ValidationError) as err:
        merge_judgments(gold, [bad], tmp_path / "v2.yaml")
    assert [p.where for p in err.value.problems] == [f"{bad}:{n}" for n in (1, 2, 3, 4)]
    assert "unknown question 'zz-99'" in str(err.value) and "page 999 out of range" in str(err.value)
