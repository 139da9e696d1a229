"""The condensed-list variant of a metric keeps every other parameter of the metric."""

import pytest

from rulegauge.regression.unjudged import condensed_of


@pytest.mark.parametrize(("metric", "condensed"), [
    ("nDCG@10", "nDCG(judged_only=True)@10"),
    ("RBP(p=0.9)@10", "RBP(p=0.9,judged_only=True)@10"),
    ("rbp(p=0.8)@5", "RBP(judged_only=True)@5"),  # the default p is left out of both names
    ("AP@10", "MAP(judged_only=True)@10"),
])
def test_condensed_of_keeps_every_parameter(metric, condensed):
    m = condensed_of(metric)
    assert m is not None and m.name == condensed and m.judged_only


@pytest.mark.parametrize("metric", ["nDCG(judged_only=True)@10", "top_score", "Judged@10", "no_such@3"])
def test_no_condensed_variant(metric):
    assert condensed_of(metric) is None
