"""Stability of a chosen config: bootstrap share at the top and the statistically tied set."""

from __future__ import annotations

import numpy as np
import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.regression.stability import stability


def _values() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    good = (rng.random(60) < 0.9).astype(float)
    good[:2] = 1.0
    return {"rrf_k60_a+b": good, "rrf_k10_a+b": good.copy(),  # identical to the best
            "rrf_k6_a+b": np.where(np.arange(60) < 2, 0.0, good),  # two questions worse
            "arm-a": np.zeros(60)}  # far worse


def test_identical_configs_tie_a_far_worse_one_does_not() -> None:
    s = stability(_values(), "rrf_k60_a+b", higher_is_better=True, n_resamples=500, seed=0,
                  test_resamples=2000, metric="recall@5")
    assert s.tied == ("rrf_k6_a+b", "rrf_k10_a+b")  # numeric config order, arm-a not tied
    assert s.stays_best == 1.0 and s.sole_best == 0.0  # its twin is always level with it
    assert s.family is not None and s.family.size == 3 and s.family.method == "holm"
    assert "stays best in 100% of 500" in s.describe() and "holm over 3 tests" in s.describe()


def test_seeded_and_repeatable_and_a_lone_winner_is_alone() -> None:
    v = _values()
    del v["rrf_k10_a+b"]
    a = stability(v, "rrf_k60_a+b", higher_is_better=True, n_resamples=300, seed=4, test_resamples=500)
    b = stability(v, "rrf_k60_a+b", higher_is_better=True, n_resamples=300, seed=4, test_resamples=500)
    assert a == b
    # rrf_k6 loses 2 questions: never above the best, level only in resamples missing both
    assert a.stays_best == 1.0 and 0.0 < a.sole_best < 1.0
    low = stability(v, "arm-a", higher_is_better=True, n_resamples=300, seed=4, test_resamples=500)
    assert low.stays_best == 0.0


def test_median_aggregate_ties_by_equal_value_and_bad_input() -> None:
    s = stability(_values(), "rrf_k60_a+b", higher_is_better=True, aggregate="median",
                  n_resamples=50)
    assert "equal median" in s.rule and "rrf_k10_a+b" in s.tied
    with pytest.raises(RulegaugeError, match="not among"):
        stability(_values(), "nope", higher_is_better=True)


def test_the_best_config_breaks_ties_in_numeric_order_as_tune_and_the_report() -> None:
    """``compare --reference`` names the best config as tune and the report do: ties (to a
    few ulps) in numeric config order, k6 before k100, never by id text."""
    from rulegauge.metrics.selection import rank_configs
    from rulegauge.regression.stability import best_config

    tied = {"rrf_k100_bm25+dense": 0.9, "rrf_k6_bm25+dense": 0.9,
            "rrf_k20_bm25+dense": 0.9 + 1e-16, "arm-bm25": 0.5, "rrf_k2_x": float("nan")}
    assert best_config(tied, higher_is_better=True) == "rrf_k6_bm25+dense"
    assert best_config(tied, higher_is_better=False) == "arm-bm25"
    rng = np.random.default_rng(4)
    ids = [f"rrf_k{k}_bm25+{a}" for k in (2, 6, 10, 60, 100) for a in ("dense", "boost")]
    for _ in range(50):
        values = {c: float(rng.integers(0, 3)) / 3 for c in ids}
        for hib in (True, False):
            assert best_config(values, higher_is_better=hib) == rank_configs(values, higher_is_better=hib)[0]
