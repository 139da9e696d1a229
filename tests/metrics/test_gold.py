"""Requirement masks (rulegauge.metrics.gold): any-of bitmasks up to 62 requirements, and
questions with more single-page requirements counted page by page (issue 43 item 6)."""

from dataclasses import replace

import pytest

from rulegauge.goldset.records import PageJudgment
from rulegauge.metrics.gold import counted_by_page, requirement_masks
from rulegauge.metrics.ranking import score_ranking
from tests.helpers.common import q


def test_up_to_62_requirements_keep_their_bitmask():
    question = q("q", "x", *[(f"d#{i}",) for i in range(1, 63)])
    masks = requirement_masks(question)
    assert not counted_by_page(question) and masks["d#62"] == 1 << 61 and masks["d#1"] == 1


def test_more_single_page_requirements_are_counted_page_by_page():
    question = q("q", "x", *[(f"d#{i}",) for i in range(1, 101)])
    assert counted_by_page(question) and set(requirement_masks(question).values()) == {1}
    pages = ["d#5", "x#1", "d#7", "d#5", "d#100", "d#300"]  # d#5 twice: a page counts once
    v = score_ranking(pages, question, ["recall@1", "recall@2", "recall@3", "recall@10", "hit@1"])
    assert v == {"recall@1": 1 / 100, "recall@2": 1 / 100, "recall@3": 2 / 100, "recall@10": 3 / 100,
                 "hit@1": 1.0}


def test_a_page_judged_relevant_but_not_required_is_not_a_requirement_met():
    question = q("q", "x", *[(f"d#{i}",) for i in range(1, 71)])
    question = replace(question, judged=(PageJudgment("d", 500, 3, "human", "ann"),))
    v = score_ranking(["d#500", "d#1"], question, ["recall@1", "recall@2", "hit@1"])
    assert v == {"recall@1": 0.0, "recall@2": 1 / 70, "hit@1": 1.0}  # d#500 is relevant, no requirement


def test_many_requirements_with_an_any_of_list_are_refused_by_name():
    question = q("q7", "x", *[(f"d#{i}",) for i in range(1, 63)], ("d#70", "d#71"))
    with pytest.raises(ValueError, match="question q7: 63 requirements with an any-of list; at most 62"):
        requirement_masks(question)
