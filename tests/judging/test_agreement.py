"""Kappas, bootstrap interval, baseline and confusion (rulegauge.judging.agreement), and two
label sets compared (rulegauge.judging.compare_labels)."""

from __future__ import annotations

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.goldset.labels import LabelSet
from rulegauge.judging import agreement
from rulegauge.judging.compare_labels import compare


def test_cohen_by_formula() -> None:
    a = [0, 0, 1, 1, 2, 3]
    b = [0, 1, 1, 1, 2, 2]
    p_o = 4 / 6
    # marginals: a 0:2 1:2 2:1 3:1; b 0:1 1:3 2:2 3:0
    p_e = (2 * 1 + 2 * 3 + 1 * 2 + 1 * 0) / 36
    assert agreement.cohen(a, b) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert agreement.cohen([1, 1], [1, 1]) is None  # 0/0: undefined, never a plausible number
    assert agreement.cohen([], []) is None
    assert agreement.accuracy(a, b) == pytest.approx(p_o) and agreement.accuracy([], []) is None


def test_fleiss_by_formula_and_against_cohen_free_example() -> None:
    items = {"x": [1, 1, 1], "y": [0, 0, 1], "z": [2, 3, 3], "w": [0]}  # w: one rater, left out
    counts = [[0, 3, 0, 0], [2, 1, 0, 0], [0, 0, 1, 2]]
    p_i = [sum(c * (c - 1) for c in row) / (3 * 2) for row in counts]
    shares = [sum(row[j] for row in counts) / 9 for j in range(4)]
    p_e = sum(s * s for s in shares)
    expected = (sum(p_i) / 3 - p_e) / (1 - p_e)
    assert agreement.fleiss(items) == pytest.approx(expected)
    assert agreement.fleiss({"x": [2, 2], "y": [2, 2]}) is None
    assert agreement.fleiss({"x": [1]}) is None


def test_bootstrap_is_seeded_and_brackets_kappa() -> None:
    a = [0, 1, 2, 3, 0, 1, 2, 3, 1, 1, 0, 2] * 3
    b = [0, 1, 2, 2, 0, 1, 1, 3, 1, 0, 0, 2] * 3
    one = agreement.bootstrap_kappa(a, b, seed=7, resamples=300)
    two = agreement.bootstrap_kappa(a, b, seed=7, resamples=300)
    assert one == two and one.low is not None and one.high is not None
    kappa = agreement.cohen(a, b)
    assert kappa is not None and one.low <= kappa <= one.high
    assert agreement.bootstrap_kappa(a, b, seed=8, resamples=300) != one


def test_bootstrap_over_questions_resamples_whole_questions() -> None:
    a = [0, 1, 2, 3, 0, 1, 2, 3, 1, 1, 0, 2]
    b = [0, 1, 2, 2, 0, 1, 1, 3, 1, 0, 0, 2]
    # every pair twice, the two copies one question: drawing questions is drawing the pairs
    # (same draws, kappa unchanged by doubling), so the interval is the pairs' own
    twice = agreement.bootstrap_kappa([x for x in a for _ in "ab"], [y for y in b for _ in "ab"],
                                      seed=5, resamples=200,
                                      groups=[f"q{i}" for i in range(len(a)) for _ in "ab"])
    assert twice == agreement.bootstrap_kappa(a, b, seed=5, resamples=200)
    # one question holding everything: every resample is the whole set, the interval a point
    one = agreement.bootstrap_kappa(a, b, seed=5, resamples=50, groups=["q"] * len(a))
    assert one.low == one.high == pytest.approx(agreement.cohen(a, b))


def test_baseline_and_confusion() -> None:
    assert agreement.most_common_baseline([0, 0, 1, 1, 2]) == (0, 0.4)  # tie -> lower grade
    assert agreement.confusion([0, 1, 3], [0, 2, 3]) == [[1, 0, 0, 0], [0, 0, 1, 0],
                                                         [0, 0, 0, 0], [0, 0, 0, 1]]


def labels(kind: str, grades: dict[tuple[str, str], int], questions: set[str],
           llm: frozenset[tuple[str, str]] = frozenset()) -> LabelSet:
    return LabelSet(kind, kind, grades, llm, frozenset(questions))


def test_judgments_against_a_gold_set_take_unlisted_pages_as_zero() -> None:
    gold = labels("goldset", {("q1", "d#1"): 1, ("q2", "d#4"): 1}, {"q1", "q2"})
    judged = labels("judgments", {("q1", "d#1"): 3, ("q1", "d#2"): 0, ("q2", "d#5"): 2,
                                  ("q9", "d#1"): 1}, {"q1", "q2", "q9"},
                    frozenset({("q2", "d#5")}))
    r = compare(judged, gold, resamples=50)
    assert (r.pairs, r.assumed_zero, r.llm_pairs) == (3, 2, 1)  # q9 is no question of the gold
    assert r.confusion[3][1] == 1 and r.confusion[0][0] == 1 and r.confusion[2][0] == 1
    assert (r.baseline_grade, r.baseline_accuracy) == (0, pytest.approx(2 / 3))
    assert r.binary_kappa == agreement.cohen([1, 0, 1], [1, 0, 0])
    assert compare(gold, judged, resamples=50).pairs == 3  # the same pairs either way round
    with pytest.raises(RulegaugeError, match="judge no pair in common"):
        compare(labels("judgments", {("q1", "d#7"): 1}, {"q1"}),
                labels("judgments", {("q1", "d#8"): 1}, {"q1"}))
