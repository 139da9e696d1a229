"""Page-level metrics: formulas, canonical names, defaults."""

import math

import pytest

from harness.core.errors import RegistryError
from harness.metrics.ranking import DEFAULT_METRICS, METRICS, parse, score_ranking
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
    assert not METRICS.get("first_rel_rank").higher_is_better
    assert parse("recall@5").higher_is_better
