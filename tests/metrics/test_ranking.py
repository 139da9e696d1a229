"""Page-level metrics: formulas, canonical names, defaults."""

import math

import pytest

from rulegauge.core.errors import RegistryError
from rulegauge.goldset.records import PageRef, Question
from rulegauge.metrics.family import METRICS
from rulegauge.metrics.ranking import DEFAULT_METRICS, parse, score_ranking
from tests.helpers.common import q


@pytest.mark.parametrize("name", ["hit@5", "recall@10", "P@3", "MRR@10", "nDCG@10",
                                  "first_rel_rank", "top_score", "top_score_ratio", *DEFAULT_METRICS])
def test_canonical_names_round_trip(name):
    assert parse(name).name == name
    assert parse(parse(name).name).name == name


def test_parse_canonicalises_case_and_rejects_bad_names():
    assert parse("ndcg@10").name == "nDCG@10"
    assert parse("mrr@10").name == "MRR@10"
    with pytest.raises(RegistryError, match="families"):
        parse("bogus@3")
    with pytest.raises(RegistryError, match="needs a cutoff"):
        parse("recall")
    with pytest.raises(RegistryError, match="takes no cutoff"):
        parse("top_score@3")


def test_values_follow_the_formulas():
    question = q("q", "x", ("d#2",), ("d#4", "d#5"))  # one any-of requirement
    pages = ["d#1", "d#5", "d#1", "d#2", "d#9"]  # duplicate d#1 collapses
    v = score_ranking(pages, question, ["hit@1", "hit@2", "recall@2", "recall@3", "P@2",
                                        "MRR@10", "nDCG@10", "first_rel_rank"])
    assert v["hit@1"] == 0.0 and v["hit@2"] == 1.0
    assert v["recall@2"] == 1 / 2 and v["recall@3"] == 2 / 2
    assert v["P@2"] == 1 / 2
    assert v["MRR@10"] == 1 / 2
    dcg = 1 / math.log2(2 + 1) + 1 / math.log2(3 + 1)
    idcg = 1 / math.log2(1 + 1) + 1 / math.log2(2 + 1) + 1 / math.log2(3 + 1)  # 3 relevant pages
    assert v["nDCG@10"] == pytest.approx(dcg / idcg, abs=1e-15)
    assert v["first_rel_rank"] == 2.0


def test_no_hits_scores_defaults():
    question = q("q", "x", ("d#2",))
    v = score_ranking([], question, ["hit@5", "recall@5", "MRR@10", "nDCG@10", "first_rel_rank"])
    assert v == {"hit@5": 0.0, "recall@5": 0.0, "MRR@10": 0.0, "nDCG@10": 0.0,
                 "first_rel_rank": math.inf}


def test_directions_come_from_registry():
    assert METRICS.get("first_rel_rank").higher_is_better is False
    assert parse("recall@5").higher_is_better


def _graded(qid: str, *reqs: tuple[tuple[str, int | None], ...]) -> Question:
    """A question whose refs carry grades: each req is ((doc#page, grade or None), ...)."""
    parsed = tuple(tuple(PageRef(r.split("#")[0], int(r.split("#")[1]), g) for r, g in req)
                   for req in reqs)
    return Question(qid, "x", "en", parsed, game="G")


def test_map_follows_the_trec_eval_formula():
    question = q("q", "x", ("d#2",), ("d#4", "d#5"))  # 3 relevant pages
    pages = ["d#1", "d#5", "d#1", "d#2", "d#9"]  # distinct: d#1 d#5 d#2 d#9, relevant at 2 and 3
    v = score_ranking(pages, question, ["MAP@1", "MAP@2", "MAP@10", "AP@10", "map@10"])
    assert v["MAP@1"] == 0.0
    assert v["MAP@2"] == pytest.approx((1 / 2) / 3, abs=1e-15)
    assert v["MAP@10"] == pytest.approx((1 / 2 + 2 / 3) / 3, abs=1e-15)  # divided by R, not min(R, k)
    assert set(v) == {"MAP@1", "MAP@2", "MAP@10"}  # AP@10 and map@10 are MAP@10


def test_graded_ndcg_uses_linear_gains_and_the_ideal_order():
    question = _graded("q", (("d#2", 3),), (("d#4", None), ("d#5", 2)))
    pages = ["d#1", "d#5", "d#2", "d#9"]
    v = score_ranking(pages, question, ["nDCG@2", "nDCG@10", "hit@2", "MAP@10"])
    ideal = [3, 2, 1]  # d#4 has no grade: 1
    dcg10 = 2 / math.log2(3) + 3 / math.log2(4)
    idcg10 = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    assert v["nDCG@10"] == pytest.approx(dcg10 / idcg10, abs=1e-15)
    assert v["nDCG@2"] == pytest.approx((2 / math.log2(3)) / (3 + 2 / math.log2(3)), abs=1e-15)
    # grades matter to nDCG only
    assert v["hit@2"] == 1.0 and v["MAP@10"] == pytest.approx((1 / 2 + 2 / 3) / 3, abs=1e-15)


def test_all_grades_one_equals_binary_ndcg():
    binary = q("q", "x", ("d#2",), ("d#4", "d#5"))
    ones = _graded("q", (("d#2", 1),), (("d#4", 1), ("d#5", 1)))
    pages = ["d#1", "d#5", "d#2", "d#9"]
    assert score_ranking(pages, ones, ["nDCG@3", "nDCG@10"]) == \
        pytest.approx(score_ranking(pages, binary, ["nDCG@3", "nDCG@10"]), abs=1e-15)


@pytest.mark.parametrize(("alias", "canonical"), [
    ("Success@5", "hit@5"), ("hit_rate@5", "hit@5"), ("RR@10", "MRR@10"), ("mrr@10", "MRR@10"),
    ("recip_rank", "recip_rank"), ("RR", "recip_rank"), ("R@5", "R@5"), ("recall_5", "R@5"),
    ("recall@5", "recall@5"), ("P@5", "P@5"), ("P_5", "P@5"), ("precision@5", "P@5"), ("nDCG@10", "nDCG@10"),
    ("ndcg_cut_10", "nDCG@10"), ("ndcg_cut@10", "nDCG@10"), ("map@10", "MAP@10"), ("AP@10", "MAP@10"),
    ("map_cut_10", "MAP@10"), ("map_cut@10", "MAP@10"), ("success_5", "hit@5")])
def test_other_tools_names_map_to_canonical_names(alias, canonical):
    assert parse(alias).name == canonical


def test_answer_metrics_are_not_ranking_metrics():
    with pytest.raises(RegistryError, match="unknown metric 'fence_pass'"):
        parse("fence_pass")
