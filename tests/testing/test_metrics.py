"""The metric conformance suite over every registered family: names round-trip with their
parameters, values within the declared bounds, the scoring path's fast path equals the full
path (every metric, not a hand-picked list), a docs row."""

import pytest

from rulegauge.metrics.family import METRICS, MetricParam, declare
from rulegauge.testing.metrics import check_metric, variants


@pytest.mark.parametrize("name", METRICS.names())
def test_every_registered_metric_conforms(name):
    result = check_metric(name)
    assert result.problems == ()


def test_variants_cover_each_parameter_at_another_value():
    names = [m.name for m in variants(METRICS.get("RBP"))]
    assert names[:3] == ["RBP@1", "RBP@5", "RBP@10"]
    assert "RBP(p=0.9)@10" in names and "RBP(judged_only=True)@5" in names


def test_a_metric_out_of_its_bounds_is_caught():
    from rulegauge.metrics.ranking import _hit  # the computation of a built-in, scaled wrong

    fam = declare("x_twice_hit", kind="ranking", direction="higher", scope="answerable", takes_cutoff=True,
                  description="hit@k times 2", compute=lambda p, k, q: 2 * _hit(p, k),
                  params=(MetricParam("q", int, 1, "unused", low=1, high=3),))
    try:
        problems = check_metric(fam).problems
        assert any("outside the declared bounds [0.0, 1.0]" in p for p in problems), problems
        assert any("no `x_twice_hit@k` row" in p for p in problems)
    finally:  # the registries are the process's: leave them as found
        METRICS._items.pop("x_twice_hit")
