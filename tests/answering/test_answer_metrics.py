"""Answer metrics keep their declared bounds where they are computed (#42 item 2: the metric
contract at the point of entry, for answer metrics as for ranking ones)."""

from __future__ import annotations

import math

import pytest

from rulegauge.answering.answer_metrics import answer_context, score_answer
from rulegauge.metrics.contract import MetricContractError
from rulegauge.metrics.info import resolve
from tests.helpers.common import q


def test_every_answer_metric_declares_bounds_and_a_normal_answer_is_within_them() -> None:
    ctx = answer_context(q("q1", "How far?", ("rb#2",)), (), "answered", "Three spaces.", 12.5)
    scores = score_answer(ctx)
    for name, value in scores.items():
        low, high = resolve(name).family.bounds
        assert (low, high) != (-math.inf, math.inf), name
        assert math.isnan(value) or low <= value <= high, (name, value)
    assert scores["latency_ms"] == 12.5 and scores["abstained"] == 0.0


def test_an_answer_metric_out_of_bounds_stops_the_run_naming_metric_and_question() -> None:
    ctx = answer_context(q("q7", "How far?", ("rb#2",)), (), "answered", "Three spaces.", -5.0)
    with pytest.raises(MetricContractError, match=r"latency_ms .* is -5\.0 for question q7: outside the declared"):
        score_answer(ctx)
