"""The metric contract where values enter a run: every value within the family's declared bounds,
checked as each metric of each config is scored (rulegauge.metrics.contract, from ranking.score)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegauge.fusion.fuse import fuse
from rulegauge.metrics.contract import MetricContractError, check_values, value_problem
from rulegauge.metrics.family import METRICS, declare
from rulegauge.metrics.ranking import parse, score
from rulegauge.testing.synthetic import config, synthetic_ranks

QS = ("q1", "q2", "q3")


def test_values_within_the_bounds_pass_and_the_first_outside_is_named():
    hit = parse("hit@5")
    assert value_problem(hit, np.array([0.0, 1.0, 0.5]), QS) is None
    assert value_problem(parse("first_rel_rank"), np.array([1.0, np.inf, 7.0]), QS) is None  # bounds [1, inf]
    assert value_problem(parse("top_score_ratio"), np.array([np.nan, 0.5, 1.0]), QS) is None  # NaN: no ceiling
    assert value_problem(hit, np.array([0.5, 1.83, 2.0]), QS) == (
        "metric 'hit' (rulegauge.metrics, from builtin) broke the metric contract (docs/plugins.md): hit@5 "
        "(computed by rulegauge.metrics.ranking) is 1.83 for question q2: outside the declared bounds [0.0, 1.0] "
        "(and 1 more questions)")
    assert "is nan for question q1: NaN, and a ranking metric is a number" in value_problem(
        hit, np.array([np.nan, 0.0, 0.0]), QS)
    assert "is -0.25 for question q3" in value_problem(parse("nDCG@10"), np.array([0.0, 0.0, -0.25]), QS)
    with pytest.raises(MetricContractError, match=r"for question q2: outside .*, config c1$"):
        check_values(hit, np.array([0.0, 3.0, 0.0]), QS, "config c1")


def test_a_run_scoring_a_value_above_its_bounds_stops_naming_config_and_question():
    data = synthetic_ranks(5)
    fam = declare("x_over", kind="ranking", direction="higher", scope="answerable", takes_cutoff=True,
                  description="1.83 everywhere", compute=lambda p, k: np.full(len(p.rel), 1.83))
    try:
        c = config("rrf")
        with pytest.raises(MetricContractError, match=rf"x_over@5 .* is 1.83 for question q000: outside the declared "
                                                      rf"bounds \[0.0, 1.0\] \(and \d+ more questions\), config "
                                                      rf"{c.name.replace('+', '[+]')}"):
            score([parse("x_over@5")], fuse(data.matrix, c), data.gold)
    finally:  # the registries are the process's: leave them as found
        METRICS._items.pop(fam.name)
