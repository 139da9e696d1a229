"""End to end: migrate the sample's gold set to the second printing, run on it (lexical arms),
gate against the first printing's baseline through the migrated set; never without it."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from rulegauge.cli import app
from tests.helpers.common import LEXICAL, REPO

runner = CliRunner()
NEW = REPO / "goldsets" / "sample" / "brackwater-rulebook-en2.txt"
BASELINE = REPO / "runs" / "baselines" / "sample"
POLICY = REPO / "docs" / "examples" / "migrate-gate.toml"


@pytest.fixture(scope="module")
def edition2(tmp_path_factory):
    root = tmp_path_factory.mktemp("en2")
    gold = root / "sample-en2.yaml"
    res = runner.invoke(app, ["goldset", "migrate", str(REPO / "goldsets" / "sample.yaml"),
                              "--document", f"bw-rules={NEW}", "-o", str(gold)])
    runs = root / "runs"
    run = runner.invoke(app, ["run", "-g", str(gold), "--allow-outside", "-c", str(LEXICAL),
                              "-o", str(runs), "--run-id", "en2"])
    assert run.exit_code == 0, run.output
    return root, gold, res


def test_migrate_says_what_it_flagged(edition2):
    root, gold, res = edition2
    assert res.exit_code == 1  # written, with labels flagged (held out, listed, to review)
    assert "49 of 57 questions carried" in res.output and "8 flagged" in res.output
    assert "flagged bw-12 bw-rules#5:" in res.output and "candidates: bw-rules#8" in res.output
    review = root / "sample-en2.review.jsonl"
    assert json.loads(review.read_text(encoding="utf-8").splitlines()[0])["questions"] == 8
    assert gold.is_file()


def test_gate_through_the_migrated_gold_set(edition2, tmp_path):
    root, _, _ = edition2
    md = tmp_path / "gate.md"
    res = runner.invoke(app, ["gate", "-b", str(BASELINE), "-r", str(root / "runs" / "en2"),
                              "--policy", str(POLICY), "--markdown", str(md)],
                        env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    assert "old edition against new through the migrated gold set sample" in res.output
    assert "bw-rules 70f6ece1f75d ->" in res.output and "8 question(s) held out" in res.output
    text = md.read_text(encoding="utf-8")
    assert "**old edition against new**" in text and "PASS" in text
    manifest = json.loads((root / "runs" / "en2" / "manifest.json").read_text(encoding="utf-8"))
    mig = manifest["goldset"]["migration"]
    assert mig["source_sha256"] == json.loads((BASELINE / "manifest.json").read_text())["goldset"]["sha256"]


def test_the_same_pages_without_a_migration_are_refused(edition2, tmp_path):
    root, gold, _ = edition2
    raw = yaml.safe_load(gold.read_text(encoding="utf-8"))
    del raw["provenance"]  # the same labels, but no migration says where they came from
    plain = root / "plain.yaml"
    plain.write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    run = runner.invoke(app, ["run", "-g", str(plain), "--allow-outside", "-c", str(LEXICAL),
                              "-o", str(tmp_path), "--run-id", "plain"])
    assert run.exit_code == 0, run.output
    res = runner.invoke(app, ["gate", "-b", str(BASELINE), "-r", str(tmp_path / "plain"),
                              "--policy", str(POLICY)], env={"COLUMNS": "300"})
    assert res.exit_code == 2
    assert "not comparable" in res.output and "rulegauge goldset migrate" in res.output


def _migrate(new, out, *extra):
    return runner.invoke(app, ["goldset", "migrate", str(REPO / "goldsets" / "sample.yaml"),
                               "--document", f"bw-rules={new}", "-o", str(out), *extra])


def test_questions_held_out_with_nothing_flagged_exit_1(tmp_path):
    """A one-page edition merges pages: two questions' requirements fall on one page. No
    label is flagged, yet they are held out, so CI must see it (issue 43 item 22)."""
    one = tmp_path / "one-page.txt"
    one.write_text(NEW.with_name("brackwater-rulebook.txt").read_text(encoding="utf-8").replace("\f", ""),
                   encoding="utf-8")
    res = _migrate(one, tmp_path / "one.yaml")
    assert res.exit_code == 1, res.output
    assert "55 of 57 questions carried" in res.output and "0 flagged" in res.output
    assert "held out bw-09: two of its requirements now fall on one page (pages merged)" in res.output
    assert "2 question(s) held out of one.yaml" in res.output
    assert (tmp_path / "one.yaml").is_file() and not (tmp_path / "one.review.jsonl").exists()


@pytest.mark.parametrize("text", ["", "\f\f\n", "   \n\n"])
def test_an_edition_without_text_is_bad_input_and_writes_nothing(tmp_path, text):
    empty = tmp_path / "empty.txt"
    empty.write_text(text, encoding="utf-8")
    res = _migrate(empty, tmp_path / "new.yaml")
    assert res.exit_code == 2, res.output
    assert f"bw-rules: {empty} has no text" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.txt"]


def test_review_rows_that_review_nothing_are_refused_by_line(edition2, tmp_path):
    rows = [("bw-10", "bw-rules#6"), ("bw-10", "bw-rules#99"), ("bw-02", "bw-rules#2"),
            ("bw-12", "bw-rules#3"), ("q-nope", "bw-rules#3")]
    review = tmp_path / "review.jsonl"
    review.write_text("".join(json.dumps({"question_id": q, "page": p, "grade": 3, "judge_kind": "human",
                                          "judge_id": "ann"}) + "\n" for q, p in rows), encoding="utf-8")
    res = _migrate(NEW, tmp_path / "new.yaml", "--review", str(review))
    assert res.exit_code == 2, res.output
    out = " ".join(res.output.split())
    for line, why in ((2, "question bw-10: page bw-rules#99 is not a page of the new edition "
                          "(bw-rules has 15 pages)"),
                      (3, "question bw-02 has no flagged label in this migration"),
                      (4, "question bw-12: page bw-rules#3 is not among the candidates the review "
                          "file offered for it (bw-rules#8, bw-rules#7)"),
                      (5, "question q-nope is not in the gold set")):
        assert f"review.jsonl:{line}: {why}" in out, out
    assert "review.jsonl:1" not in out and "4 problem(s)" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["review.jsonl"]
