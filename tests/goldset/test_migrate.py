"""``goldset migrate`` on the sample: every label of the sample carried to the second printing
correctly (the hand-written true mapping) or flagged, never wrong; a review carries the rest."""

from __future__ import annotations

import pytest
import yaml

from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import ValidationError
from rulegauge.corpus.records import split_page_key
from rulegauge.goldset.judgments import Judgment, write_judgments
from rulegauge.goldset.migrate import migrate, migration_summary, parse_documents
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import PageJudgment
from rulegauge.judging.migration_review import review_pool
from rulegauge.judging.poolfile import read_pool, write_pool
from tests.helpers.common import REPO
from tests.helpers.edition_truth import edition_truth

GOLD = REPO / "goldsets" / "sample.yaml"
OLD = REPO / "goldsets" / "sample" / "brackwater-rulebook.txt"
NEW = REPO / "goldsets" / "sample" / "brackwater-rulebook-en2.txt"
TRUTH, true_page = edition_truth("brackwater-en2")


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    out = tmp_path_factory.mktemp("mig") / "sample-en2.yaml"
    return migrate(GOLD, {"bw-rules": NEW}, out)


def test_every_label_is_carried_right_or_flagged(migrated):
    gold = load_goldset(GOLD)
    labels = {(m.question_id, m.old): m for m in migrated.labels}
    every = {(q.question_id, str(r)) for q in gold.questions for req in q.requirements for r in req}
    assert set(labels) == every
    wrong = [(k, m.new) for k, m in labels.items() if m.carried and m.new != (true_page(*k),)]
    assert wrong == []
    flagged = sorted(k for k, m in labels.items() if not m.carried)
    # the flags: the errata'd hand limit (bw-12/13/42), sentences whose page references were
    # renumbered (bw-01, bw-45), a split page no sentence decides (bw-10) or two parts tie (bw-28, bw-46)
    assert {q for q, _ in flagged} == {"bw-01", "bw-10", "bw-12", "bw-13", "bw-28", "bw-42", "bw-45",
                                       "bw-46"}
    assert all(old.startswith("bw-rules#") for _, old in flagged)
    # every flagged label's true page is among its review candidates
    assert all(true_page(*k) in labels[k].candidates for k in flagged)
    carried = [m for m in labels.values() if m.carried and m.how != "document unchanged"]
    assert len(carried) >= 45 and all(m.confidence is not None and m.confidence >= 0.8 for m in carried)
    assert {m.how for m in carried} >= {"kept", "moved", "split: answering sentence"}


def test_the_new_version_and_its_provenance(migrated):
    new = load_goldset(migrated.path, allow_outside=True)
    held = {q for q, _ in migrated.held_out}
    assert {q.question_id for q in new.questions} == {q.question_id for q in migrated.source.questions} - held
    for q in new.questions:  # the labels are the true pages
        old = migrated.source.question_by_id[q.question_id]
        for req_old, req_new in zip(old.requirements, q.requirements, strict=True):
            assert [str(r) for r in req_new] == [true_page(q.question_id, str(r)) for r in req_old]
    assert {d.doc_id: d.path for d in new.documents}["bw-rules"] == str(NEW)
    prov = yaml.safe_load(migrated.path.read_text(encoding="utf-8"))["provenance"]
    assert prov["source"]["sha256"] == file_sha256(GOLD)
    doc = prov["documents"][0]
    assert (doc["old"]["sha256"], doc["new"]["sha256"]) == (file_sha256(OLD), file_sha256(NEW))
    assert (doc["old"]["pages"], doc["new"]["pages"], doc["inserted"]) == (12, 15, [2, 14])
    assert prov["method"]["name"] == "shingle-containment" and prov["method"]["version"] == 1
    assert {p["old"]: p["kind"] for p in doc["pages"]}[10] == "moved"
    assert len(prov["labels"]) == len(migrated.labels)
    summary = migration_summary(new)
    assert summary is not None and summary["source_sha256"] == file_sha256(GOLD)
    assert summary["documents"] == {"bw-rules": {"old_sha256": file_sha256(OLD), "new_sha256": file_sha256(NEW)}}
    assert summary["held_out"] == sorted(held)
    assert summary["labels"]["bw-32 bw-rules#10"] == "bw-rules#5"
    assert "bw-10 bw-rules#6" not in summary["labels"]  # its question is held out
    assert migration_summary(migrated.source) is None


def test_a_review_carries_the_flagged_labels(migrated, tmp_path):
    pool_path = write_pool(review_pool(migrated), tmp_path / "review.jsonl")
    pool = read_pool(pool_path)
    assert pool.goldset_sha256 == migrated.source.sha256
    assert {q.question_id for q in pool.questions} == {q for q, _ in migrated.held_out}
    # a reviewer grades each candidate: 3 for the true page, 0 for the others
    true = {(m.question_id, true_page(m.question_id, m.old)) for m in migrated.flagged}
    js = [Judgment(p.question_id, PageJudgment(*split_page_key(p.page),
                                               3 if (p.question_id, p.page) in true else 0, "human", "ann"),
                   goldset_sha256=pool.goldset_sha256) for p in pool.pages]
    review = write_judgments(tmp_path / "review.judgments.jsonl", js)
    again = migrate(GOLD, {"bw-rules": NEW}, tmp_path / "reviewed.yaml", review=review)
    assert again.flagged == () and again.held_out == () and again.carried == 57
    assert all(m.new == (true_page(m.question_id, m.old),) for m in again.labels)
    assert again.reviewed == len(migrated.flagged)
    # judgments of another gold set are refused
    bad = write_judgments(tmp_path / "other.jsonl", [Judgment(js[0].question_id, js[0].judgment,
                                                              goldset_sha256="0" * 64)])
    with pytest.raises(ValidationError, match="another gold set"):
        migrate(GOLD, {"bw-rules": NEW}, tmp_path / "x.yaml", review=bad)


def test_bad_input_is_refused_before_writing(tmp_path):
    with pytest.raises(ValidationError) as err:
        migrate(GOLD, {"bw-rulez": NEW, "bw-faq": tmp_path / "missing.md"}, tmp_path / "o.yaml")
    text = str(err.value)
    assert "unknown document 'bw-rulez'" in text and "file not found" in text
    with pytest.raises(ValidationError, match="same file"):
        migrate(GOLD, {"bw-rules": OLD}, tmp_path / "o.yaml")
    with pytest.raises(ValidationError, match="new file"):
        migrate(GOLD, {"bw-rules": NEW}, GOLD)
    with pytest.raises(ValidationError, match="ID=NEW_FILE"):
        parse_documents(["bw-rules"])
    assert not (tmp_path / "o.yaml").exists()
