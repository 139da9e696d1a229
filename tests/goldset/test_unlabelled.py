"""Questions nobody labelled (``unlabelled: true``) and the digest of what of a question
scores (rulegauge.goldset.question_digest)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.question_digest import question_digest
from rulegauge.goldset.records import PageJudgment, PageRef
from tests.goldset.test_parse import FIXTURES, messages, write


def test_an_unlabelled_question_has_no_requirement_and_is_not_unanswerable_either() -> None:
    gs = load_goldset(FIXTURES / "mini-log.yaml")
    log = gs.question_by_id["log-1"]
    assert (log.labelled, log.answerable, log.requirements, log.tags) == (False, False, (), ("log",))
    assert gs.question_by_id["m-1"].labelled is True


def test_unlabelled_problems_are_named(tmp_path: Path) -> None:
    path = write(tmp_path, """questions:
  - {id: q1, language: en, question: "Both?", pages: [pr-rules#1], unlabelled: true}
  - {id: q2, language: en, question: "Yes?", unlabelled: "yes"}
  - {id: q3, language: en, question: "Neither?"}
  - {id: q4, language: en, question: "Judged?", unlabelled: true,
     judged: [{ref: pr-rules#1, grade: 0, kind: human, judge: a}]}
  - {id: q5, language: en, question: "Fine", unlabelled: true}
""")
    found = messages(path)
    for what in ("question q1: an unlabelled question lists no pages",
                 "question q2: 'unlabelled' must be true or false, got 'yes'",
                 "question q3: missing required field 'pages' (use [] for unanswerable, or "
                 "unlabelled: true for a question nobody labelled)",
                 "question q4: an unlabelled question has no judgments"):
        assert any(what in f for f in found), (what, found)
    assert len(found) == 4


def test_the_digest_follows_what_scores_and_ignores_tags() -> None:
    q = load_goldset(FIXTURES / "mini.yaml").question_by_id["m-2"]
    d = question_digest(q)
    assert len(d) == 16 and d == question_digest(replace(q, tags=("other",)))
    for changed in (replace(q, question="How far, really?"), replace(q, language="de"),
                    replace(q, requirements=((PageRef("pr-errata", 1),),)),
                    replace(q, requirements=((PageRef("pr-errata", 1, 2),), q.requirements[1])),
                    replace(q, judged=(PageJudgment("pr-rules", 2, 0, "human", "a"),)),
                    replace(q, facts=(("two stones",),)), replace(q, labelled=False)):
        assert question_digest(changed) != d
